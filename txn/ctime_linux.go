//go:build linux

package txn

import (
	"io/fs"
	"syscall"
)

// ctime is the inode change time in whole seconds (hg compares
// stat.ST_CTIME, an integer).
func ctime(fi fs.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Ctim.Sec), true
}
