package store

import (
	"io/fs"
	"os"
)

// DirFS is os.DirFS for a store directory, tuned for what hgfs does to a
// store: open each of tens of thousands of small files once, read it
// whole or at offsets, close it. On unix its regular files are plain file
// descriptors (see dirfs_unix.go); directories and everything else go to
// os.DirFS.
type DirFS struct {
	dir string
	os  fs.FS
}

// NewDirFS returns a DirFS rooted at dir.
func NewDirFS(dir string) *DirFS { return &DirFS{dir: dir, os: os.DirFS(dir)} }

var (
	_ fs.ReadDirFS = (*DirFS)(nil)
	_ fs.StatFS    = (*DirFS)(nil)
)

// ReadDir implements fs.ReadDirFS.
func (d *DirFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.os, name) }

// Stat implements fs.StatFS.
func (d *DirFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.os, name) }
