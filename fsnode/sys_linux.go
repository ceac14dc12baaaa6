package fsnode

// Linux: the calls the cache's durability rests on, as they were written
// first (see sys_windows.go, sys_darwin.go and sys_other.go for the rest).

import (
	"os"
	"syscall"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data and the metadata needed to read it back
// (its size), but not its timestamps: the data files' mtimes do not matter.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// startWriteback asks the kernel to start writing f out without waiting
// (sync_file_range SYNC_FILE_RANGE_WRITE). Only a hint: errors are the
// later fsync's to report.
func startWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// diskStatfs reports the space of the disk holding dir; Files and NameLen
// are the caller's to fill in.
func diskStatfs(dir string) (Statfs, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Statfs{}, err
	}
	return Statfs{
		Blocks: st.Blocks, Bfree: st.Bfree, Bavail: st.Bavail, Ffree: st.Ffree,
		Bsize: uint32(st.Bsize), Frsize: uint32(st.Frsize),
	}, nil
}

// unmapIndexPages takes db's pages out of this process's mapping of the
// index (Options.UnmapIndex): MADV_DONTNEED on bbolt's read-only shared
// mapping drops the page table entries, not the page cache's pages, so
// a later read maps the same bytes again with a minor fault. tx is a
// read transaction of db: bbolt remaps only under its mmap lock for
// writing, which waits for every reader, so the range stays the
// mapping's. The range is the database's pages (Tx.Size), which the
// mapping covers. The address is bbolt's (DB.Info), passed to the
// system call as the number it is.
func unmapIndexPages(db *bolt.DB, tx *bolt.Tx) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, db.Info().Data, uintptr(tx.Size()), unix.MADV_DONTNEED); e != 0 {
		return e
	}
	return nil
}
