//go:build !unix

package worktree

import (
	"io/fs"
	"os"

	"github.com/hgfs/hgfs/dirstate"
)

// createFile creates p (it must not exist) with permissions perm, writes
// data and reports what stat says of the result.
func createFile(p string, perm uint32, data []byte) (written, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return written{}, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return written{}, err
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return written{}, err
	}
	return written{mode: dirstate.ModeOf(fi), size: fi.Size(), mtime: dirstate.TimestampOf(fi.ModTime().UnixNano())}, nil
}

// readWhole reads the file at p: a filelog's index.
func readWhole(p string) ([]byte, error) { return os.ReadFile(p) }
