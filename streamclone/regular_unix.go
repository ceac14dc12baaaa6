//go:build unix

package streamclone

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
)

// readRegular reads size bytes of the regular file at path, never through
// a symbolic link (O_NOFOLLOW) and never from anything else (a FIFO, a
// device: O_NONBLOCK keeps the open from waiting, fstat refuses it).
func readRegular(path string, size int64) ([]byte, error) {
	fd, err := sysio.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := sysio.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file")}
	}
	p := make([]byte, size)
	for off := 0; off < len(p); {
		n, err := unix.Pread(fd, p[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return p[:off], nil
		}
		off += n
	}
	return p, nil
}
