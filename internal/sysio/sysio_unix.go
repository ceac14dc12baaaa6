//go:build unix

// Package sysio holds the positioned read and write loops shared by the
// packages that do their file I/O with raw descriptors instead of
// *os.File (whose open adds fcntl calls and an epoll registration per
// file: see store.DirFS and the revlog writer).
package sysio

import (
	"io"

	"golang.org/x/sys/unix"
)

// PreadFull reads len(p) bytes at off, retrying on EINTR and short
// reads. Fewer bytes come with io.EOF at the end of the file; a failed
// pread returns its errno, for the caller to wrap with the file's name.
func PreadFull(fd int, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Pread(fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// PwriteFull writes all of p at off, retrying on EINTR and short
// writes; a write that makes no progress is io.ErrShortWrite.
func PwriteFull(fd int, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Pwrite(fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}
