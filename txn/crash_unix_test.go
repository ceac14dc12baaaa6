//go:build unix

package txn

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killSelf ends the process as kill -9 would: no deferred calls, no
// buffered writes flushed.
func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// killedBySIGKILL reports whether a child's exit error is death by
// SIGKILL.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
