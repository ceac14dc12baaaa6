//go:build linux || windows

package mount

import (
	"errors"
	"log"
	"syscall"

	"github.com/hgfs/hgfs/fsnode"
)

// errnoOf reduces err to the errno the kernel should see (fsnode.ToErrno).
// fsnode returns syscall.Errno values, possibly wrapped with context;
// anything else is a bug or an I/O failure of the cache and becomes EIO,
// logged here because the kernel passes only the number on.
func errnoOf(err error) syscall.Errno {
	e := fsnode.ToErrno(err)
	var errno syscall.Errno
	if e == syscall.EIO && !errors.As(err, &errno) {
		log.Printf("hgfs mount: internal error mapped to EIO: %v", err)
	}
	return e
}
