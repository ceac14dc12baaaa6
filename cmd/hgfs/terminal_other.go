//go:build !unix

package main

import (
	"io"
	"os"
)

// terminalWidth is unknown here: the caller's default (80) applies.
func terminalWidth(f *os.File) (int, bool) { return 0, false }

// isTerminal reports whether w is a character device (a console; also
// NUL, harmlessly).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
