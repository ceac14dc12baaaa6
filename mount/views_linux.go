//go:build linux

package mount

// The .hgfs views (package hgview) in both mount kinds. MOUNTPOINT/.hgfs
// stays out of the root's listings, as it was for stats alone, so hg
// status, find, tar and du never see it (tested with hg status --all in a
// cache mount holding a checkout); inside it everything is listed. The
// raw adapter (cache mounts) routes every virtual inode number but the
// control directory's and stats' here through virtualDir; the repository
// view's node tree has a viewNode as its control directory. Both map
// errors with errnoOf.
//
// Kernel caching: a changeset's files and directories and revlog
// revisions never change, so their entries and attributes are cached for
// an hour, their pages outlive a handle (FOPEN_KEEP_CACHE) and their
// listings are cached (FOPEN_CACHE_DIR). Names that move (rev/tip,
// rev/BOOKMARK, rev/N, the text files, revlog indexes) get the mount's
// one-second entry timeouts; the text files and indexes, whose content
// moves under a fixed name, report the generation of their content
// recorded at every GETATTR, never cache their attributes and get a new
// mtime whenever their content changes, so a read(2) sees the new
// content whole (servedFiles, noopen_linux.go); on a kernel that
// requires OPEN they are read with direct I/O.
//
// Round trips of a tree walk (grep -r of .hgfs/rev/REV, counted with
// --debug-fuse on the 20,000-file bench repository): READDIRPLUS of a
// changeset's directory answers every entry with its node and attributes
// (hgview.Node.ListsFixed), so the kernel sends no LOOKUP per file. The
// mount declines OPEN (no_open), so opening and closing cost nothing.
// Once the kernel has taken a READDIRPLUS reply, the listed files'
// content (reconstructed for their sizes already) is stored in its page
// cache (NOTIFY_STORE: viewDirHandle.pushLocked in the repository view,
// views.push in the cache mount's raw adapter), so the first read(2)
// sends no READ either: a first walk costs the READDIRPLUS requests and
// the reconstruction, a second walk nothing (it was LOOKUP, OPEN, READ
// and RELEASE per file, then OPEN and RELEASE with the page stored at
// OPEN). Opening a changeset directory also asks hgview to reconstruct
// the next level's files in the background (View.Prefetch), so the
// walker's READDIRPLUS of a subdirectory mostly finds them cached.

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/hgview"
)

// fixedTimeout is how long the kernel may keep entries and attributes of
// view nodes that cannot change (hgview.Node.Fixed): the files of a
// changeset, revlog revisions, .hgfs/rev/FULLNODE. Names that move (tip,
// bookmarks, branches, numbers, the text files) get entryTimeout.
const fixedTimeout = time.Hour

// views serves MOUNTPOINT/.hgfs/ beside "stats": hgview's tree of the
// repository at the mount's root. The view is opened on first use, so a
// cache mounted empty shows it once a repository has been cloned or
// initialised into it; until then its names are not found.
type views struct {
	open   func() (*hgview.View, error)
	served servedFiles // the content of the moving files last reported (noopen_linux.go)

	// store puts a file's content in the kernel's page cache (raw
	// adapter only; nil until the server exists).
	store func(ino uint64, data []byte) bool

	mu     sync.Mutex
	v      *hgview.View
	nextFh uint64
	dirs   map[uint64]*listing // open changeset directories (raw adapter)
}

// listing is an open changeset directory of the raw adapter: the files
// its last READDIRPLUS reply linked, whose content is stored in the page
// cache once the kernel has taken that reply (see viewDirHandle, the
// node API's twin).
type listing struct {
	mu      sync.Mutex
	pending []uint64
}

// cacheViews shows the repository whose .hg is at the root of a cache.
func cacheViews(fsys *fsnode.FS) *views {
	return &views{open: func() (*hgview.View, error) {
		hg, err := fs.Sub(fsys.FS(), ".hg")
		if err != nil {
			return nil, err
		}
		return hgview.Open(hg, hgview.Options{RootIno: virtualDirIno})
	}}
}

func (w *views) view() (*hgview.View, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.v != nil {
		return w.v, nil
	}
	v, err := w.open()
	if err != nil {
		// No repository (yet): its names do not exist.
		return nil, fmt.Errorf("%w: .hgfs views: %v", syscall.ENOENT, err)
	}
	w.v = v
	return v, nil
}

// close releases the view's revlogs once the mount is gone.
func (w *views) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.v != nil {
		w.v.Close()
		w.v = nil
	}
}

// owns reports whether a virtual inode number is the views' (everything
// virtual but the control directory and stats).
func (w *views) owns(ino uint64) bool {
	return ino >= virtualBase && ino != virtualDirIno && ino != virtualStatsIno
}

func (w *views) node(ino uint64) (*hgview.View, *hgview.Node, fuse.Status) {
	v, err := w.view()
	if err != nil {
		return nil, nil, toStatus(err)
	}
	n, ok := v.Node(ino)
	if !ok {
		return nil, nil, fuse.ENOENT // forgotten: the kernel never asks
	}
	return v, n, fuse.OK
}

func timeoutOf(n *hgview.Node) time.Duration {
	if n.Fixed() {
		return fixedTimeout
	}
	return entryTimeout
}

// attrTimeoutOf is how long the kernel may keep n's attributes: a file
// whose content moves is refreshed at every read(2) (movingTimeout).
func attrTimeoutOf(n *hgview.Node) time.Duration {
	if !n.Fixed() && !n.IsDir() {
		return movingTimeout
	}
	return timeoutOf(n)
}

// attr returns n's attributes; a file whose content moves reports the
// generation recorded now (servedFiles).
func (w *views) attr(v *hgview.View, n *hgview.Node) (hgview.Attr, error) {
	a, _, err := w.attrContent(v, n)
	return a, err
}

// attrContent is attr with the content of a fixed file (nil otherwise),
// which a READDIRPLUS listing pushes.
func (w *views) attrContent(v *hgview.View, n *hgview.Node) (hgview.Attr, []byte, error) {
	if n.Fixed() || n.IsDir() {
		return v.GetAttrContent(n)
	}
	// Not GetAttr, which would generate the content a second time: a
	// moving file is a plain read-only file (hgview's text files and
	// revlog indexes).
	sv, err := w.generate(v, n)
	if err != nil {
		return hgview.Attr{}, nil, err
	}
	return hgview.Attr{Ino: n.Ino, Mode: syscall.S_IFREG | 0o444, Nlink: 1, Size: uint64(len(sv.data)), Mtime: sv.mtime}, nil, nil
}

// generate records the current content of n, a file whose content moves.
func (w *views) generate(v *hgview.View, n *hgview.Node) (*served, error) {
	data, err := v.Content(n)
	if err != nil {
		return nil, err
	}
	return w.served.update(n.Ino, data), nil
}

// data returns what a READ of n reads: its content, or for a file whose
// content moves the generation its attributes last reported.
func (w *views) data(v *hgview.View, n *hgview.Node) ([]byte, error) {
	if n.Fixed() {
		return v.Content(n)
	}
	sv := w.served.get(n.Ino)
	if sv == nil {
		var err error
		if sv, err = w.generate(v, n); err != nil {
			return nil, err
		}
	}
	return sv.data, nil
}

func fillViewAttr(a hgview.Attr, uid, gid uint32, out *fuse.Attr) {
	*out = fuse.Attr{
		Ino: a.Ino, Size: a.Size, Blocks: (a.Size + 511) / 512, Mode: a.Mode, Nlink: a.Nlink,
		Owner: fuse.Owner{Uid: uid, Gid: gid}, Blksize: 4096,
	}
	out.SetTimes(&a.Mtime, &a.Mtime, &a.Mtime)
}

// --- the raw adapter (cache mounts), called by virtualDir ---

func (w *views) lookup(parent uint64, name string, uid, gid uint32, out *fuse.EntryOut) fuse.Status {
	v, dir, st := w.node(parent)
	if st != fuse.OK {
		return st
	}
	n, err := v.Lookup(dir, name)
	if err != nil {
		return toStatus(err)
	}
	a, err := w.attr(v, n)
	if err != nil {
		return toStatus(err)
	}
	if err := v.Remember(n); err != nil {
		return toStatus(err)
	}
	*out = fuse.EntryOut{NodeId: n.Ino}
	out.SetEntryTimeout(timeoutOf(n))
	out.SetAttrTimeout(attrTimeoutOf(n))
	fillViewAttr(a, uid, gid, &out.Attr)
	return fuse.OK
}

func (w *views) forget(ino, nlookup uint64) {
	w.mu.Lock()
	v := w.v
	w.mu.Unlock()
	if v != nil && v.Forget(ino, nlookup) {
		w.served.forget(ino)
	}
}

func (w *views) getAttr(ino uint64, uid, gid uint32, out *fuse.AttrOut) fuse.Status {
	v, n, st := w.node(ino)
	if st != fuse.OK {
		return st
	}
	a, err := w.attr(v, n)
	if err != nil {
		return toStatus(err)
	}
	out.SetTimeout(attrTimeoutOf(n))
	fillViewAttr(a, uid, gid, &out.Attr)
	return fuse.OK
}

// content returns what an open file reads and the FOPEN flags: pages of
// immutable content outlive the handle; the rest is read directly, so a
// text file regenerated since the last stat is never cut at a stale size.
func (w *views) content(ino uint64) ([]byte, uint32, fuse.Status) {
	v, n, st := w.node(ino)
	if st != fuse.OK {
		return nil, 0, st
	}
	if n.IsDir() {
		return nil, 0, fuse.EISDIR
	}
	data, err := w.data(v, n)
	if err != nil {
		return nil, 0, toStatus(err)
	}
	return data, fileOpenFlags(n), fuse.OK
}

// read answers a READ without a handle (no_open).
func (w *views) read(in *fuse.ReadIn) (fuse.ReadResult, fuse.Status) {
	v, n, st := w.node(in.NodeId)
	if st != fuse.OK {
		return nil, st
	}
	if n.IsDir() {
		return nil, fuse.EISDIR
	}
	data, err := w.data(v, n)
	if err != nil {
		return nil, toStatus(err)
	}
	return readAt(data, in.Offset, in.Size), fuse.OK
}

// fileOpenFlags: pages of immutable content outlive the handle; the rest
// is read directly, so a text file regenerated since the last stat is
// never cut at a stale size. Nothing is written, so close(2) needs no
// FLUSH round trip.
func fileOpenFlags(n *hgview.Node) uint32 {
	if n.Fixed() {
		return fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH
	}
	return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH
}

// dirOpenFlags lets the kernel cache the listing of a directory that
// cannot change (a changeset's), so a second walk sends no READDIR.
func dirOpenFlags(n *hgview.Node) uint32 {
	if n.Fixed() {
		return fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

func (w *views) openDir(ino uint64, out *fuse.OpenOut) fuse.Status {
	if !w.owns(ino) {
		return fuse.OK // the control directory
	}
	v, n, st := w.node(ino)
	if st != fuse.OK {
		return st
	}
	if !n.IsDir() {
		return fuse.ENOTDIR
	}
	out.OpenFlags = dirOpenFlags(n)
	if n.ListsFixed() {
		v.Prefetch(n) // the next level, while this one is read
		w.mu.Lock()
		w.nextFh++
		out.Fh = w.nextFh
		if w.dirs == nil {
			w.dirs = map[uint64]*listing{}
		}
		w.dirs[out.Fh] = &listing{}
		w.mu.Unlock()
	}
	return fuse.OK
}

// releaseDir stores what the last reply listed and forgets the listing.
func (w *views) releaseDir(fh uint64) {
	w.mu.Lock()
	l := w.dirs[fh]
	delete(w.dirs, fh)
	w.mu.Unlock()
	if l != nil {
		l.mu.Lock()
		w.push(l)
		l.mu.Unlock()
	}
}

// push stores the content of the files l's previous reply linked in the
// kernel's page cache (see viewDirHandle.pushLocked); l.mu is held.
func (w *views) push(l *listing) {
	inos := l.pending
	l.pending = nil
	if w.store == nil || len(inos) == 0 {
		return
	}
	v, err := w.view()
	if err != nil {
		return
	}
	for _, ino := range inos {
		n, ok := v.Node(ino)
		if !ok {
			continue // forgotten meanwhile
		}
		if data, ok := v.Cached(n); ok && len(data) <= maxPush {
			w.store(ino, data)
		}
	}
}

func (w *views) readlink(ino uint64) ([]byte, fuse.Status) {
	v, n, st := w.node(ino)
	if st != fuse.OK {
		return nil, st
	}
	target, err := v.Readlink(n)
	if err != nil {
		return nil, toStatus(err)
	}
	return []byte(target), fuse.OK
}

// entries lists a view directory; for the control directory itself,
// "stats" comes first.
func (w *views) entries(ino uint64) ([]fuse.DirEntry, fuse.Status) {
	var out []fuse.DirEntry
	if ino == virtualDirIno {
		out = append(out, fuse.DirEntry{Name: "stats", Ino: virtualStatsIno, Mode: syscall.S_IFREG})
	}
	v, n, st := w.node(ino)
	if st == fuse.ENOENT && ino == virtualDirIno {
		return out, fuse.OK // no repository yet: stats alone
	}
	if st != fuse.OK {
		return nil, st
	}
	ents, err := v.ReadDir(n)
	if err != nil {
		return nil, toStatus(err)
	}
	for _, e := range ents {
		out = append(out, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode})
	}
	return out, fuse.OK
}

// readDir answers READDIR and READDIRPLUS from offset in.Offset: "." and
// ".." at offsets 1 and 2, then the entries. In a changeset's tree
// (hgview.Node.ListsFixed) READDIRPLUS entries are full lookups (each one
// a lookup the kernel will FORGET), so a walk sends no LOOKUP per file;
// elsewhere they carry no node ID, and the kernel looks each up only
// when it is used, so listing rev/ or a revlog reconstructs nothing.
func (w *views) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	ents, st := w.entries(in.NodeId)
	if st != fuse.OK {
		return st
	}
	full := false
	if plus && w.owns(in.NodeId) {
		if _, dir, st := w.node(in.NodeId); st == fuse.OK {
			full = dir.ListsFixed()
		}
	}
	w.mu.Lock()
	l := w.dirs[in.Fh]
	w.mu.Unlock()
	if l != nil {
		// A new request on the handle: the kernel took the previous
		// reply and linked its nodes.
		l.mu.Lock()
		defer l.mu.Unlock()
		w.push(l)
	}
	uid, gid := ownerUID, ownerGID
	all := append([]fuse.DirEntry{{Name: ".", Ino: in.NodeId, Mode: syscall.S_IFDIR}, {Name: "..", Mode: syscall.S_IFDIR}}, ents...)
	for i := in.Offset; i < uint64(len(all)); i++ {
		de := all[i]
		de.Off = i + 1
		if !plus {
			if !out.AddDirEntry(de) {
				break
			}
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			break
		}
		if full && i >= 2 {
			if w.lookup(in.NodeId, de.Name, uid, gid, eo) != fuse.OK {
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

// --- the node API (repository views), below repoRoot ---

// viewNode is one hgview node in go-fuse's node tree. The control
// directory is a viewNode of the view's root, which also holds "stats".
type viewNode struct {
	gofs.Inode
	w     *views
	n     *hgview.Node
	stats *gofs.Inode // the control directory only

	// pushed is set once the node's whole content was stored in the
	// kernel's page cache (see Open).
	pushed atomic.Bool
}

var (
	_ gofs.NodeLookuper    = (*viewNode)(nil)
	_ gofs.NodeReaddirer   = (*viewNode)(nil)
	_ gofs.NodeGetattrer   = (*viewNode)(nil)
	_ gofs.NodeOpener      = (*viewNode)(nil)
	_ gofs.NodeReadlinker  = (*viewNode)(nil)
	_ gofs.NodeReader      = (*viewNode)(nil)
	_ gofs.NodeOnForgetter = (*viewNode)(nil)

	_ gofs.NodeOpendirHandler = (*viewNode)(nil)
)

func (vn *viewNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	child, _, errno := vn.lookup(ctx, name, out)
	return child, errno
}

// lookup is Lookup that also returns a fixed file's content (nil
// otherwise), which a READDIRPLUS listing pushes.
func (vn *viewNode) lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, []byte, syscall.Errno) {
	if vn.stats != nil && name == "stats" {
		var a fuse.AttrOut
		vn.stats.Operations().(*statsNode).Getattr(ctx, nil, &a)
		out.Attr = a.Attr
		return vn.stats, nil, 0
	}
	v, dir, err := vn.resolve()
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	n, err := v.Lookup(dir, name)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	return vn.lookupNode(ctx, v, n, out)
}

// lookupNode is lookup of a child already found, n.
func (vn *viewNode) lookupNode(ctx context.Context, v *hgview.View, n *hgview.Node, out *fuse.EntryOut) (*gofs.Inode, []byte, syscall.Errno) {
	a, data, err := vn.w.attrContent(v, n)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	fillViewAttr(a, ownerUID, ownerGID, &out.Attr)
	out.SetEntryTimeout(timeoutOf(n))
	out.SetAttrTimeout(attrTimeoutOf(n))
	child := &viewNode{w: vn.w, n: n}
	return vn.NewInode(ctx, child, gofs.StableAttr{Mode: a.Mode & syscall.S_IFMT, Ino: n.Ino}), data, 0
}

func (vn *viewNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	list, _, errno := vn.list()
	if errno != 0 {
		return nil, errno
	}
	return gofs.NewListDirStream(list), 0
}

// list is the directory's entries and, beside each, the view node a
// lookup of its name finds where the listing made it (nil otherwise).
func (vn *viewNode) list() ([]fuse.DirEntry, []*hgview.Node, syscall.Errno) {
	var list []fuse.DirEntry
	var nodes []*hgview.Node
	if vn.stats != nil {
		list = append(list, fuse.DirEntry{Name: "stats", Mode: syscall.S_IFREG, Ino: vn.stats.StableAttr().Ino})
		nodes = append(nodes, nil)
	}
	v, dir, err := vn.resolve()
	if vn.stats != nil && err != nil {
		return list, nodes, 0 // no repository: stats alone
	}
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	ents, err := v.ReadDir(dir)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	for _, e := range ents {
		list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode})
		nodes = append(nodes, e.Node())
	}
	return list, nodes, 0
}

func (vn *viewNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if vn.stats != nil {
		out.Mode, out.Nlink = syscall.S_IFDIR|0o555, 2
		out.Uid, out.Gid = ownerUID, ownerGID
		return 0
	}
	v, n, err := vn.resolve()
	if err != nil {
		return errnoOf(err)
	}
	a, err := vn.w.attr(v, n)
	if err != nil {
		return errnoOf(err)
	}
	a.Ino = vn.StableAttr().Ino
	fillViewAttr(a, ownerUID, ownerGID, &out.Attr)
	out.SetTimeout(attrTimeoutOf(n))
	return 0
}

// Read serves a READ: through the handle Open made, or without one
// (no_open) from the node.
func (vn *viewNode) Read(ctx context.Context, f gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(gofs.FileReader).Read(ctx, dest, off)
	}
	v, n, err := vn.resolve()
	if err != nil {
		return nil, errnoOf(err)
	}
	if n.IsDir() {
		return nil, syscall.EISDIR
	}
	data, err := vn.w.data(v, n)
	if err != nil {
		return nil, errnoOf(err)
	}
	return readAt(data, uint64(off), uint32(len(dest))), 0
}

// OnForget drops what the node's moving content kept.
func (vn *viewNode) OnForget() {
	if vn.n != nil {
		vn.w.served.forget(vn.n.Ino)
	}
}

func (vn *viewNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	v, err := vn.w.view()
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	if vn.n.IsDir() {
		return nil, 0, syscall.EISDIR
	}
	fl := fileOpenFlags(vn.n)
	if vn.pushed.Load() {
		// The kernel holds the pages (unless it dropped them since, when
		// it asks READ, which reconstructs): opening again costs no
		// reconstruction, even once the view's cache has let it go.
		return lazyHandle{v: v, n: vn.n}, fl, 0
	}
	data, err := vn.w.data(v, vn.n)
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	if fl&fuse.FOPEN_KEEP_CACHE != 0 && len(data) <= maxPush && !vn.pushed.Load() {
		// Store the content in the kernel's page cache before the OPEN
		// reply: the reader's first read(2) then finds it there, and
		// the READ round trip it would cost is saved (half of what a
		// first grep -r of a tree asked the daemon per file). Kept
		// pages outlive the handle (FOPEN_KEEP_CACHE), so once is
		// enough. A failed store costs nothing but that READ, which
		// the handle still serves, so its error is not the open's.
		if vn.WriteCache(0, data) == 0 {
			vn.pushed.Store(true)
		}
	}
	return bytesHandle(data), fl, 0
}

// lazyHandle reads an immutable view file, reconstructing it (or taking
// it from the view's cache) only when a READ asks.
type lazyHandle struct {
	v *hgview.View
	n *hgview.Node
}

var _ gofs.FileReader = lazyHandle{}

func (h lazyHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	data, err := h.v.Content(h.n)
	if err != nil {
		return nil, errnoOf(err)
	}
	return bytesHandle(data).Read(ctx, dest, off)
}

// maxPush bounds the content Open stores in the kernel's page cache
// ahead of the reads: one notification message, well below the
// negotiated maximum write (1 MiB, mountOptions); larger files are read
// in READ requests as usual, whose cost is small beside their size.
const maxPush = 128 << 10

// OpendirHandle lists the directory once per open, into a handle whose
// READDIRPLUS entries carry no attributes (as the raw adapter's): a
// listing never reconstructs the files it names.
func (vn *viewNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	ents, nodes, errno := vn.list()
	if errno != 0 {
		return nil, 0, errno
	}
	d := &viewDirHandle{dir: vn, ents: ents, nodes: nodes}
	var fl uint32
	if vn.n != nil {
		fl = dirOpenFlags(vn.n)
		if v, err := vn.w.view(); err == nil {
			v.Prefetch(vn.n) // the next level, while this one is read
		}
	}
	return d, fl, 0
}

// viewDirHandle is an open view directory: a fixed list of entries.
type viewDirHandle struct {
	dir   *viewNode
	mu    sync.Mutex
	ents  []fuse.DirEntry
	nodes []*hgview.Node // beside ents: what a lookup finds, if known
	pos   int

	// Files a READDIRPLUS reply linked, whose content is stored in the
	// kernel's page cache once the kernel has taken the reply (push).
	req     context.Context // the request they were listed in
	pending []pendingPush
}

var (
	_ gofs.FileReaddirenter = (*viewDirHandle)(nil)
	_ gofs.FileSeekdirer    = (*viewDirHandle)(nil)
	_ gofs.FileLookuper     = (*viewDirHandle)(nil)
	_ gofs.FileReleaser     = (*viewDirHandle)(nil)
)

func (d *viewDirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextRequestLocked(ctx)
	if d.pos >= len(d.ents) {
		return nil, 0
	}
	e := d.ents[d.pos]
	d.pos++
	e.Off = uint64(d.pos)
	return &e, 0
}

func (d *viewDirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextRequestLocked(ctx)
	d.pos = int(min(off, uint64(len(d.ents))))
	return 0
}

// Release pushes what the last reply listed.
func (d *viewDirHandle) Release(ctx context.Context) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pushLocked()
	return 0
}

// nextRequestLocked notices a new READDIR(PLUS) request on the handle:
// the kernel has taken the previous reply, so the nodes it linked exist
// and their pages can be stored.
func (d *viewDirHandle) nextRequestLocked(ctx context.Context) {
	if ctx != d.req {
		d.pushLocked()
		d.req = ctx
	}
}

// pushLocked stores the content of the files the previous reply linked
// in the kernel's page cache. In a changeset's tree every listed file
// was reconstructed for its size already (Lookup kept the bytes), so
// this costs a copy, and spares the READ round trip each file's first
// read(2) would send: the reader of a tree (grep -r, diff -r, tar) finds
// the pages there, as an opener finds them after viewNode.Open stores
// them. A store that fails (the node was forgotten meanwhile) costs
// nothing but that READ.
func (d *viewDirHandle) pushLocked() {
	pending := d.pending
	d.pending = nil
	for _, p := range pending {
		vn, ok := p.child.Operations().(*viewNode)
		if !ok || vn.pushed.Load() {
			continue
		}
		if p.child.WriteCache(0, p.data) == 0 {
			vn.pushed.Store(true)
		}
	}
}

// Lookup answers READDIRPLUS's per-entry lookups. In a changeset's tree
// (hgview.Node.ListsFixed) it is a full lookup, so the kernel links
// every entry with its attributes for an hour and a walk sends no LOOKUP
// per file; the files' content is then pushed (pushLocked). Elsewhere it
// answers "no attributes" (the kernel then links nothing and looks the
// name up when it is used), so listing rev/ or a revlog reconstructs
// nothing.
func (d *viewDirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if d.dir.n == nil || !d.dir.n.ListsFixed() {
		return nil, syscall.ENOENT
	}
	// go-fuse looks up each entry right after Readdirent returned it:
	// the listing already found its node.
	d.mu.Lock()
	var n *hgview.Node
	if i := d.pos - 1; i >= 0 && i < len(d.ents) && d.ents[i].Name == name {
		n = d.nodes[i]
	}
	d.mu.Unlock()
	var child *gofs.Inode
	var data []byte
	var errno syscall.Errno
	if n != nil {
		v, err := d.dir.w.view()
		if err != nil {
			return nil, errnoOf(err)
		}
		child, data, errno = d.dir.lookupNode(ctx, v, n, out)
	} else {
		child, data, errno = d.dir.lookup(ctx, name, out)
	}
	if errno == 0 && data != nil && out.Attr.Mode&syscall.S_IFMT == syscall.S_IFREG && len(data) <= maxPush {
		d.mu.Lock()
		d.pending = append(d.pending, pendingPush{child: child, data: data})
		d.mu.Unlock()
	}
	return child, errno
}

// pendingPush is a file a READDIRPLUS reply links and the content to
// store in the kernel's page cache once the kernel has taken the reply.
// data is the view's cached text (immutable), held only until then.
type pendingPush struct {
	child *gofs.Inode
	data  []byte
}

func (vn *viewNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	v, err := vn.w.view()
	if err != nil {
		return nil, errnoOf(err)
	}
	target, err := v.Readlink(vn.n)
	if err != nil {
		return nil, errnoOf(err)
	}
	return []byte(target), 0
}

// repoViewRootIno numbers the control directory of a repository view.
// go-fuse hands out its automatic numbers from 2^63 up (the root's
// persistent children); this stays clear of them and of hgview's hashed
// numbers (from 2^63+2^62).
const repoViewRootIno = virtualBase + 1<<61

// repoViews shows the repository at root (an ordinary one on disk).
func repoViews(root string) *views {
	return &views{open: func() (*hgview.View, error) {
		return hgview.OpenDir(root, hgview.Options{RootIno: repoViewRootIno})
	}}
}

// resolve returns the view and the node vn shows (the control directory
// is created before the view is opened).
func (vn *viewNode) resolve() (*hgview.View, *hgview.Node, error) {
	v, err := vn.w.view()
	if err != nil {
		return nil, nil, err
	}
	if vn.n == nil {
		return v, v.Root(), nil
	}
	return v, vn.n, nil
}
