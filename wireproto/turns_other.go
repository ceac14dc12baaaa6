//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package wireproto

import (
	"errors"
	"os"
)

// tryTurnFile: turns are not shared between processes here.
func tryTurnFile(dir string, i int) (*os.File, bool, error) {
	return nil, false, errors.New("turns shared between processes need flock")
}
