//go:build linux

package mount

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// virtualDir serves the control directory (control.go) to the raw
// adapter, which sends it every request on a virtual inode number (the
// top half of the space, which fsnode never allocates) and on the name
// .hgfs in the root. What it keeps of its own is what go-fuse's raw
// protocol needs: the content of files opened with a handle (on a kernel
// that requires OPEN) and the open changeset directories whose listed
// files it stores in the page cache.
type virtualDir struct {
	c *control

	// store puts a file's content in the kernel's page cache (nil
	// until the server exists).
	store func(ino uint64, data []byte) bool

	nextFh  atomic.Uint64
	mu      sync.Mutex
	handles map[uint64][]byte   // open files, by handle
	dirs    map[uint64]*listing // open changeset directories, by handle
}

// listing is an open changeset directory: the files its last READDIRPLUS
// reply linked, whose content is stored in the page cache once the
// kernel has taken that reply (see viewDirHandle, the node API's twin).
type listing struct {
	mu      sync.Mutex
	pending []uint64
}

func newVirtualDir(c *control) *virtualDir {
	return &virtualDir{c: c, handles: map[uint64][]byte{}, dirs: map[uint64]*listing{}}
}

func (v *virtualDir) owns(nodeID uint64) bool { return nodeID >= virtualBase }

// ownsName reports whether a request naming name in parent is the
// control directory's.
func (v *virtualDir) ownsName(parent uint64, name string) bool {
	return v.owns(parent) || parent == fuse.FUSE_ROOT_ID && name == VirtualDirName
}

// refuse rejects changes inside the control directory and to its name.
func (v *virtualDir) refuse(parent uint64, name string) fuse.Status {
	if v.ownsName(parent, name) {
		return toStatus(errControl)
	}
	return fuse.OK
}

// lookup answers a LOOKUP of name in parent (the root for .hgfs); a view
// node it answers is remembered until the kernel forgets it.
func (v *virtualDir) lookup(parent uint64, name string, out *fuse.EntryOut) fuse.Status {
	var x ctlNode
	if parent != fuse.FUSE_ROOT_ID {
		dir, err := v.c.node(parent)
		if err == nil {
			x, err = v.c.lookup(dir, name)
		}
		if err != nil {
			return toStatus(err)
		}
	}
	return v.entry(x, out)
}

// entry fills out with x's node and attributes, one kernel reference.
func (v *virtualDir) entry(x ctlNode, out *fuse.EntryOut) fuse.Status {
	a, _, err := v.c.attr(x)
	if err != nil {
		return toStatus(err)
	}
	if x.n != nil {
		view, err := v.c.views.view()
		if err == nil {
			err = view.Remember(x.n)
		}
		if err != nil {
			return toStatus(err)
		}
	}
	*out = fuse.EntryOut{NodeId: uint64(a.Ino)}
	out.SetEntryTimeout(ctlEntryTimeout(x))
	out.SetAttrTimeout(ctlAttrTimeout(x))
	fillCtlAttr(a, &out.Attr)
	return fuse.OK
}

func (v *virtualDir) getAttr(ino uint64, out *fuse.AttrOut) fuse.Status {
	x, err := v.c.node(ino)
	if err != nil {
		return toStatus(err)
	}
	a, _, err := v.c.attr(x)
	if err != nil {
		return toStatus(err)
	}
	out.SetTimeout(ctlAttrTimeout(x))
	fillCtlAttr(a, &out.Attr)
	return fuse.OK
}

// attr returns the attributes of the node numbered ino.
func (v *virtualDir) attr(ino uint64) (fsnode.Attr, error) {
	x, err := v.c.node(ino)
	if err != nil {
		return fsnode.Attr{}, err
	}
	a, _, err := v.c.attr(x)
	return a, err
}

func (v *virtualDir) open(in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	x, err := v.c.node(in.NodeId)
	if err != nil {
		return toStatus(err)
	}
	data, err := v.c.open(x, int(in.Flags))
	if err != nil {
		return toStatus(err)
	}
	fh := v.nextFh.Add(1)
	v.mu.Lock()
	v.handles[fh] = data
	v.mu.Unlock()
	out.Fh, out.OpenFlags = fh, ctlOpenFlags(x)
	return fuse.OK
}

// read answers a READ: through the handle open made, or without one
// (no_open) from the node.
func (v *virtualDir) read(in *fuse.ReadIn) (fuse.ReadResult, fuse.Status) {
	if in.Fh == 0 {
		x, err := v.c.node(in.NodeId)
		if err != nil {
			return nil, toStatus(err)
		}
		data, err := v.c.readRange(x, in.Offset, in.Size)
		if err != nil {
			return nil, toStatus(err)
		}
		return fuse.ReadResultData(data), fuse.OK
	}
	v.mu.Lock()
	data, ok := v.handles[in.Fh]
	v.mu.Unlock()
	if !ok {
		return nil, fuse.EBADF
	}
	return readAt(data, in.Offset, in.Size), fuse.OK
}

func (v *virtualDir) release(fh uint64) {
	v.mu.Lock()
	delete(v.handles, fh)
	v.mu.Unlock()
}

func (v *virtualDir) readlink(ino uint64) ([]byte, fuse.Status) {
	x, err := v.c.node(ino)
	if err != nil {
		return nil, toStatus(err)
	}
	target, err := v.c.readlink(x)
	if err != nil {
		return nil, toStatus(err)
	}
	return []byte(target), fuse.OK
}

func (v *virtualDir) openDir(ino uint64, out *fuse.OpenOut) fuse.Status {
	x, err := v.c.node(ino)
	if err != nil {
		return toStatus(err)
	}
	if !x.isDir() {
		return fuse.ENOTDIR
	}
	out.OpenFlags = ctlDirOpenFlags(x)
	if x.n != nil && x.n.ListsFixed() {
		if view, err := v.c.views.view(); err == nil {
			view.Prefetch(x.n) // the next level, while this one is read
		}
		out.Fh = v.nextFh.Add(1)
		v.mu.Lock()
		v.dirs[out.Fh] = &listing{}
		v.mu.Unlock()
	}
	return fuse.OK
}

// releaseDir stores what the last reply listed and forgets the listing.
func (v *virtualDir) releaseDir(fh uint64) {
	v.mu.Lock()
	l := v.dirs[fh]
	delete(v.dirs, fh)
	v.mu.Unlock()
	if l != nil {
		l.mu.Lock()
		v.push(l)
		l.mu.Unlock()
	}
}

// push stores the content of the files l's previous reply linked in the
// kernel's page cache (see viewDirHandle.pushLocked); l.mu is held.
func (v *virtualDir) push(l *listing) {
	inos := l.pending
	l.pending = nil
	if v.store == nil || len(inos) == 0 || v.c.views == nil {
		return
	}
	view, err := v.c.views.view()
	if err != nil {
		return
	}
	for _, ino := range inos {
		n, ok := view.Node(ino)
		if !ok {
			continue // forgotten meanwhile
		}
		if data, ok := view.Cached(n); ok && len(data) <= maxPush {
			v.store(ino, data)
		}
	}
}

// readDir answers READDIR and READDIRPLUS from offset in.Offset: "." and
// ".." at offsets 1 and 2, then the entries. In a changeset's tree
// (hgview.Node.ListsFixed) READDIRPLUS entries are full lookups (each one
// a lookup the kernel will FORGET), so a walk sends no LOOKUP per file;
// elsewhere they carry no node ID, and the kernel looks each up only
// when it is used, so listing rev/ or a revlog reconstructs nothing.
func (v *virtualDir) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	dir, err := v.c.node(in.NodeId)
	if err != nil {
		return toStatus(err)
	}
	ents, err := v.c.entries(dir)
	if err != nil {
		return toStatus(err)
	}
	full := plus && dir.n != nil && dir.n.ListsFixed()
	v.mu.Lock()
	l := v.dirs[in.Fh]
	v.mu.Unlock()
	if l != nil {
		// A new request on the handle: the kernel took the previous
		// reply and linked its nodes.
		l.mu.Lock()
		defer l.mu.Unlock()
		v.push(l)
	}
	all := append([]fuse.DirEntry{{Name: ".", Ino: in.NodeId, Mode: syscall.S_IFDIR}, {Name: "..", Mode: syscall.S_IFDIR}}, fuseEntries(ents)...)
	for i := in.Offset; i < uint64(len(all)); i++ {
		de := all[i]
		de.Off = i + 1
		eo, ok := addDirEntry(out, de, plus)
		if !ok {
			break
		}
		if full && i >= 2 {
			var st fuse.Status
			if e := ents[i-2]; e.Node != nil {
				st = v.entry(*e.Node, eo)
			} else {
				st = v.lookup(in.NodeId, de.Name, eo)
			}
			if st != fuse.OK {
				// A file that cannot be reconstructed is listed without
				// attributes; its LOOKUP reports the error.
				*eo = fuse.EntryOut{}
			} else if l != nil && eo.Attr.Mode&syscall.S_IFMT == syscall.S_IFREG && eo.Attr.Size <= maxPush {
				l.pending = append(l.pending, eo.NodeId)
			}
		}
	}
	return fuse.OK
}
