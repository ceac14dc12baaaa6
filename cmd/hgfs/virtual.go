package main

// The virtual working copy of a mounted clone (fsnode's virtual.go,
// mount's virtualwc.go): checkouts into a mount's cache name each
// regular file's revision instead of writing its bytes, unless
// [hgfs] virtual-checkout is off.

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/worktree"
)

// virtualCheckout reports whether [hgfs] virtual-checkout is on.
func virtualCheckout(c *cmdContext) (bool, error) {
	on, err := c.ui.cfg.GetBool(config.HgfsVirtualCheckout)
	if err != nil {
		return false, abortf("%v", err)
	}
	return on, nil
}

// virtualSink is the cache's sink as a worktree.VirtualSink: a file's
// reference is its manifest path and file node.
type virtualSink struct{ *fsnode.Sink }

var _ worktree.VirtualSink = virtualSink{}

func (s virtualSink) CreateVirtual(name string, size int64, perm uint32, mtime time.Time, node revlog.Node) error {
	return s.Sink.CreateVirtual(name, size, perm, mtime, fsnode.VirtualRef{Node: node, Path: name})
}

// mountVirtual returns how hgfs update makes a file of the working copy
// at root virtual when root is an hgfs cache mount (and [hgfs]
// virtual-checkout is on): the mount's user.hgfs.virtual attribute set
// on the file; nil otherwise. Every file gets the mtime of the second
// before the update began, as a clone's checkout into a mount gives
// them, so that the dirstate records them all and hg status reads none
// back (a later write moves the mtime past it).
func mountVirtual(c *cmdContext, root string) (worktree.SetVirtualFunc, error) {
	on, err := virtualCheckout(c)
	if err != nil || !on || !xattrVirtual {
		return nil, err
	}
	info, err := mount.ReadInfo(root)
	if err != nil || info.Kind != "cache" || !info.Virtual || info.ReadOnly || filepath.Clean(info.Mountpoint) != filepath.Clean(root) {
		return nil, nil
	}
	mtime := time.Unix(time.Now().Unix()-1, 0)
	return func(p string, e revlog.ManifestEntry, size int64) error {
		v := mount.VirtualSet{Ref: fsnode.VirtualRef{Node: e.Node, Path: e.Path}, Size: uint64(size), Mtime: mtime}
		return setXattr(p, mount.VirtualXattr, v.Encode())
	}, nil
}

// checkVirtual is hgfs fsck's check of the virtual files fsnode's fsck
// found sound: each names a file revision of the repository in the
// cache, of the file's size. It opens the (unmounted) cache to read the
// store.
func checkVirtual(dir string, files []fsnode.VirtualFile) []fsnode.Problem {
	if len(files) == 0 {
		return nil
	}
	fsys, err := fsnode.Open(dir, fsnode.Options{})
	if err != nil {
		return []fsnode.Problem{{Path: "/", What: fmt.Sprintf("virtual files: cannot open the cache: %v", err)}}
	}
	defer fsys.Close()
	var probs []fsnode.Problem
	hg, err := fs.Sub(fsys.FS(), ".hg")
	var r *repo.Repo
	if err == nil {
		r, err = repo.OpenFS(hg)
	}
	if err != nil {
		return []fsnode.Problem{{Path: "/", What: fmt.Sprintf("%d virtual files and no repository to read them from: %v", len(files), err)}}
	}
	defer r.Close()
	for _, f := range files {
		data, err := r.FileData(revlog.ManifestEntry{Path: f.Ref.Path, Node: f.Ref.Node})
		switch {
		case err != nil:
			probs = append(probs, fsnode.Problem{Path: f.Path, Ino: f.Ino, What: fmt.Sprintf("virtual file names %s@%x: %v", f.Ref.Path, f.Ref.Node, err)})
		case uint64(len(data)) != f.Size:
			probs = append(probs, fsnode.Problem{Path: f.Path, Ino: f.Ino, What: fmt.Sprintf("virtual file of %d bytes names %s@%x, of %d", f.Size, f.Ref.Path, f.Ref.Node, len(data))})
		}
	}
	return probs
}
