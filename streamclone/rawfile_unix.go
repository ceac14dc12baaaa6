//go:build unix

package streamclone

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// rawFile is a file written with plain system calls. os.OpenFile costs a
// clone four fcntl calls and a failed epoll_ctl per file (Go registers
// every file with its poller), ~100,000 extra system calls on a
// 20,000-file store; a file that is only created, written once and
// closed needs none of that.
type rawFile struct {
	fd   int
	name string
}

// createExcl creates path exclusively for writing.
func createExcl(path string) (sinkFile, error) {
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &rawFile{fd: fd, name: path}, nil
	}
}

func (f *rawFile) Name() string { return f.name }

func (f *rawFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(f.fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
		}
		if m == 0 {
			return n, &fs.PathError{Op: "write", Path: f.name, Err: errors.New("short write")}
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Sync() error {
	if err := unix.Fsync(f.fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: f.name, Err: err}
	}
	return nil
}

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}
