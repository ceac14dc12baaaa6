//go:build !unix

package revlog

import "os"

func openWFile(path string, trunc bool) (wfile, error) {
	flags := os.O_RDWR | os.O_CREATE
	if trunc {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(path, flags, 0o666)
}
