package fsnode

import (
	"context"
	"errors"
	"syscall"
)

// Errors of the cache itself (opening, checking). File system operations
// return syscall.Errno values, possibly wrapped; see ToErrno.
var (
	// ErrNewerFormat: the cache was written by a newer hgfs whose index
	// format this one does not know. It is never modified.
	ErrNewerFormat = errors.New("fsnode: cache format is newer than this hgfs supports")
	// ErrUnfinished: the cache was being filled by a clone
	// (CreateForIngest) that never finished; it is never modified.
	ErrUnfinished = errors.New("fsnode: the cache holds an unfinished clone (interrupted)")
	// ErrDamaged: file contents read from a data file do not match their
	// checksum. Reads return it with EIO.
	ErrDamaged = errors.New("fsnode: data damaged (checksum mismatch)")
	// ErrCorrupt: an index record or data file does not decode or is
	// inconsistent; Fsck says where.
	ErrCorrupt = errors.New("fsnode: corrupt cache")
	// ErrExist: Create found a cache already in the directory.
	ErrExist = errors.New("fsnode: cache already exists")
	// ErrNotCache: Open found no cache in the directory.
	ErrNotCache = errors.New("fsnode: not a cache directory")
	// ErrClosed: the FS was closed.
	ErrClosed = errors.New("fsnode: cache is closed")
	// ErrShortWrite: a sink file was closed before all its announced bytes
	// were written.
	ErrShortWrite = errors.New("fsnode: file closed before its announced size was written")
	// ErrTooLong: more bytes were written to a sink file than announced.
	ErrTooLong = errors.New("fsnode: more bytes written than the announced size")
)

// ToErrno maps an error returned by this package to the errno a file
// system adapter should answer with: the wrapped syscall.Errno if there is
// one, ENOENT-like context cancellation as EINTR, anything else EIO.
func ToErrno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return syscall.EINTR
	}
	return syscall.EIO
}
