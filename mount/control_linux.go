//go:build linux

package mount

import (
	"syscall"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/hgview"
)

// The parts of the control directory only the Linux adapters use (the
// go-fuse raw API forgets and closes nodes; repository mounts have views
// of their own); cgofuse's Windows build needs none of them.

// node finds the node numbered ino: the directory, stats, or a view node
// the adapter remembered (hgview.View.Remember).
func (c *control) node(ino uint64) (ctlNode, error) {
	switch {
	case ino == c.dirIno:
		return ctlNode{}, nil
	case ino == c.ino(ctlNode{stats: true}):
		return ctlNode{stats: true}, nil
	case c.views == nil:
		return ctlNode{}, syscall.ENOENT
	}
	v, err := c.views.view()
	if err != nil {
		return ctlNode{}, err
	}
	n, ok := v.Node(ino)
	if !ok {
		return ctlNode{}, syscall.ENOENT // forgotten: the kernel never asks
	}
	return ctlNode{n: n}, nil
}

// forget drops what the adapter's references to the view node ino kept.
func (c *control) forget(ino, nlookup uint64) {
	if c.views != nil && c.views.forget(ino, nlookup) {
		c.served.forget(ino)
	}
}

// close releases the views' revlogs once the mount is gone.
func (c *control) close() {
	if c.views != nil {
		c.views.close()
	}
}

// cacheViews shows the repository whose .hg is at the root of a cache;
// its root is the control directory, virtualDirIno.
//
// The views also resolve the cache's virtual files (a virtual working
// copy, fsnode's virtual.go): their contents are file revisions of the
// same repository, read through the same caches as .hgfs/rev/REV/.
func cacheViews(fsys *fsnode.FS) *views {
	w := &views{open: cacheView(fsys)}
	resolveVirtual(fsys, w)
	return w
}

// repoViews shows the repository at root (an ordinary one on disk),
// whose control directory is numbered rootIno.
func repoViews(root string, rootIno uint64) *views {
	return &views{open: func() (*hgview.View, error) {
		return hgview.OpenDir(root, hgview.Options{RootIno: rootIno})
	}}
}

func (s *servedFiles) forget(ino uint64) {
	s.mu.Lock()
	delete(s.m, ino)
	s.mu.Unlock()
}

// forget undoes nlookup of the adapter's Remember calls on ino and
// reports whether the node is gone.
func (w *views) forget(ino, nlookup uint64) bool {
	w.mu.Lock()
	v := w.v
	w.mu.Unlock()
	return v != nil && v.Forget(ino, nlookup)
}

func (w *views) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.v != nil {
		w.v.Close()
		w.v = nil
	}
}
