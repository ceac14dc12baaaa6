//go:build !unix

package mount

import "syscall"

// DaemonAttr is how a mount daemon is started.
func DaemonAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// ProcessExited reports whether process pid is gone. Without a mount
// adapter on this platform there is never a daemon to wait for.
func ProcessExited(pid int) bool { return true }
