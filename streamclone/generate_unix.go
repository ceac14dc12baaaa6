//go:build unix

package streamclone

import (
	"errors"
	"io"
	"io/fs"
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
// directory, opened once (a sysio.Dirs per directory of dirHandles): the
// lookup of the path inside the store (three components and more per
// file: data/, its subdirectories) is done once per directory instead of
// once per file. Directories that cannot be opened fall back to the path
// relative to the store, so errors are those of opening the file. At
// most sysio.MaxDirs directories per store or cache directory stay open
// between uses (batchFiles more during one batch).
type dirCache struct {
	h    *dirHandles
	dirs map[string]*sysio.Dirs // by genEntry.dir; nil: not opened, use absolute paths
}

func (d *dirHandles) cache() *dirCache {
	return &dirCache{h: d, dirs: make(map[string]*sysio.Dirs)}
}

func (c *dirCache) close() {
	for _, d := range c.dirs {
		if d != nil {
			d.Close()
		}
	}
}

// trim closes the cached directories once there are sysio.MaxDirs of
// them. Only between uses: a descriptor at returned must stay open until
// the file is opened.
func (c *dirCache) trim() {
	for _, d := range c.dirs {
		if d != nil {
			d.Trim()
		}
	}
}

// fdFile is an entry's file read with pread(2) (ReadAt), or with read(2)
// and sendfile(2) from its file position (Read, SyscallConn): net's
// sendfile support takes any syscall.Conn.
type fdFile struct {
	sysio.File // named e.path() in errors, joined only for an error
}

// at returns the directory descriptor and name to open e by.
func (c *dirCache) at(e *genEntry) (dirfd int, name string) {
	d, ok := c.dirs[e.dir]
	if !ok {
		if root, ok := c.h.fds[e.dir]; ok && root >= 0 {
			d = sysio.NewDirs(root)
		}
		c.dirs[e.dir] = d
	}
	if d == nil {
		return unix.AT_FDCWD, e.path()
	}
	if fd, base := d.At(e.rel); fd >= 0 {
		return fd, base
	}
	return d.Root(), e.rel
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
