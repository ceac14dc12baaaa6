//go:build !unix

package store

import (
	"io"
	"io/fs"
	"os"
)

// Open implements fs.FS.
func (d *DirFS) Open(name string) (fs.File, error) { return d.os.Open(name) }

// OpenRead opens the file at path for reading.
func OpenRead(path string) (io.ReadCloser, error) { return os.Open(path) }
