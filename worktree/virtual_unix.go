//go:build unix

package worktree

import (
	"io/fs"
	"syscall"
)

// links is fi's link count (1 where unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
