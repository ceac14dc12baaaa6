//go:build unix

package hgview

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// maxReadFile bounds what readFile reads into memory: far above any
// revlog index a view opens (the changelog index of a million
// changesets is 64 MiB), and refused rather than allocated beyond.
const maxReadFile = 1 << 30

// readFile reads a regular file whole, as large as it is when opened:
// open, fstat, read, close, with no *os.File around the descriptor.
func readFile(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, unix.EISDIR
	}
	if st.Size > maxReadFile {
		return nil, fmt.Errorf("%d bytes: %w", st.Size, unix.EFBIG)
	}
	// The size the fstat saw is what is read: one read for a file that
	// is not being written, and no read for the EOF. What a writer
	// appends meanwhile (a revlog growing) is left for the next open, as
	// hg's own readers do with the index they sized.
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := unix.Read(fd, buf[off:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
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
