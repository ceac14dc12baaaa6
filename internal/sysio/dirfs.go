package sysio

import (
	"io/fs"
	"os"
	"path/filepath"
)

// DirFS is os.DirFS of a directory, tuned for what hgfs does to a
// repository's files: open each of tens of thousands of small files
// once, read it whole or at offsets, close it. On unix its regular files
// are plain descriptors (dirfs_unix.go) and ReadFile costs open, fstat,
// read and close; directories, other kinds of files, Stat and ReadDir
// are os.DirFS's, whose name checks (fs.ValidPath: no "..", no absolute
// names) Open and ReadFile repeat, so nothing outside the directory is
// read that os.DirFS would not read.
type DirFS struct {
	dir     string
	os      fs.FS
	maxRead int64
}

// NewDirFS returns a DirFS rooted at dir whose ReadFile refuses a file
// larger than maxRead bytes (math.MaxInt: no bound but memory).
func NewDirFS(dir string, maxRead int64) *DirFS {
	return &DirFS{dir: dir, os: os.DirFS(dir), maxRead: maxRead}
}

var (
	_ fs.ReadDirFS  = (*DirFS)(nil)
	_ fs.ReadFileFS = (*DirFS)(nil)
	_ fs.StatFS     = (*DirFS)(nil)
)

// Dir returns the directory d is rooted at.
func (d *DirFS) Dir() string { return d.dir }

// ReadDir implements fs.ReadDirFS.
func (d *DirFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.os, name) }

// Stat implements fs.StatFS.
func (d *DirFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.os, name) }

// ReadFile implements fs.ReadFileFS as ReadFile does, within d's bound:
// a regular file is read as large as it is when opened.
func (d *DirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.join("readfile", name)
	if err != nil {
		return nil, err
	}
	return readFile(p, name, d.maxRead)
}

// join is the path of name on disk, if fs.ValidPath (and on Windows
// the rest of os.DirFS's checks, filepath.Localize) accepts it.
func (d *DirFS) join(op, name string) (string, error) {
	local, err := filepath.Localize(name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(d.dir, local), nil
}
