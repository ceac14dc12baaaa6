//go:build unix

package worktree

import (
	"io/fs"

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
func createFile(p string, perm uint32, data []byte) (written, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, perm)
	})
	if err != nil {
		return written{}, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	w, err := writeFd(fd, data)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return written{}, &fs.PathError{Op: "write", Path: p, Err: err}
	}
	return w, nil
}

func writeFd(fd int, data []byte) (written, error) {
	for rest := data; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return written{}, err
		}
		rest = rest[n:]
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return written{}, err
	}
	return written{
		mode:  dirstate.ModeRegular | uint32(st.Mode)&0o777,
		size:  st.Size,
		mtime: dirstate.TimestampOf(st.Mtim.Nano()),
	}, nil
}

// readWhole reads the file at p: a filelog's index.
func readWhole(p string) ([]byte, error) {
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
	// to its end and a short read ends the loop without another call.
	buf := make([]byte, 0, st.Size+1)
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
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
