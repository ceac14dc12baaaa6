//go:build unix

package sysio

import (
	"io"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// Open implements fs.FS. A regular file is opened with a plain open(2)
// and an fstat (which its Stat returns); anything else is os.DirFS's.
func (d *DirFS) Open(name string) (fs.File, error) {
	p, err := d.join("open", name)
	if err != nil {
		return nil, err
	}
	fd, err := Open(p, unix.O_RDONLY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := &dirFile{File: NewFile(fd, "", name)}
	if err := Fstat(fd, &f.st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if f.st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return d.os.Open(name)
	}
	return f, nil
}

// dirFile is a regular file of a DirFS, read with pread(2) from its own
// position (Read, Seek) or at offsets (ReadAt).
type dirFile struct {
	File
	st  unix.Stat_t
	off int64
}

var (
	_ io.ReaderAt = (*dirFile)(nil)
	_ io.Seeker   = (*dirFile)(nil)
)

func (f *dirFile) Stat() (fs.FileInfo, error) { return fileInfo{f}, nil }

func (f *dirFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *dirFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.st.Size
	default:
		return 0, f.error("seek", fs.ErrInvalid)
	}
	if offset < 0 {
		return 0, f.error("seek", fs.ErrInvalid)
	}
	f.off = offset
	return offset, nil
}

// fileInfo is the fs.FileInfo of an open dirFile (its fstat at open).
type fileInfo struct{ f *dirFile }

func (i fileInfo) Name() string {
	n := i.f.name
	for j := len(n) - 1; j >= 0; j-- {
		if n[j] == '/' {
			return n[j+1:]
		}
	}
	return n
}
func (i fileInfo) Size() int64        { return i.f.st.Size }
func (i fileInfo) Mode() fs.FileMode  { return fs.FileMode(i.f.st.Mode & 0o777) }
func (i fileInfo) ModTime() time.Time { return time.Unix(i.f.st.Mtim.Unix()) }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return &i.f.st }
