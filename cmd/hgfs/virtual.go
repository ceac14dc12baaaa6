package main

// The virtual working copy of a mounted clone (fsnode's virtual.go,
// mount's virtualwc.go): checkouts into a mount's cache name each
// regular file's revision instead of writing its bytes, unless
// [hgfs] virtual-checkout is off.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/internal/tune"
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

func (s virtualSink) CreateVirtuals(files []worktree.NewVirtual) error {
	return s.Sink.CreateVirtuals(fsnodeVirtuals(files))
}

func fsnodeVirtuals(files []worktree.NewVirtual) []fsnode.NewVirtual {
	nv := make([]fsnode.NewVirtual, len(files))
	for i, v := range files {
		nv[i] = fsnodeVirtual(v)
	}
	return nv
}

// fsnodeVirtual is a checkout's file as the cache makes it: its
// reference names its own path.
func fsnodeVirtual(v worktree.NewVirtual) fsnode.NewVirtual {
	return fsnode.NewVirtual{Name: v.Name, Size: v.Size, Perm: v.Perm, Mtime: v.Mtime, Ref: fsnode.VirtualRef{Node: v.Node, Path: v.Name}}
}

// fsnodeList is a checkout's list of files as fsnode's: each file
// converted as it is asked for, never the whole list at once.
type fsnodeList struct{ worktree.VirtualList }

func (l fsnodeList) At(i int) fsnode.NewVirtual { return fsnodeVirtual(l.VirtualList.At(i)) }

// deferSink is a virtualSink whose checkout defers each directory's
// files until the mount first looks in it (fsnode's vdir.go; HGFS_TUNE's
// deferdirs).
type deferSink struct{ virtualSink }

var _ worktree.DeferSink = deferSink{}

func (s deferSink) DeferVirtuals(files worktree.VirtualList) (int, error) {
	return s.Sink.DeferVirtuals(fsnodeList{files})
}

// mountVirtual returns how hgfs update makes files of the working copy
// at root virtual when root is an hgfs cache mount that takes
// user.hgfs.virtual (and [hgfs] virtual-checkout is on): the attribute
// set on the mount's root, a batch of files a request (a file at a time
// where a batch fails: the error is then the file's); nil otherwise.
// Every file gets the mtime of the second before the update began, as a
// clone's checkout into a mount gives them, so that the dirstate
// records them all and hg status reads none back (a later write moves
// the mtime past it).
//
// With it comes, unless HGFS_TUNE switches daemonupdate off, how hgfs
// update asks the mount's daemon to do the whole update in its cache
// (mount.UpdateXattr, read from the mount's root).
func mountVirtual(c *cmdContext, root string) (worktree.SetVirtualFunc, worktree.DaemonFunc, error) {
	on, err := virtualCheckout(c)
	if err != nil || !on || !xattrVirtual {
		return nil, nil, err
	}
	info, err := mountInfo(root)
	if err != nil || info.Kind != "cache" || !info.Virtual || info.ReadOnly || filepath.Clean(info.Mountpoint) != filepath.Clean(root) {
		return nil, nil, nil
	}
	var daemon worktree.DaemonFunc
	if c.ui.tune.Enabled(tune.DaemonUpdate) {
		daemon = func(target revlog.Node, clean bool, umask uint32) (*worktree.Result, error) {
			return daemonUpdate(c, root, mount.UpdateRequest{Target: target, Umask: umask, Clean: clean})
		}
	}
	mtime := time.Unix(time.Now().Unix()-1, 0)
	return func(root string, files []worktree.VirtualFile) (time.Time, error) {
		sets := make([]mount.VirtualSet, len(files))
		for i, f := range files {
			sets[i] = mount.VirtualSet{Ref: fsnode.VirtualRef{Node: f.Entry.Node, Path: f.Entry.Path}, Size: uint64(f.Size), Mtime: mtime}
		}
		if len(sets) == 1 {
			return mtime, setXattr(files[0].Path, mount.VirtualXattr, sets[0].Encode())
		}
		done := 0
		for _, v := range mount.EncodeVirtualBatch(sets) {
			n := bytes.Count(v, []byte("\n"))
			if err := setXattr(root, mount.VirtualXattr, v); err != nil {
				for i := done; i < done+n; i++ {
					if err := setXattr(files[i].Path, mount.VirtualXattr, sets[i].Encode()); err != nil {
						return mtime, &fs.PathError{Op: "setxattr", Path: files[i].Path, Err: err}
					}
				}
			}
			done += n
		}
		return mtime, nil
	}, daemon, nil
}

// mountInfo is mount.ReadInfo without the counters: the root's
// mount.InfoXattr, one request, else the stats file (a mount that has
// no such attribute; a path that is no mount says so there).
func mountInfo(root string) (*mount.Info, error) {
	buf := make([]byte, 64<<10)
	if n, err := getXattr(root, mount.InfoXattr, buf); err == nil {
		var info mount.Info
		if json.Unmarshal(buf[:n], &info) == nil {
			return &info, nil
		}
	}
	return mount.ReadInfo(root)
}

// daemonUpdate sends q to the daemon of the mount at root and returns
// its answer as worktree.Update would (worktree.DaemonFunc).
func daemonUpdate(c *cmdContext, root string, q mount.UpdateRequest) (*worktree.Result, error) {
	buf := make([]byte, mount.MaxVirtualBatch)
	n, err := getXattr(root, q.Name(), buf)
	if errors.Is(err, errNoXattr) {
		// An older daemon, or one without views: no such attribute.
		c.ui.debugf("the mount's daemon did not take the update: %v\n", err)
		return nil, fmt.Errorf("%w: %v", worktree.ErrDeclined, err)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "update through the mount's daemon", Path: root, Err: err}
	}
	p, err := mount.ParseUpdateReply(buf[:n])
	if err != nil {
		return nil, err
	}
	switch {
	case p.Failed != "":
		return nil, errors.New(p.Failed)
	case p.Declined != "":
		c.ui.debugf("the mount's daemon declined the update: %s\n", p.Declined)
		return nil, fmt.Errorf("%w: %s", worktree.ErrDeclined, p.Declined)
	case len(p.Dirty) > 0:
		paths := p.Dirty
		if p.MoreDirty {
			paths = append(paths, "...")
		}
		return nil, fmt.Errorf("%w: %s", worktree.ErrDirty, strings.Join(paths, ", "))
	}
	c.ui.debugf("the mount's daemon updated the working copy\n")
	return &worktree.Result{Updated: p.Updated, Removed: p.Removed, Branch: p.Branch}, nil
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
