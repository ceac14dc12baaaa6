//go:build !unix

package sysio

import "os"

// File is an open file: an *os.File where there is no unix (see
// file_unix.go).
type File = os.File

// OpenFile is os.OpenFile.
func OpenFile(path string, flag int, perm os.FileMode) (*File, error) {
	return os.OpenFile(path, flag, perm)
}

// readFile reads the file path whole with os's calls (see ReadFile),
// naming it name in errors.
func readFile(path, name string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, pathError("stat", name, err)
	}
	if err := checkSize(st.Size(), max); err != nil {
		return nil, pathError("read", name, err)
	}
	// What the file holds now, within max (a file grown since the stat
	// is read to its end, as os.ReadFile does), into a buffer of the
	// size the stat saw.
	b, err := readAll(f.Read, int(st.Size()), max)
	if err != nil {
		return nil, pathError("read", name, err)
	}
	return b, nil
}
