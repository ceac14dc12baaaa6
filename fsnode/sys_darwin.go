package fsnode

// macOS: no fdatasync or sync_file_range in the system call set Go
// offers. File.Sync is fcntl(F_FULLFSYNC), which also flushes the drive's
// cache: slower than Linux's fdatasync and at least as durable.

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data to stable storage (F_FULLFSYNC).
func fdatasync(f *os.File) error { return f.Sync() }

// startWriteback is a no-op: macOS has no "start writeback, don't wait".
func startWriteback(*os.File) {}

// diskStatfs reports the space of the disk holding dir. statfs(2) on
// macOS counts blocks in f_bsize units and has no f_frsize, so Frsize is
// Bsize.
func diskStatfs(dir string) (Statfs, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Statfs{}, err
	}
	return Statfs{
		Blocks: st.Blocks, Bfree: st.Bfree, Bavail: st.Bavail, Ffree: st.Ffree,
		Bsize: st.Bsize, Frsize: st.Bsize,
	}, nil
}
