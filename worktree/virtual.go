package worktree

// A working copy in an hgfs mount whose files can be virtual (the
// mount's cache names a file's revision instead of holding its bytes):
// Update then makes each regular file it would write show the target's
// revision through Options.SetVirtual, without writing it.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// SetVirtualFunc makes the regular file at p show revision e (its
// content, size bytes) in place of whatever it holds, as the mount
// offers it (cmd/hgfs: the user.hgfs.virtual attribute).
type SetVirtualFunc func(p string, e revlog.ManifestEntry, size int64) error

// fileSize is the size of file revision e's content (without copy
// metadata), as the working file will report it.
func fileSize(r *repo.Repo, e revlog.ManifestEntry) (int64, error) {
	fl, err := openFilelog(r, e.Path)
	if err != nil {
		return 0, err
	}
	defer fl.Close()
	data, err := repo.FileContent(fl, e)
	if err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// writeVirtual is writeFile for a regular file in a mount that takes
// references: an existing regular file of the path (linked once) is
// kept and made to show the revision, otherwise an empty one is made
// first; permission bits as hg gives them.
func writeVirtual(r *repo.Repo, root string, g item, umask uint32, set SetVirtualFunc) (written, error) {
	size, err := fileSize(r, g.e)
	if err != nil {
		return written{}, err
	}
	p := filepath.Join(root, filepath.FromSlash(g.e.Path))
	perm := filePerm(g.e.Flags, umask)
	fi, err := os.Lstat(p)
	reuse := err == nil && fi.Mode().IsRegular()
	if reuse && links(fi) > 1 {
		reuse = false // hg writes a new file, leaving the other names alone
	}
	switch {
	case reuse:
		if uint32(fi.Mode().Perm()) != perm {
			if err := os.Chmod(p, fs.FileMode(perm)); err != nil {
				return written{}, err
			}
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return written{}, err
	default:
		if err == nil {
			if err := removeExisting(p); err != nil {
				return written{}, err
			}
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
		if err != nil {
			return written{}, err
		}
		if err := f.Close(); err != nil {
			return written{}, err
		}
		if err := os.Chmod(p, fs.FileMode(perm)); err != nil { // past the umask
			return written{}, err
		}
	}
	if err := set(p, g.e, size); err != nil {
		return written{}, &fs.PathError{Op: "setxattr", Path: p, Err: err}
	}
	if fi, err = os.Lstat(p); err != nil {
		return written{}, err
	}
	return written{mode: dirstate.ModeOf(fi), size: fi.Size(), mtime: dirstate.TimestampOf(fi.ModTime().UnixNano())}, nil
}
