//go:build linux || windows

package mount

import (
	"context"
	"errors"
	"log"
	"syscall"
)

// errnoOf reduces err to the errno the kernel should see. fsnode returns
// syscall.Errno values, possibly wrapped with context; anything else is a
// bug or an I/O failure of the cache and becomes EIO, logged here because
// the kernel passes only the number on.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if errors.Is(err, context.Canceled) {
		return syscall.EINTR // the kernel interrupted the request
	}
	log.Printf("hgfs mount: internal error mapped to EIO: %v", err)
	return syscall.EIO
}
