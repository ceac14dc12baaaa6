//go:build !unix

package worktree

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/dirstate"
)

// createFile creates p (it must not exist) with permissions perm, writes
// data and reports what stat says of the result.
func createFile(p string, perm uint32, data []byte) (Written, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return Written{}, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return Written{}, err
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Written{}, err
	}
	return Written{Mode: dirstate.ModeOf(fi), Size: fi.Size(), Mtime: dirstate.TimestampOf(fi.ModTime().UnixNano())}, nil
}

// readWhole reads the file at p (a filelog's index); buf is unused
// here.
func readWhole(p string, buf []byte) ([]byte, error) { return os.ReadFile(p) }

// dirFiles looks up files of a working directory by their whole paths
// (file_unix.go's goes through a descriptor of their directory).
type dirFiles struct{ root string }

func newDirFiles(root string) *dirFiles { return &dirFiles{root: root} }

func (d *dirFiles) full(rel string) string { return filepath.Join(d.root, filepath.FromSlash(rel)) }

// lstat is os.Lstat of root/rel.
func (d *dirFiles) lstat(rel string) (fileStat, error) {
	fi, err := os.Lstat(d.full(rel))
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{
		link:  fi.Mode()&fs.ModeSymlink != 0,
		reg:   fi.Mode().IsRegular(),
		perm:  uint32(fi.Mode().Perm()),
		size:  fi.Size(),
		mtime: dirstate.TimestampOf(fi.ModTime().UnixNano()),
	}, nil
}

// remove is os.Remove of root/rel.
func (d *dirFiles) remove(rel string) error { return os.Remove(d.full(rel)) }

func (d *dirFiles) close() {}
