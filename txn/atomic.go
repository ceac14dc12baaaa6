package txn

// File helpers shaped after mercurial/util.py: atomictempfile (write a
// temporary file beside the target, rename over it), copyfile (unlink
// the destination, hard link or copy), and filestat's ambiguity check.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hgfs/hgfs/internal/sysio"
)

// WriteFileAtomic replaces path with data as hg's atomictemp files do:
// a temporary ".NAME-XXXX~" file in the same directory, renamed over
// path, so a reader (or a crash) sees the old content or the new one,
// never a mix. The new file keeps the old file's permission bits (0644
// when path is new). Like hg's checkambig, when the old file's ctime
// equals the new one's (same second), the new mtime is set to the old
// mtime + 1 so that stat-based caches see a change.
//
// There is no fsync (hg does none): see the package's Durability notes.
func WriteFileAtomic(path string, data []byte) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := fs.FileMode(0o644)
	old, err := os.Lstat(path)
	if err == nil {
		mode = old.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+"-*~")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if old != nil {
		avoidAmbig(path, old)
	}
	return nil
}

// avoidAmbig is util.filestat.avoidambig: if the new file's ctime equals
// the old one's, its size and mtime could too, so advance the mtime.
// Failure is ignored, as in hg (the file may belong to someone else).
func avoidAmbig(path string, old fs.FileInfo) {
	nw, err := os.Lstat(path)
	if err != nil {
		return
	}
	oc, ok1 := ctime(old)
	nc, ok2 := ctime(nw)
	if !ok1 || !ok2 || oc != nc {
		return
	}
	adv := time.Unix((old.ModTime().Unix()+1)&0x7fffffff, 0)
	os.Chtimes(path, adv, adv)
}

// copyFile makes dst a copy of src as util.copyfile: an existing dst is
// unlinked first; with hardlink, a hard link is tried before copying.
// A copy goes through a temporary file and a rename, so dst is never
// seen half-written (hg copies in place; a crash there would leave a
// torn fncache for the next recover to restore again, which it can).
func copyFile(src, dst string, hardlink bool) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if hardlink {
		if err := os.Link(src, dst); err == nil {
			return nil
		}
	}
	return sysio.CopyFile(src, dst)
}

// tryUnlink removes path if it exists (vfs.tryunlink).
func tryUnlink(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// unlinkFile removes the file at path; a missing file is fine, a
// directory is an error (hg's unlink would fail too; os.Remove would
// remove an empty directory).
func unlinkFile(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("removing %s: is a directory", path)
	}
	return tryUnlink(path)
}

// exists reports whether path exists (without following a final link).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
