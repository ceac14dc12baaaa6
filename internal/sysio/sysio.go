package sysio

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"syscall"
)

// ReadFile reads the file path whole, refusing one larger than max bytes
// (math.MaxInt: as large as memory allows) with an error matching
// syscall.EFBIG. On unix that is open, fstat, read, close, with no
// *os.File (see readWhole for what a file growing or shrinking
// meanwhile gives); elsewhere os's calls. Errors are *fs.PathError
// values naming path, as os.ReadFile's.
func ReadFile(path string, max int64) ([]byte, error) { return readFile(path, path, max) }

// checkSize is the bound of a whole-file read: size bytes must be at
// most max and fit in an int.
func checkSize(size, max int64) error {
	if size > max || size > math.MaxInt {
		return fmt.Errorf("%d bytes, more than the %d read whole: %w", size, min(max, math.MaxInt), syscall.EFBIG)
	}
	return nil
}

// pathError names the file of a failed call op; an error that already
// names one (os's, elsewhere than unix) keeps its op and is renamed.
func pathError(op, path string, err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		op, err = pe.Op, pe.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// readAll reads with read to the end (a read of nothing, or io.EOF),
// into a buffer of size bytes to start with (plus one, for the EOF),
// failing past max bytes.
func readAll(read func([]byte) (int, error), size int, max int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, math.MaxInt-1)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if cerr := checkSize(int64(len(buf)), max); cerr != nil {
			return nil, cerr
		}
		if err == io.EOF || (n == 0 && err == nil) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
