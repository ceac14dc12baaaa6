package worktree

// A working copy in an hgfs mount whose files can be virtual (the
// mount's cache names a file's revision instead of holding its bytes):
// Update then makes the regular files it would write show the target's
// revisions through Options.SetVirtual, in batches, without writing
// them. Symlinks are written as usual.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// VirtualFile is a working file to make virtual: the regular file at
// Path (absolute), which exists, shows revision Entry of its manifest
// path, Size bytes.
type VirtualFile struct {
	Path  string
	Entry revlog.ManifestEntry
	Size  int64
}

// SetVirtualFunc makes every file of files show its revision in place
// of what it holds, as the mount offers it (cmd/hgfs: the
// user.hgfs.virtual attribute), and returns the mtime they then have.
type SetVirtualFunc func(root string, files []VirtualFile) (time.Time, error)

// DaemonFunc has the daemon of the mount holding the working copy move
// it to changeset target inside its cache, discarding uncommitted
// changes if clean, new files getting hg's modes under umask (package
// mount's UpdateXattr), under the wlock Update holds. It returns what
// Update would: the counts and the target's branch, or an error
// wrapping ErrDirty naming the changed files; one wrapping ErrDeclined
// when the daemon leaves the update to Update (having changed nothing).
type DaemonFunc func(target revlog.Node, clean bool, umask uint32) (*Result, error)

// ErrDeclined is wrapped by a DaemonFunc's error when the daemon did
// not take the update.
var ErrDeclined = errors.New("the mount's daemon declined the update")

// fileSize is the size of file revision e's content (without copy
// metadata), as the working file will report it. Only the length is
// kept, so the read buffer goes back to the pool on return.
func fileSize(r *repo.Repo, e revlog.ManifestEntry) (int64, error) {
	buf := getBuffer()
	defer putBuffer(buf)
	fl, err := openFilelog(r, e.Path, buf)
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

// writeVirtual is write for a working copy that takes references: the
// writers learn each regular file's size and make sure a regular file
// (linked once) with hg's permission bits is at its path, then
// opt.SetVirtual makes them all virtual at once; symlinks are written.
func writeVirtual(ctx context.Context, r *repo.Repo, root string, gets []Change, opt Options) ([]Written, error) {
	out := make([]Written, len(gets))
	files := make([]VirtualFile, len(gets))
	umask := getUmask()
	err := eachFile(ctx, opt, len(gets), func(i int) (int64, error) {
		g := gets[i]
		if g.Entry.Flags == "l" && fsSymlinks {
			w, err := writeFile(r, root, g, umask)
			out[i] = w
			return w.Size, err
		}
		if done, err := setExec(root, g, umask); done || err != nil {
			return 0, err
		}
		size, err := fileSize(r, g.Entry)
		if err != nil {
			return 0, err
		}
		perm := FilePerm(g.Entry.Flags, umask)
		p := filepath.Join(root, filepath.FromSlash(g.Entry.Path))
		if err := placeFile(p, perm); err != nil {
			return 0, err
		}
		files[i] = VirtualFile{Path: p, Entry: g.Entry, Size: size}
		out[i] = Written{Mode: dirstate.ModeRegular | perm, Size: size}
		return size, nil
	})
	if err != nil {
		return nil, err
	}
	var set []VirtualFile
	var idx []int
	for i, f := range files {
		if f.Path != "" {
			set, idx = append(set, f), append(idx, i)
		}
	}
	if len(set) == 0 {
		return out, nil
	}
	mtime, err := opt.SetVirtual(root, set)
	if err != nil {
		return nil, err
	}
	for _, i := range idx {
		out[i].Mtime = dirstate.TimestampOf(mtime.UnixNano())
	}
	return out, nil
}

// placeFile makes sure a regular file linked once, with permission bits
// perm, is at p: an existing one is kept (its bytes are replaced by a
// reference next), anything else replaced by an empty file.
func placeFile(p string, perm uint32) error {
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode().IsRegular() && links(fi) == 1 {
		if uint32(fi.Mode().Perm()) != perm {
			return os.Chmod(p, fs.FileMode(perm))
		}
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		// A symlink, or a file linked elsewhere too: hg writes a new
		// file, leaving the other names alone.
		if err := removeExisting(p); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(p, fs.FileMode(perm)) // past the umask
}
