//go:build unix

package sysio

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// File is an open file as a plain descriptor: no *os.File, so no fcntl
// calls or poller registration at open, and no finalizer. Its errors are
// *fs.PathError values naming Name(). Not safe for concurrent Close.
type File struct {
	fd int
	// The name in errors is name, or dir joined with name when dir is
	// set: a caller opening many files relative to a directory keeps the
	// join off the path of files that never fail.
	dir, name string
}

// OpenFile opens path as os.OpenFile does (flag of os.O_*, perm's
// permission bits) with a plain open(2).
func OpenFile(path string, flag int, perm os.FileMode) (*File, error) {
	fd, err := Open(path, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &File{fd: fd, name: path}, nil
}

// NewFile returns the File of an open descriptor, named dir/name (dir
// may be empty) in errors; Close closes fd.
func NewFile(fd int, dir, name string) File { return File{fd: fd, dir: dir, name: name} }

// Fd returns the descriptor (-1 once closed).
func (f *File) Fd() int { return f.fd }

// Name returns the name the file was opened with.
func (f *File) Name() string {
	if f.dir == "" {
		return f.name
	}
	return filepath.Join(f.dir, f.name)
}

func (f *File) error(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.Name(), Err: err}
}

// ReadAt reads len(p) bytes at off (PreadFull): fewer only at the end of
// the file, with io.EOF.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, f.error("read", fs.ErrClosed)
	}
	if off < 0 {
		return 0, f.error("read", fs.ErrInvalid)
	}
	n, err := PreadFull(f.fd, p, off)
	if err != nil && err != io.EOF {
		err = f.error("read", err)
	}
	return n, err
}

// WriteAt writes all of p at off (PwriteFull).
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, f.error("write", fs.ErrClosed)
	}
	n, err := PwriteFull(f.fd, p, off)
	if err != nil {
		err = f.error("write", err)
	}
	return n, err
}

// Write writes all of p at the file position (WriteFull).
func (f *File) Write(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, f.error("write", fs.ErrClosed)
	}
	n, err := WriteFull(f.fd, p)
	if err != nil {
		err = f.error("write", err)
	}
	return n, err
}

// Sync is fsync(2).
func (f *File) Sync() error {
	if _, err := Retry(func() (struct{}, error) { return struct{}{}, unix.Fsync(f.fd) }); err != nil {
		return f.error("fsync", err)
	}
	return nil
}

// Close closes the descriptor; a second Close is fs.ErrClosed.
func (f *File) Close() error {
	if f.fd < 0 {
		return f.error("close", fs.ErrClosed)
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return f.error("close", err)
	}
	return nil
}
