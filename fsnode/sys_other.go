//go:build !linux && !darwin && !windows

package fsnode

// Other systems (hgfs ships for Linux, macOS and Windows; this keeps the
// package building elsewhere): File.Sync for fsync, no writeback hint,
// and no disk space report.

import (
	"errors"
	"fmt"
	"os"
)

// fdatasync flushes f to stable storage (fsync).
func fdatasync(f *os.File) error { return f.Sync() }

// startWriteback is a no-op here.
func startWriteback(*os.File) {}

// diskStatfs is not implemented here.
func diskStatfs(dir string) (Statfs, error) {
	return Statfs{}, fmt.Errorf("fsnode: statfs %s: %w", dir, errors.ErrUnsupported)
}
