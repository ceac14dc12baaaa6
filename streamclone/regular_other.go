//go:build !unix

package streamclone

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// readRegular reads size bytes of the regular file at path, never through
// a symbolic link: the file opened must be the one lstat saw.
func readRegular(path string, size int64) ([]byte, error) {
	lst, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lst.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(lst, st) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("replaced while opened")}
	}
	p := make([]byte, size)
	n, err := io.ReadFull(f, p)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return p[:n], nil
	}
	return p, err
}
