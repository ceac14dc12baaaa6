//go:build unix

package sysio

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// BreakLink makes path, when another name links to the same file, a
// file of its own with the same content and permission bits (a copy
// beside it, renamed over it), so that a write in place changes this
// name only. It is what hg's vfs does before it opens a file for
// writing (util.mktempcopy and a rename when util.nlinks > 1): a local
// hg clone hard-links the source's revlogs, and appending to one of
// them in place would append to the source repository's too. A missing
// path, or one linked once, is left alone.
func BreakLink(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 || !fi.Mode().IsRegular() {
		return nil
	}
	return CopyFile(path, path)
}
