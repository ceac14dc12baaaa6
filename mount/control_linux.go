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

// readRange answers a READ of size bytes at off without a handle
// (no_open). A READ that serves a moving file's generation to its end
// holds that generation for the next look at the file's attributes
// (servedFiles.take): the kernel asks them at every read(2), and the
// read(2) after the one that reached the end is the reader's looking for
// the end. Shown a longer generation there, it would read that
// generation's tail after the previous one's bytes (torn JSON), and a
// file that grows at every look would never end.
func (c *control) readRange(x ctlNode, off uint64, size uint32) ([]byte, error) {
	var data []byte
	if x.moving() {
		sv, err := c.current(x)
		if err != nil {
			return nil, err
		}
		if off+uint64(size) >= uint64(len(sv.data)) {
			c.served.hold(c.ino(x), sv)
		}
		data = sv.data
	} else {
		var err error
		if data, err = c.read(x); err != nil {
			return nil, err
		}
	}
	return sliceAt(data, off, size), nil
}

// sliceAt is what a READ of size bytes at off reads from data.
func sliceAt(data []byte, off uint64, size uint32) []byte {
	if off >= uint64(len(data)) {
		return nil
	}
	data = data[off:]
	if uint64(len(data)) > uint64(size) {
		data = data[:size]
	}
	return data
}

// hold marks sv, if it is still ino's current generation, for the next
// take.
func (s *servedFiles) hold(ino uint64, sv *served) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[ino] == sv {
		sv.held = true
	}
}
