//go:build unix

package worktree

import (
	"io/fs"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/dirstate"
)

// The checkout's per-file I/O in plain system calls. An os.File costs
// more per file than the work itself for small files: opening one adds
// fcntl calls and an epoll_ctl (refused for regular files) and closing
// it a finalizer's bookkeeping; on the 20,000-file checkout (strace -c
// -f) those were 100,000 of the 336,000 calls. These make only openat,
// write/read, fstat and close.

// createFile creates p (it must not exist) with permissions perm less
// the umask, writes data and reports what fstat says of the result.
func createFile(p string, perm uint32, data []byte) (Written, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, perm)
	})
	if err != nil {
		return Written{}, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	w, err := writeFd(fd, data)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return Written{}, &fs.PathError{Op: "write", Path: p, Err: err}
	}
	return w, nil
}

func writeFd(fd int, data []byte) (Written, error) {
	for rest := data; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Written{}, err
		}
		rest = rest[n:]
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Written{}, err
	}
	return Written{
		Mode:  dirstate.ModeRegular | uint32(st.Mode)&0o777,
		Size:  st.Size,
		Mtime: dirstate.TimestampOf(st.Mtim.Nano()),
	}, nil
}

// readWhole reads the file at p (a filelog's index), into buf's
// capacity when the file fits (buffers.go).
func readWhole(p string, buf []byte) ([]byte, error) {
	fd, err := retry(func() (int, error) { return unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	// One byte more than the size, so that a file grown since is read
	// to its end and a short read (the end of a regular file) ends the
	// loop without another call: one read for a filelog's index, where
	// reading until a read returns nothing took two.
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	buf = buf[:0]
	for {
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n < want {
			return buf, nil
		}
		buf = append(buf, 0)[:len(buf)]
	}
}

func retry(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// dirFiles looks up files of a working directory through a descriptor
// of the last directory it was asked about, so that a run of files in
// one directory (a manifest's order) costs one path walk for the
// directory and one component each, as hg's status walk (osutil.listdir,
// fstatat) does, instead of a walk of every file's whole path.
type dirFiles struct {
	root string
	dir  string
	fd   int
}

func newDirFiles(root string) *dirFiles { return &dirFiles{root: root, fd: -1} }

// at returns the descriptor of rel's directory and rel's last component.
func (d *dirFiles) at(rel string) (int, string, error) {
	dir, name := path.Split(rel)
	if d.fd >= 0 && dir == d.dir {
		return d.fd, name, nil
	}
	d.close()
	p := filepath.Join(d.root, filepath.FromSlash(dir))
	fd, err := retry(func() (int, error) {
		return unix.Open(p, dirOpenMode|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: p, Err: err}
	}
	d.dir, d.fd = dir, fd
	return fd, name, nil
}

// lstat is os.Lstat of root/rel.
func (d *dirFiles) lstat(rel string) (fileStat, error) {
	fd, name, err := d.at(rel)
	if err != nil {
		return fileStat{}, err
	}
	var st unix.Stat_t
	for {
		err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fileStat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(d.root, filepath.FromSlash(rel)), Err: err}
	}
	return fileStat{
		link:  st.Mode&unix.S_IFMT == unix.S_IFLNK,
		reg:   st.Mode&unix.S_IFMT == unix.S_IFREG,
		perm:  uint32(st.Mode) & 0o777,
		size:  st.Size,
		mtime: dirstate.TimestampOf(st.Mtim.Nano()),
	}, nil
}

// remove is os.Remove of root/rel: unlink, else rmdir.
func (d *dirFiles) remove(rel string) error {
	fd, name, err := d.at(rel)
	if err != nil {
		return err
	}
	err = ignoringEINTR(func() error { return unix.Unlinkat(fd, name, 0) })
	if err == nil {
		return nil
	}
	err1 := ignoringEINTR(func() error { return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR) })
	if err1 == nil {
		return nil
	}
	if err1 != unix.ENOTDIR {
		err = err1
	}
	return &fs.PathError{Op: "remove", Path: filepath.Join(d.root, filepath.FromSlash(rel)), Err: err}
}

func (d *dirFiles) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
