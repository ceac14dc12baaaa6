//go:build unix

package streamclone

import (
	"errors"
	"io"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// Opening snapshot files with plain system calls: openat(2) relative to
// the store (or cache) directory, then pread(2), then close(2). The walk
// already knows each file's size, so there is no fstat; the path lookup
// starts at the store instead of the root (a fifth of the kernel time of
// a 20,000-file stream went to walking the repository's absolute path
// again for every file); and os.File's poller registration (fcntl calls
// and a failed epoll_ctl per file) is skipped.

// dirHandles are the open directories entries are opened relative to.
type dirHandles struct{ fds map[string]int }

// openDirs opens the directories of entries. One that cannot be opened
// is left out: its files are then opened by absolute path, so the error,
// if any, names the file.
func openDirs(entries []genEntry) *dirHandles {
	d := &dirHandles{fds: map[string]int{}}
	for i := range entries {
		dir := entries[i].dir
		if _, ok := d.fds[dir]; ok || dir == "" {
			continue
		}
		fd, err := retryEINTR(func() (int, error) {
			return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		})
		if err != nil {
			fd = -1
		}
		d.fds[dir] = fd
	}
	return d
}

func (d *dirHandles) close() {
	for _, fd := range d.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// fdFile is an entry's file read with pread(2) (ReadAt), or with read(2)
// and sendfile(2) from its file position (Read, SyscallConn): net's
// sendfile support takes any syscall.Conn.
type fdFile struct {
	fd   int
	path string
}

func (d *dirHandles) open(e *genEntry) (entryFile, error) {
	dirfd, ok := d.fds[e.dir]
	name := e.rel
	if !ok || dirfd < 0 {
		dirfd, name = unix.AT_FDCWD, e.path()
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: e.path(), Err: err}
	}
	return &fdFile{fd: fd, path: e.path()}, nil
}

func (f *fdFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := retryEINTR(func() (int, error) { return unix.Pread(f.fd, p, off) })
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (f *fdFile) Close() error {
	if err := unix.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

func (f *fdFile) Read(p []byte) (int, error) {
	n, err := retryEINTR(func() (int, error) { return unix.Read(f.fd, p) })
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// SyscallConn implements syscall.Conn, for sendfile.
func (f *fdFile) SyscallConn() (syscall.RawConn, error) { return fdRawConn(f.fd), nil }

// fdRawConn is a blocking descriptor as a syscall.RawConn: it is always
// ready.
type fdRawConn int

var errNotReady = errors.New("streamclone: file descriptor not ready")

func (c fdRawConn) Control(f func(fd uintptr)) error {
	f(uintptr(c))
	return nil
}

func (c fdRawConn) Read(f func(fd uintptr) bool) error {
	if !f(uintptr(c)) {
		return errNotReady
	}
	return nil
}

func (c fdRawConn) Write(f func(fd uintptr) bool) error {
	if !f(uintptr(c)) {
		return errNotReady
	}
	return nil
}
