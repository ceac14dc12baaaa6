//go:build !unix

package sysio

import "io/fs"

// Open implements fs.FS: os.DirFS's (see dirfs_unix.go for unix).
func (d *DirFS) Open(name string) (fs.File, error) { return d.os.Open(name) }
