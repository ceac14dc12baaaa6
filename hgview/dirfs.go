package hgview

import (
	"io/fs"
	"os"
	"path/filepath"
)

// dirFS is os.DirFS of a .hg directory with a cheaper ReadFile, which
// every revlog open goes through (revlog.Open reads the index whole). A
// first walk of a changeset's tree opens one filelog per file, and
// os.ReadFile spends more system calls on an *os.File (registration with
// the poller, a second fstat) than on reading a small index: readFile
// (readfile_unix.go) opens, sizes, reads and closes with plain system
// calls. Everything else is os.DirFS's, whose name checks ReadFile
// repeats (fs.ValidPath: no "..", no absolute names), so it reads
// nothing outside the directory os.DirFS would not.
type dirFS struct {
	fs.FS // os.DirFS(dir)
	dir   string
}

func newDirFS(dir string) dirFS { return dirFS{FS: os.DirFS(dir), dir: dir} }

var (
	_ fs.ReadFileFS = dirFS{}
	_ fs.StatFS     = dirFS{}
	_ fs.ReadDirFS  = dirFS{}
)

func (d dirFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	b, err := readFile(filepath.Join(d.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return b, nil
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.FS, name) }

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.FS, name) }
