//go:build unix

package mount

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// DaemonAttr is how a mount daemon is started: in a session of its own, so
// the terminal's SIGINT and SIGHUP do not reach it.
func DaemonAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// ProcessExited reports whether process pid is gone: it does not exist,
// or it is a zombie (exited, not yet reaped by a parent other than us).
func ProcessExited(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}
