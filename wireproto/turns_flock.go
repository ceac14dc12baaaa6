//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package wireproto

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// tryTurnFile takes turn i of dir if no process holds it: the open file
// holds the lock (flock), which the kernel releases with the file, or
// with the process however it ends. ok is false when the turn is taken;
// an error means turns cannot be shared through dir.
func tryTurnFile(dir string, i int) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(filepath.Join(dir, fmt.Sprintf("turn%d", i)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}
