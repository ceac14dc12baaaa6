package fsnode

// Windows: File.Sync is FlushFileBuffers, which writes out a file's data
// and metadata (there is no data-only variant). Directories cannot be
// flushed through a handle Go opens (FlushFileBuffers needs write access
// to the directory handle), and need not be: NTFS journals its metadata,
// so a file's creation is durable once the file itself is flushed.

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// fdatasync flushes f to stable storage (FlushFileBuffers).
func fdatasync(f *os.File) error { return f.Sync() }

// startWriteback is a no-op: Windows has no "start writeback, don't
// wait"; FlushFileBuffers always waits.
func startWriteback(*os.File) {}

// syncDir is a no-op on Windows; see the top of this file.
func syncDir(string) error { return nil }

// winBlockSize is the unit diskStatfs reports space in:
// GetDiskFreeSpaceEx counts bytes, statfs counts blocks.
const winBlockSize = 4096

// winFfree is the free inode count reported on Windows: NTFS has no fixed
// inode table, so the count is only a large number that never runs out.
const winFfree = 1 << 32

// diskStatfs reports the space of the volume holding dir, from
// GetDiskFreeSpaceEx, in winBlockSize blocks. Bavail is what this user
// may use (quotas applied), Bfree what the volume has free.
func diskStatfs(dir string) (Statfs, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return Statfs{}, fmt.Errorf("fsnode: statfs %s: %w", dir, err)
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return Statfs{}, fmt.Errorf("fsnode: statfs %s: %w", dir, err)
	}
	return Statfs{
		Blocks: total / winBlockSize, Bfree: free / winBlockSize, Bavail: avail / winBlockSize,
		Ffree: winFfree, Bsize: winBlockSize, Frsize: winBlockSize,
	}, nil
}
