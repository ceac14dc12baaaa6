//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func pidNamespaceInode() (uint64, bool) {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}

// makeLock creates the lock at path naming info, atomically: a symlink
// (util.makelock).
func makeLock(info, path string) error { return os.Symlink(info, path) }
