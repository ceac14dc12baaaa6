//go:build unix

package revlog

import (
	"io"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
)

// openWFile opens a revlog file for the writer with a plain open(2) and
// does its I/O with pread/pwrite: os.OpenFile adds fcntl calls and a
// failed epoll registration per file, which for an unbundle creating
// 20,000 filelogs is ~100,000 system calls of pure overhead.
func openWFile(path string, trunc bool) (wfile, error) {
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC
	if trunc {
		flags |= unix.O_TRUNC
	}
	for {
		fd, err := unix.Open(path, flags, 0o666)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &rawWFile{fd: fd, path: path}, nil
	}
}

type rawWFile struct {
	fd   int
	path string
}

func (f *rawWFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := sysio.PreadFull(f.fd, p, off)
	if err != nil && err != io.EOF {
		err = &fs.PathError{Op: "read", Path: f.path, Err: err}
	}
	return n, err
}

func (f *rawWFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := sysio.PwriteFull(f.fd, p, off)
	if err != nil {
		err = &fs.PathError{Op: "write", Path: f.path, Err: err}
	}
	return n, err
}

func (f *rawWFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
