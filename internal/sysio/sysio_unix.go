//go:build unix

package sysio

import (
	"io"

	"golang.org/x/sys/unix"
)

// Retry calls f until it fails with something other than EINTR, and
// returns what that call returned. Every system call of this package
// goes through it; use it for any other that may be interrupted (not
// close(2), which must not be retried).
func Retry[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err != unix.EINTR {
			return v, err
		}
	}
}

// Open is open(2) with O_CLOEXEC added.
func Open(path string, flags int, perm uint32) (int, error) {
	return Retry(func() (int, error) { return unix.Open(path, flags|unix.O_CLOEXEC, perm) })
}

// Openat is openat(2) with O_CLOEXEC added: name relative to the
// directory dirfd (or unix.AT_FDCWD).
func Openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	return Retry(func() (int, error) { return unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm) })
}

// OpenDir opens the directory path for use as a dirfd.
func OpenDir(path string) (int, error) {
	return Open(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// OpenDirAt opens the directory name relative to dirfd.
func OpenDirAt(dirfd int, name string) (int, error) {
	return Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// Fstat is fstat(2).
func Fstat(fd int, st *unix.Stat_t) error {
	_, err := Retry(func() (struct{}, error) { return struct{}{}, unix.Fstat(fd, st) })
	return err
}

// Fstatat is fstatat(2) (flags: 0 or unix.AT_SYMLINK_NOFOLLOW).
func Fstatat(dirfd int, name string, st *unix.Stat_t, flags int) error {
	_, err := Retry(func() (struct{}, error) { return struct{}{}, unix.Fstatat(dirfd, name, st, flags) })
	return err
}

// Read is one read(2) from the file position, retried on EINTR.
func Read(fd int, p []byte) (int, error) {
	return Retry(func() (int, error) { return unix.Read(fd, p) })
}

// PreadFull reads len(p) bytes at off, retrying on EINTR and short
// reads. Fewer bytes come with io.EOF at the end of the file; a failed
// pread returns its errno, for the caller to wrap with the file's name.
func PreadFull(fd int, p []byte, off int64) (int, error) {
	return full(p, io.EOF, func(q []byte, done int64) (int, error) { return unix.Pread(fd, q, off+done) })
}

// PwriteFull writes all of p at off, retrying on EINTR and short
// writes; a write that makes no progress is io.ErrShortWrite.
func PwriteFull(fd int, p []byte, off int64) (int, error) {
	return full(p, io.ErrShortWrite, func(q []byte, done int64) (int, error) { return unix.Pwrite(fd, q, off+done) })
}

// WriteFull writes all of p at the file position, retrying on EINTR and
// short writes; a write that makes no progress is io.ErrShortWrite.
func WriteFull(fd int, p []byte) (int, error) {
	return full(p, io.ErrShortWrite, func(q []byte, _ int64) (int, error) { return unix.Write(fd, q) })
}

// full is the loop of PreadFull, PwriteFull and WriteFull: op moves
// bytes of q, what is left of p once done bytes are moved, and is called
// again (through Retry) until all of p is; a call moving none ends the
// loop with stop.
func full(p []byte, stop error, op func(q []byte, done int64) (int, error)) (int, error) {
	n := 0
	for n < len(p) {
		m, err := Retry(func() (int, error) { return op(p[n:], int64(n)) })
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, stop
		}
		n += m
	}
	return n, nil
}

// readFile reads the file path whole (see ReadFile), naming it name in
// errors: open, fstat, as many reads as the file needs and no read for
// the EOF, close.
func readFile(path, name string, max int64) ([]byte, error) {
	fd, err := Open(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := Fstat(fd, &st); err != nil {
		return nil, pathError("stat", name, err)
	}
	b, err := readWhole(fd, &st, max)
	if err != nil {
		return nil, pathError("read", name, err)
	}
	return b, nil
}

// readWhole reads the open file fd, whose fstat is st, from its start.
// A regular file is read as large as st says: one read for a file that
// is not being written, and no read for the EOF; what a writer appends
// meanwhile is left for the next open (as hg's readers do with an index
// they sized), and a file truncated meanwhile gives what is left. Other
// files (devices, pipes) are read to their EOF, within max.
func readWhole(fd int, st *unix.Stat_t, max int64) ([]byte, error) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil, unix.EISDIR
	case unix.S_IFREG:
	default:
		return readAll(func(p []byte) (int, error) { return Read(fd, p) }, 0, max)
	}
	if err := checkSize(st.Size, max); err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := Read(fd, buf[off:])
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf[:off], nil // truncated since the fstat
		}
		off += n
	}
	return buf, nil
}
