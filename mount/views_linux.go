//go:build linux

package mount

// The control directory (control.go: stats and the views of package
// hgview) in go-fuse's two APIs: how the kernel may cache its nodes,
// shared by both, and its nodes in the node API of repository mounts
// (viewNode). The raw adapter of cache mounts serves it through
// virtualDir (virtual_linux.go). MOUNTPOINT/.hgfs stays out of the root's
// listings, so hg status, find, tar and du never see it (tested with hg
// status --all in a cache mount holding a checkout); inside it
// everything is listed. Both map errors with errnoOf.
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
// virtualDir.push in the cache mount's raw adapter), so the first read(2)
// sends no READ either: a first walk costs the READDIRPLUS requests and
// the reconstruction, a second walk nothing (it was LOOKUP, OPEN, READ
// and RELEASE per file, then OPEN and RELEASE with the page stored at
// OPEN). Opening a changeset directory also asks hgview to reconstruct
// the next level's files in the background (View.Prefetch), so the
// walker's READDIRPLUS of a subdirectory mostly finds them cached.

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// fixedTimeout is how long the kernel may keep entries and attributes of
// view nodes that cannot change (hgview.Node.Fixed): the files of a
// changeset, revlog revisions, .hgfs/rev/FULLNODE. Names that move (tip,
// bookmarks, branches, numbers, the text files, stats, the control
// directory) get entryTimeout.
const fixedTimeout = time.Hour

// ctlEntryTimeout is how long the kernel may keep the name binding of x.
func ctlEntryTimeout(x ctlNode) time.Duration {
	if x.fixed() {
		return fixedTimeout
	}
	return entryTimeout
}

// ctlAttrTimeout is how long the kernel may keep x's attributes: a file
// whose content moves is refreshed at every read(2) (movingTimeout).
func ctlAttrTimeout(x ctlNode) time.Duration {
	if x.moving() {
		return movingTimeout
	}
	return ctlEntryTimeout(x)
}

// ctlOpenFlags: pages of immutable content outlive the handle; the rest
// (stats, the text files, revlog indexes) is read directly, so content
// regenerated since the last stat is never cut at a stale size. Nothing
// is written, so close(2) needs no FLUSH round trip.
func ctlOpenFlags(x ctlNode) uint32 {
	if x.fixed() {
		return fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH
	}
	return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH
}

// ctlDirOpenFlags lets the kernel cache the listing of a directory that
// cannot change (a changeset's), so a second walk sends no READDIR.
func ctlDirOpenFlags(x ctlNode) uint32 {
	if x.fixed() {
		return fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

// fillCtlAttr converts a control node's attributes for the kernel.
func fillCtlAttr(a fsnode.Attr, out *fuse.Attr) {
	*out = fuse.Attr{
		Ino: uint64(a.Ino), Size: a.Size, Blocks: a.Blocks, Mode: a.Mode, Nlink: a.Nlink,
		Owner: fuse.Owner{Uid: a.Uid, Gid: a.Gid}, Blksize: 4096,
	}
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

// fuseEntries converts a control directory listing.
func fuseEntries(ents []ctlEntry) []fuse.DirEntry {
	out := make([]fuse.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode}
	}
	return out
}

// maxPush bounds the content Open stores in the kernel's page cache
// ahead of the reads: one notification message, well below the
// negotiated maximum write (1 MiB, mountOptions); larger files are read
// in READ requests as usual, whose cost is small beside their size.
const maxPush = 128 << 10

// --- the node API (repository mounts), below repoRoot ---

// viewNode is one node of the control directory in go-fuse's node tree:
// the directory itself (persistent, under repoRoot), stats or a view
// node.
type viewNode struct {
	gofs.Inode
	c *control
	x ctlNode

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
	x, err := vn.c.lookup(vn.x, name)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	return vn.child(ctx, x, out)
}

// child is lookup of a child already found, x.
func (vn *viewNode) child(ctx context.Context, x ctlNode, out *fuse.EntryOut) (*gofs.Inode, []byte, syscall.Errno) {
	a, data, err := vn.c.attr(x)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	fillCtlAttr(a, &out.Attr)
	out.SetEntryTimeout(ctlEntryTimeout(x))
	out.SetAttrTimeout(ctlAttrTimeout(x))
	child := &viewNode{c: vn.c, x: x}
	return vn.NewInode(ctx, child, gofs.StableAttr{Mode: a.Mode & syscall.S_IFMT, Ino: uint64(a.Ino)}), data, 0
}

func (vn *viewNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents, err := vn.c.entries(vn.x)
	if err != nil {
		return nil, errnoOf(err)
	}
	return gofs.NewListDirStream(fuseEntries(ents)), 0
}

func (vn *viewNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a, _, err := vn.c.attr(vn.x)
	if err != nil {
		return errnoOf(err)
	}
	a.Ino = fsnode.Ino(vn.StableAttr().Ino)
	fillCtlAttr(a, &out.Attr)
	out.SetTimeout(ctlAttrTimeout(vn.x))
	return 0
}

// Read serves a READ: through the handle Open made, or without one
// (no_open) from the node.
func (vn *viewNode) Read(ctx context.Context, f gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(gofs.FileReader).Read(ctx, dest, off)
	}
	data, err := vn.c.readRange(vn.x, uint64(off), uint32(len(dest)))
	if err != nil {
		return nil, errnoOf(err)
	}
	return fuse.ReadResultData(data), 0
}

// OnForget drops what the node's moving content kept.
func (vn *viewNode) OnForget() { vn.c.served.forget(vn.c.ino(vn.x)) }

func (vn *viewNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fl := ctlOpenFlags(vn.x)
	if vn.pushed.Load() && flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		// The kernel holds the pages (unless it dropped them since, when
		// it asks READ, which reconstructs): opening again costs no
		// reconstruction, even once the view's cache has let it go.
		return lazyHandle{c: vn.c, x: vn.x}, fl, 0
	}
	data, err := vn.c.open(vn.x, int(flags))
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	if fl&fuse.FOPEN_KEEP_CACHE != 0 && len(data) <= maxPush {
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
	c *control
	x ctlNode
}

var _ gofs.FileReader = lazyHandle{}

func (h lazyHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	data, err := h.c.read(h.x)
	if err != nil {
		return nil, errnoOf(err)
	}
	return bytesHandle(data).Read(ctx, dest, off)
}

type bytesHandle []byte

var _ gofs.FileReader = bytesHandle(nil)

func (b bytesHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return readAt(b, uint64(off), uint32(len(dest))), 0
}

// OpendirHandle lists the directory once per open, into a handle whose
// READDIRPLUS entries carry no attributes (as the raw adapter's): a
// listing never reconstructs the files it names.
func (vn *viewNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	ents, err := vn.c.entries(vn.x)
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	if vn.x.n != nil {
		if v, err := vn.c.views.view(); err == nil {
			v.Prefetch(vn.x.n) // the next level, while this one is read
		}
	}
	return &viewDirHandle{dir: vn, ents: ents, list: fuseEntries(ents)}, ctlDirOpenFlags(vn.x), 0
}

// viewDirHandle is an open view directory: a fixed list of entries.
type viewDirHandle struct {
	dir  *viewNode
	mu   sync.Mutex
	ents []ctlEntry
	list []fuse.DirEntry // ents for the kernel
	pos  int

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
	if d.pos >= len(d.list) {
		return nil, 0
	}
	e := d.list[d.pos]
	d.pos++
	e.Off = uint64(d.pos)
	return &e, 0
}

func (d *viewDirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextRequestLocked(ctx)
	d.pos = int(min(off, uint64(len(d.list))))
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
	if n := d.dir.x.n; n == nil || !n.ListsFixed() {
		return nil, syscall.ENOENT
	}
	// go-fuse looks up each entry right after Readdirent returned it:
	// the listing already found its node.
	d.mu.Lock()
	var x *ctlNode
	if i := d.pos - 1; i >= 0 && i < len(d.ents) && d.ents[i].Name == name {
		x = d.ents[i].Node
	}
	d.mu.Unlock()
	var child *gofs.Inode
	var data []byte
	var errno syscall.Errno
	if x != nil {
		child, data, errno = d.dir.child(ctx, *x, out)
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
	target, err := vn.c.readlink(vn.x)
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
