//go:build !unix

package streamclone

import "os"

// createExcl creates path exclusively for writing.
func createExcl(path string) (sinkFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}
