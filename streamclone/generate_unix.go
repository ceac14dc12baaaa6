//go:build unix

package streamclone

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
)

// Opening snapshot files with plain system calls: openat(2) relative to
// the file's own directory (opened once per directory, see dirCache),
// then pread(2), then close(2); read-ahead batches go through io_uring
// where the kernel has it (generate_uring_linux.go). The walk already
// knows each file's size, so there is no fstat; the path lookup starts
// at the file's directory instead of the root (a fifth of the kernel time of
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
		fd, err := sysio.OpenDir(dir)
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

// dirCache opens entries for one goroutine relative to their own
// directory, opened once: the lookup of the path inside the store (three
// components and more per file: data/, its subdirectories) is done once
// per directory instead of once per file. Directories that cannot be
// opened fall back to the path relative to the store, so errors are those
// of opening the file. At most maxDirFDs directories stay open between
// uses (batchFiles more during one batch).
type dirCache struct {
	h    *dirHandles
	last dirKey
	fd   int // last's descriptor
	fds  map[dirKey]int
}

type dirKey struct{ dir, rel string }

const maxDirFDs = 64

func (d *dirHandles) cache() *dirCache {
	return &dirCache{h: d, fd: -1, fds: make(map[dirKey]int)}
}

func (c *dirCache) close() {
	for _, fd := range c.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	clear(c.fds)
	c.last, c.fd = dirKey{}, -1
}

// trim closes the cached directories once there are maxDirFDs of them.
// Only between uses: a descriptor at returned must stay open until the
// file is opened.
func (c *dirCache) trim() {
	if len(c.fds) >= maxDirFDs {
		c.close()
	}
}

// dirFD returns a descriptor of directory rel under root (-1: none).
func (c *dirCache) dirFD(root int, k dirKey) int {
	if k == c.last && c.fd >= 0 {
		return c.fd
	}
	fd, ok := c.fds[k]
	if !ok {
		var err error
		fd, err = sysio.OpenDirAt(root, k.rel)
		if err != nil {
			fd = -1
		}
		c.fds[k] = fd
	}
	c.last, c.fd = k, fd
	return fd
}

// fdFile is an entry's file read with pread(2) (ReadAt), or with read(2)
// and sendfile(2) from its file position (Read, SyscallConn): net's
// sendfile support takes any syscall.Conn.
type fdFile struct {
	sysio.File // named e.path() in errors, joined only for an error
}

// at returns the directory descriptor and name to open e by.
func (c *dirCache) at(e *genEntry) (dirfd int, name string) {
	dirfd, ok := c.h.fds[e.dir]
	name = e.rel
	if !ok || dirfd < 0 {
		return unix.AT_FDCWD, e.path()
	}
	if i := strings.LastIndexByte(name, filepath.Separator); i > 0 {
		if fd := c.dirFD(dirfd, dirKey{e.dir, name[:i]}); fd >= 0 {
			return fd, name[i+1:]
		}
	}
	return dirfd, name
}

func (c *dirCache) open(e *genEntry) (entryFile, error) {
	c.trim()
	dirfd, name := c.at(e)
	fd, err := sysio.Openat(dirfd, name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: e.path(), Err: err}
	}
	return &fdFile{sysio.NewFile(fd, e.dir, e.rel)}, nil
}

// Read is one read(2) from the file position (which sendfile moves too).
func (f *fdFile) Read(p []byte) (int, error) {
	n, err := sysio.Read(f.Fd(), p)
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// SyscallConn implements syscall.Conn, for sendfile.
func (f *fdFile) SyscallConn() (syscall.RawConn, error) { return fdRawConn(f.Fd()), nil }

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
