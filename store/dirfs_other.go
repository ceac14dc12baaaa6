//go:build !unix

package store

import "io/fs"

// Open implements fs.FS.
func (d *DirFS) Open(name string) (fs.File, error) { return d.os.Open(name) }
