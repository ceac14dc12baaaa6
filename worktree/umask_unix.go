//go:build unix

package worktree

import "syscall"

// getUmask reads the process's umask (set back at once).
func getUmask() uint32 {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return uint32(m)
}
