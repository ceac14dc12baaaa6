//go:build unix

package mount

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// DaemonAttr is how a mount (or serve) daemon is started: in a process
// group of its own, so that the terminal's SIGINT and SIGHUP, which go
// to its foreground group, do not reach it; with ownSession, in a
// session of its own too (setsid).
//
// Staying in the caller's session is faster where the kernel groups
// tasks by session for scheduling (sched_autogroup_enabled, on in
// Debian's kernels and most others): the daemon then shares an
// autogroup with the programs started from the same shell, and the wake-ups
// between a program and the daemon, one or two per request, stay cheap.
// Measured on this 2-CPU machine (2026-12-07, Linux 6.18), tar -x of the
// 250,000-file store into a fresh cache mount: 56.5-56.8 s with the
// daemon in a session of its own, 31.1-36.5 s in the caller's, 34.5 s
// in its own with autogroups off (echo 0 >
// /proc/sys/kernel/sched_autogroup_enabled), 49.2 s in its own with its
// autogroup's nice at -10. A program started from another session
// (another terminal) still pays it. HGFS_TUNE=-samesession starts
// daemons in a session of their own.
func DaemonAttr(ownSession bool) *syscall.SysProcAttr {
	if ownSession {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

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
