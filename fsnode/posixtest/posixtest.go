//go:build linux

// Package posixtest is a POSIX conformance suite for hgfs's file systems:
// the cache core (fsnode, through a path adapter) and the FUSE mounts
// (through the os package on a mountpoint) run the same cases.
//
// A case receives an FS rooted at an empty directory. Errors must wrap the
// syscall.Errno a Linux file system would return (the os package's do).
//
//	posixtest.Run(t, func(t *testing.T) posixtest.FS {
//		dir := filepath.Join(mountpoint, posixtest.DirName(t))
//		if err := os.Mkdir(dir, 0o755); err != nil { t.Fatal(err) }
//		return posixtest.OS(dir)
//	})
package posixtest

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Stat is what the cases check of an inode.
type Stat struct {
	Ino                 uint64
	Mode                uint32 // syscall.S_IF* | permissions
	Nlink               uint64
	Size                int64
	Blocks              int64 // 512-byte units
	Uid, Gid            uint32
	Atime, Mtime, Ctime time.Time
}

// File is an open file.
type File interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Closer
	Truncate(size int64) error
	Sync() error
	Stat() (Stat, error)
}

// Dir reads a directory incrementally, like readdir(3) on an open stream.
type Dir interface {
	// Next returns up to n more names (fewer at the end; none when done).
	Next(n int) ([]string, error)
	Close() error
}

// FS is the file system under test; names are relative to its root and
// slash-separated. Symlinks are never followed except by OpenFile's
// callers' choice of name.
type FS interface {
	OpenFile(name string, flag int, perm uint32) (File, error)
	Mkdir(name string, perm uint32) error
	Unlink(name string) error
	Rmdir(name string) error
	// Rename is renameat2 with flags 0, unix.RENAME_NOREPLACE or
	// unix.RENAME_EXCHANGE.
	Rename(oldName, newName string, flags uint) error
	Link(oldName, newName string) error
	Symlink(target, name string) error
	Readlink(name string) (string, error)
	Lstat(name string) (Stat, error)
	Truncate(name string, size int64) error
	Chmod(name string, mode uint32) error
	Chown(name string, uid, gid int) error
	Utimes(name string, atime, mtime time.Time) error
	OpenDir(name string) (Dir, error)
}

// DirName turns a test's name into a directory name.
func DirName(t testing.TB) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// OS returns an FS on directory root through the os package and system
// calls: point it at a mountpoint to test a mount.
func OS(root string) FS { return osFS(root) }

type osFS string

func (r osFS) p(name string) string { return filepath.Join(string(r), filepath.FromSlash(name)) }

func (r osFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := os.OpenFile(r.p(name), flag, os.FileMode(perm))
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (r osFS) Mkdir(name string, perm uint32) error { return unix.Mkdir(r.p(name), perm) }
func (r osFS) Unlink(name string) error             { return unix.Unlink(r.p(name)) }
func (r osFS) Rmdir(name string) error              { return unix.Rmdir(r.p(name)) }
func (r osFS) Rename(o, n string, flags uint) error {
	return unix.Renameat2(unix.AT_FDCWD, r.p(o), unix.AT_FDCWD, r.p(n), flags)
}
func (r osFS) Link(o, n string) error            { return unix.Link(r.p(o), r.p(n)) }
func (r osFS) Symlink(target, name string) error { return unix.Symlink(target, r.p(name)) }
func (r osFS) Readlink(name string) (string, error) {
	return os.Readlink(r.p(name))
}
func (r osFS) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Lstat(r.p(name), &st); err != nil {
		return Stat{}, err
	}
	return fromUnix(&st), nil
}
func (r osFS) Truncate(name string, size int64) error { return unix.Truncate(r.p(name), size) }
func (r osFS) Chmod(name string, mode uint32) error   { return unix.Chmod(r.p(name), mode) }
func (r osFS) Chown(name string, uid, gid int) error  { return unix.Lchown(r.p(name), uid, gid) }
func (r osFS) Utimes(name string, atime, mtime time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, r.p(name), ts, unix.AT_SYMLINK_NOFOLLOW)
}
func (r osFS) OpenDir(name string) (Dir, error) {
	f, err := os.Open(r.p(name))
	if err != nil {
		return nil, err
	}
	return osDir{f}, nil
}

func fromUnix(st *unix.Stat_t) Stat {
	return Stat{
		Ino: st.Ino, Mode: st.Mode, Nlink: uint64(st.Nlink), Size: st.Size, Blocks: st.Blocks,
		Uid: st.Uid, Gid: st.Gid,
		Atime: time.Unix(st.Atim.Unix()), Mtime: time.Unix(st.Mtim.Unix()), Ctime: time.Unix(st.Ctim.Unix()),
	}
}

type osFile struct{ *os.File }

func (f osFile) Stat() (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.File.Fd()), &st); err != nil {
		return Stat{}, err
	}
	return fromUnix(&st), nil
}

type osDir struct{ f *os.File }

func (d osDir) Next(n int) ([]string, error) {
	names, err := d.f.Readdirnames(n)
	if err == io.EOF {
		err = nil
	}
	return names, err
}
func (d osDir) Close() error { return d.f.Close() }

// typ returns the file type bits.
func typ(mode uint32) uint32 { return mode & syscall.S_IFMT }
