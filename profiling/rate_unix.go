//go:build unix

package profiling

import (
	"os"

	"golang.org/x/sys/unix"
)

// silenceStderr runs f with file descriptor 2 pointed at /dev/null. It is
// used around runtime.SetCPUProfileRate only, whose warning is written
// straight to fd 2 by the runtime.
func silenceStderr(f func()) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		f()
		return
	}
	defer null.Close()
	saved, err := unix.Dup(2)
	if err != nil {
		f()
		return
	}
	defer unix.Close(saved)
	if err := unix.Dup2(int(null.Fd()), 2); err != nil {
		f()
		return
	}
	f()
	_ = unix.Dup2(saved, 2)
}
