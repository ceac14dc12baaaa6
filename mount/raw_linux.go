//go:build linux

package mount

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/revlog"
)

// Kernel cache lifetimes of cache nodes. The cache changes only through
// this mount (the daemon holds it open exclusively), and the kernel itself
// updates or invalidates what its own requests change: a create or unlink
// replaces the dentry, a write updates the size and drops the cached
// times, a directory's attributes are dropped when an entry in it
// changes. So positive and negative entries and attributes are kept for
// an hour: every expiry costs a LOOKUP or GETATTR round trip, and a walk
// of a large tree (find, then cat; hg's store walk, then its checkout)
// takes longer than a few seconds. The hour bounds the damage should the
// premise ever stop holding. The .hgfs control directory and its views
// that follow commits use entryTimeout instead (ctlEntryTimeout).
const nodeTimeout = time.Hour

// entryTimeout is the kernel cache lifetime of the control directory's
// names and attributes (.hgfs, and the views whose names move as commits
// are made; see ctlEntryTimeout and ctlAttrTimeout).
const entryTimeout = time.Second

// openFlags are the kernel's instructions for every open file.
//
// FOPEN_KEEP_CACHE: data changes only through this mount, and the kernel
// drops the pages it writes through, so the page cache may outlive a
// handle.
//
// FOPEN_NOFLUSH: close(2) does not wait for a FLUSH round trip, so it
// costs what it costs on a local filesystem: this is the per-file cost
// hgfs exists to remove. FLUSH would only report a background commit that
// failed since the last write; fsync reports that, and every later
// mutating request fails with EIO, as a local filesystem reports a failed
// writeback on fsync rather than on close. POSIX locks need no FLUSH
// either: the kernel keeps them (see mountOptions).
const openFlags = fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH

// NodeTimeout and OpenFlags are nodeTimeout and openFlags, for a file
// system that answers the kernel as cache mounts do (the bench's FUSE
// floor).
const (
	NodeTimeout = nodeTimeout
	OpenFlags   = openFlags
)

// rawFS is the adapter: one method per FUSE opcode, each converting its
// arguments, calling fsnode and mapping the error through toStatus.
type rawFS struct {
	fuse.RawFileSystem // ENOSYS for what hgfs does not implement

	fsys   *fsnode.FS
	root   fsnode.Ino
	virt   *virtualDir
	kernel *kernel

	infoXattr  []byte               // InfoXattr's value; nil: none
	updating   sync.Mutex           // one UpdateXattr request at a time
	updates    atomic.Int64         // UpdateXattr requests done
	fullChecks atomic.Int64         // of which checked every tracked file
	checked    map[revlog.Node]bool // changesets whose manifest passed worktree.Check (under updating)
	wc         wcWatch              // the working copy's watch (under updating)
}

var _ fuse.RawFileSystem = (*rawFS)(nil)

func newRawFS(fsys *fsnode.FS, info func() any) *rawFS {
	k := &kernel{}
	return &rawFS{
		RawFileSystem: fuse.NewDefaultRawFileSystem(),
		fsys:          fsys,
		root:          fsys.Root(),
		virt:          newVirtualDir(newControl(info, virtualDirIno, cacheViews(fsys))),
		kernel:        k,
	}
}

// Init learns the server, whose negotiated settings say whether OPEN may
// be declined (kernel.noOpen).
func (r *rawFS) Init(s *fuse.Server) {
	r.kernel.srv.Store(s)
	r.virt.store = func(ino uint64, data []byte) bool {
		return s.InodeNotifyStoreCache(ino, 0, data) == fuse.OK
	}
	r.RawFileSystem.Init(s)
}

// OnUnmount releases the .hgfs views' revlogs before the owner closes
// the cache.
func (r *rawFS) OnUnmount() { r.virt.c.close() }

// forgetAttr has the kernel drop the attributes it cached of nodeID
// (NOTIFY_INVAL_INODE of no pages: it takes no lock a request in flight
// on the node may hold), for a change the daemon made that the kernel
// does not know of: nodes' attributes are kept for nodeTimeout.
func (r *rawFS) forgetAttr(nodeID uint64) {
	if srv := r.kernel.srv.Load(); srv != nil {
		srv.InodeNotify(nodeID, -1, 0)
	}
}

// toStatus is the adapter's only error conversion.
func toStatus(err error) fuse.Status {
	return fuse.Status(errnoOf(err))
}

// reqContext turns go-fuse's per-request cancel channel (closed when the
// kernel sends INTERRUPT) into the context fsnode takes.
type reqContext struct{ cancel <-chan struct{} }

func (c reqContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c reqContext) Done() <-chan struct{}       { return c.cancel }
func (c reqContext) Value(any) any               { return nil }
func (c reqContext) Err() error {
	select {
	case <-c.cancel:
		return context.Canceled
	default:
		return nil
	}
}

func ctxOf(cancel <-chan struct{}) context.Context { return reqContext{cancel} }

// creatorCtx also tells fsnode who owns the inodes a request creates.
func creatorCtx(cancel <-chan struct{}, h *fuse.InHeader) context.Context {
	return fsnode.WithCaller(reqContext{cancel}, h.Uid, h.Gid)
}

// ino maps a kernel node ID to an fsnode inode: the kernel calls the root
// FUSE_ROOT_ID (1) whatever fsnode numbers it.
func (r *rawFS) ino(nodeID uint64) fsnode.Ino {
	if nodeID == fuse.FUSE_ROOT_ID {
		return r.root
	}
	return fsnode.Ino(nodeID)
}

func (r *rawFS) nodeID(ino fsnode.Ino) uint64 {
	if ino == r.root {
		return fuse.FUSE_ROOT_ID
	}
	return uint64(ino)
}

func (r *rawFS) fillAttr(a fsnode.Attr, out *fuse.Attr) {
	*out = fuse.Attr{
		Ino:     r.nodeID(a.Ino),
		Size:    a.Size,
		Blocks:  a.Blocks,
		Mode:    a.Mode,
		Nlink:   a.Nlink,
		Rdev:    uint32(a.Rdev),
		Owner:   fuse.Owner{Uid: a.Uid, Gid: a.Gid},
		Blksize: 4096,
	}
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

func (r *rawFS) fillEntry(a fsnode.Attr, out *fuse.EntryOut) {
	out.NodeId = r.nodeID(a.Ino)
	out.Generation = 0
	out.SetEntryTimeout(nodeTimeout)
	out.SetAttrTimeout(nodeTimeout)
	r.fillAttr(a, &out.Attr)
}

func (r *rawFS) String() string { return "hgfs" }

func (r *rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if r.virt.ownsName(h.NodeId, name) {
		return r.virt.lookup(h.NodeId, name, out)
	}
	a, err := r.fsys.Lookup(ctxOf(cancel), r.ino(h.NodeId), name)
	if errnoOf(err) == syscall.ENOENT {
		// A zero node ID with a timeout is a cacheable "no such entry".
		*out = fuse.EntryOut{}
		out.SetEntryTimeout(nodeTimeout)
		return fuse.OK
	}
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, out)
	return fuse.OK
}

func (r *rawFS) Forget(nodeID, nlookup uint64) {
	if r.virt.owns(nodeID) {
		r.virt.c.forget(nodeID, nlookup)
		return
	}
	r.fsys.Forget(r.ino(nodeID), nlookup)
}

func (r *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return r.virt.getAttr(in.NodeId, out)
	}
	a, err := r.fsys.GetAttr(ctxOf(cancel), r.ino(in.NodeId))
	if err != nil {
		return toStatus(err)
	}
	out.SetTimeout(nodeTimeout)
	r.fillAttr(a, &out.Attr)
	return fuse.OK
}

func (r *rawFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return fuse.EPERM
	}
	var sa fsnode.SetAttr
	if m, ok := in.GetMode(); ok {
		sa.Mode = &m
	}
	if uid, ok := in.GetUID(); ok {
		sa.Uid = &uid
	}
	if gid, ok := in.GetGID(); ok {
		sa.Gid = &gid
	}
	if size, ok := in.GetSize(); ok {
		sa.Size = &size
	}
	// GetATime/GetMTime resolve UTIME_NOW (FATTR_*_NOW); UTIME_OMIT
	// arrives as an absent FATTR_* bit.
	if t, ok := in.GetATime(); ok {
		sa.Atime = &t
	}
	if t, ok := in.GetMTime(); ok {
		sa.Mtime = &t
	}
	// FATTR_KILL_SUIDGID (FUSE_HANDLE_KILLPRIV_V2): a truncation by a
	// caller without CAP_FSETID, or any chown of a non-directory.
	ctx := ctxOf(cancel)
	if in.Valid&fuse.FATTR_KILL_SUIDGID != 0 {
		ctx = fsnode.WithKillPriv(ctx)
	}
	a, err := r.fsys.SetAttr(ctx, r.ino(in.NodeId), sa)
	if err != nil {
		return toStatus(err)
	}
	out.SetTimeout(nodeTimeout)
	r.fillAttr(a, &out.Attr)
	return fuse.OK
}

func (r *rawFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	if st := r.virt.refuse(in.NodeId, name); st != fuse.OK {
		return st
	}
	a, err := r.fsys.Mkdir(creatorCtx(cancel, &in.InHeader), r.ino(in.NodeId), name, in.Mode&07777)
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, out)
	return fuse.OK
}

func (r *rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if st := r.virt.refuse(in.NodeId, name); st != fuse.OK {
		return st
	}
	ctx, parent, mode, flags := creatorCtx(cancel, &in.InHeader), r.ino(in.NodeId), in.Mode&07777, int(in.Flags)
	if in.OpenFlags&fuse.OPEN_KILL_SUIDGID != 0 { // O_TRUNC without CAP_FSETID
		ctx = fsnode.WithKillPriv(ctx) // fsnode clears only a file that existed
	}
	var a fsnode.Attr
	var h fsnode.Handle
	var err error
	if r.kernel.noOpen() {
		// Once OPEN is declined the kernel sends no RELEASE for created
		// files either: the file is used without a handle, as an opened
		// one (the CREATE's kernel reference keeps it).
		a, err = r.fsys.CreateInode(ctx, parent, name, mode, flags)
	} else {
		a, h, err = r.fsys.Create(ctx, parent, name, mode, flags)
	}
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, &out.EntryOut)
	out.OpenOut = fuse.OpenOut{Fh: uint64(h), OpenFlags: openFlags}
	return fuse.OK
}

// Open declines with ENOSYS where the kernel supports it: from then on
// the kernel sends neither OPEN nor RELEASE for any file of the mount
// (no_open, see kernel.noOpen), and READ, WRITE and FSYNC come with
// handle 0, addressed to the node. Otherwise (older kernels) it opens an
// fsnode handle, as CREATE always does.
func (r *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if r.kernel.noOpen() {
		return fuse.ENOSYS
	}
	if r.virt.owns(in.NodeId) {
		return r.virt.open(in, out)
	}
	// OPEN_KILL_SUIDGID (in go-fuse's Mode, the open_flags): O_TRUNC by
	// a caller without CAP_FSETID. The kernel passes O_TRUNC only with
	// FUSE_ATOMIC_O_TRUNC, which hgfs does not ask for: it truncates with
	// SETATTR (FATTR_KILL_SUIDGID) instead.
	ctx := ctxOf(cancel)
	if in.Mode&fuse.OPEN_KILL_SUIDGID != 0 {
		ctx = fsnode.WithKillPriv(ctx)
	}
	h, err := r.fsys.Open(ctx, r.ino(in.NodeId), int(in.Flags))
	if err != nil {
		return toStatus(err)
	}
	out.Fh, out.OpenFlags = uint64(h), openFlags
	return fuse.OK
}

func (r *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if r.virt.owns(in.NodeId) {
		return r.virt.read(in)
	}
	if int(in.Size) < len(buf) {
		buf = buf[:in.Size]
	}
	var n int
	var err error
	if in.Fh == 0 { // no_open: no handle
		n, err = r.fsys.ReadInode(ctxOf(cancel), r.ino(in.NodeId), int64(in.Offset), buf)
	} else {
		n, err = r.fsys.Read(ctxOf(cancel), fsnode.Handle(in.Fh), int64(in.Offset), buf)
	}
	if err != nil {
		return nil, toStatus(err)
	}
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

func (r *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if r.virt.owns(in.NodeId) {
		return 0, fuse.EBADF
	}
	// WRITE_KILL_SUIDGID: the writer lacks CAP_FSETID.
	ctx := ctxOf(cancel)
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		ctx = fsnode.WithKillPriv(ctx)
	}
	var n int
	var err error
	if in.Fh == 0 { // no_open: the writer's open flags come with the request
		n, err = r.fsys.WriteInode(ctx, r.ino(in.NodeId), int64(in.Offset), data, int(in.Flags))
	} else {
		n, err = r.fsys.Write(ctx, fsnode.Handle(in.Fh), int64(in.Offset), data)
	}
	if err != nil {
		return uint32(n), toStatus(err)
	}
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		// fsnode cleared set-id bits the kernel still shows in its
		// cached mode, which neither the write's reply nor its own
		// bookkeeping updates.
		r.forgetAttr(in.NodeId)
	}
	return uint32(n), fuse.OK
}

// Flush is only asked for files opened without a handle (no_open: the
// kernel has no FOPEN_NOFLUSH for them): ENOSYS tells it never to ask
// again (no_flush), so close(2) stays free of round trips. It reported
// nothing but an earlier failed commit, which fsync and every later
// mutating request report.
func (r *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if in.Fh == 0 {
		return fuse.ENOSYS
	}
	if r.virt.owns(in.NodeId) {
		return fuse.OK
	}
	return toStatus(r.fsys.Flush(ctxOf(cancel), fsnode.Handle(in.Fh)))
}

func (r *rawFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return fuse.OK
	}
	if in.Fh == 0 {
		return toStatus(r.fsys.FsyncInode(ctxOf(cancel), r.ino(in.NodeId)))
	}
	return toStatus(r.fsys.Fsync(ctxOf(cancel), fsnode.Handle(in.Fh), in.FsyncFlags&1 != 0))
}

func (r *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	if r.virt.owns(in.NodeId) {
		r.virt.release(in.Fh)
		return
	}
	r.fsys.Release(fsnode.Handle(in.Fh))
}

func (r *rawFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if st := r.virt.refuse(h.NodeId, name); st != fuse.OK {
		return st
	}
	return toStatus(r.fsys.Unlink(ctxOf(cancel), r.ino(h.NodeId), name))
}

func (r *rawFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if st := r.virt.refuse(h.NodeId, name); st != fuse.OK {
		return st
	}
	return toStatus(r.fsys.Rmdir(ctxOf(cancel), r.ino(h.NodeId), name))
}

func (r *rawFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	if st := r.virt.refuse(in.NodeId, oldName); st != fuse.OK {
		return st
	}
	if st := r.virt.refuse(in.Newdir, newName); st != fuse.OK {
		return st
	}
	return toStatus(r.fsys.Rename(ctxOf(cancel), r.ino(in.NodeId), oldName, r.ino(in.Newdir), newName, in.Flags))
}

func (r *rawFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	if st := r.virt.refuse(in.NodeId, name); st != fuse.OK {
		return st
	}
	if r.virt.owns(in.Oldnodeid) {
		return fuse.EPERM
	}
	a, err := r.fsys.Link(ctxOf(cancel), r.ino(in.Oldnodeid), r.ino(in.NodeId), name)
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, out)
	return fuse.OK
}

func (r *rawFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	if st := r.virt.refuse(h.NodeId, name); st != fuse.OK {
		return st
	}
	a, err := r.fsys.Symlink(creatorCtx(cancel, h), r.ino(h.NodeId), name, target)
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, out)
	return fuse.OK
}

func (r *rawFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if r.virt.owns(h.NodeId) {
		return r.virt.readlink(h.NodeId)
	}
	target, err := r.fsys.Readlink(ctxOf(cancel), r.ino(h.NodeId))
	if err != nil {
		return nil, toStatus(err)
	}
	return []byte(target), fuse.OK
}

// Access is asked only when the mount runs without default_permissions,
// that is for root alone (see rootOnly), for access(2) and chdir(2). It
// answers as the kernel's generic check would (fsnode.Attr.CheckAccess).
func (r *rawFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	var a fsnode.Attr
	var err error
	if r.virt.owns(in.NodeId) {
		a, err = r.virt.attr(in.NodeId)
	} else {
		a, err = r.fsys.GetAttr(ctxOf(cancel), r.ino(in.NodeId))
	}
	if err == nil {
		err = a.CheckAccess(in.Mask, in.Uid, in.Gid)
	}
	return toStatus(err)
}

// OpenDir needs no state: fsnode's directory cookies are stable, so every
// READDIR resumes from its offset alone.
func (r *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return r.virt.openDir(in.NodeId, out)
	}
	a, err := r.fsys.GetAttr(ctxOf(cancel), r.ino(in.NodeId))
	if err != nil {
		return toStatus(err)
	}
	if a.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return fuse.ENOTDIR
	}
	return fuse.OK
}

func (r *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	if r.virt.owns(in.NodeId) {
		r.virt.releaseDir(in.Fh)
	}
}

func (r *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, false)
}

func (r *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, true)
}

func (r *rawFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return r.virt.readDir(in, out, plus)
	}
	ctx := ctxOf(cancel)
	dir := r.ino(in.NodeId)
	// fsnode's cookies start above 2, leaving 1 and 2 to the "." and ".."
	// synthesised here; their inode numbers do not matter to the kernel.
	off := in.Offset
	for i, name := range []string{".", ".."} {
		if off > uint64(i) {
			continue
		}
		de := fuse.DirEntry{Name: name, Mode: syscall.S_IFDIR, Off: uint64(i + 1)}
		if name == "." {
			de.Ino = in.NodeId
		}
		if _, ok := addDirEntry(out, de, plus); !ok {
			return fuse.OK
		}
		off = uint64(i + 1)
	}
	if off <= 2 {
		off = 0
	}
	// At most as many entries as the kernel's buffer can hold, so that
	// paging through a huge directory does not copy all the remaining
	// entries at every request: a READDIR entry takes at least 32 bytes
	// (header and padded name), a READDIRPLUS one at least 160.
	minEntry := uint32(32)
	if plus {
		minEntry = 160
	}
	ents, err := r.fsys.ReadDirLimit(ctx, dir, off, int(in.Size/minEntry)+1)
	if err != nil {
		return toStatus(err)
	}
	if plus {
		// One index transaction for the entries' inodes instead of one
		// per Lookup below.
		inos := make([]fsnode.Ino, len(ents))
		for i, e := range ents {
			inos[i] = e.Ino
		}
		r.fsys.Preload(inos)
	}
	for _, e := range ents {
		de := fuse.DirEntry{Name: e.Name, Ino: r.nodeID(e.Ino), Mode: e.Mode, Off: e.Off}
		eo, ok := addDirEntry(out, de, plus)
		if !ok {
			break
		}
		if !plus {
			continue
		}
		// The kernel links every entry carrying a node ID and counts it
		// as a lookup; an entry gone since the listing stays at zero,
		// which it skips.
		a, err := r.fsys.Lookup(ctx, dir, e.Name)
		if err != nil {
			continue
		}
		r.fillEntry(a, eo)
	}
	return fuse.OK
}

// addDirEntry adds de to a READDIR or READDIRPLUS reply; ok is false
// once the reply is full. For READDIRPLUS, eo is the entry's lookup
// answer to fill (left zero, the kernel links no node).
func addDirEntry(out *fuse.DirEntryList, de fuse.DirEntry, plus bool) (eo *fuse.EntryOut, ok bool) {
	if !plus {
		return nil, out.AddDirEntry(de)
	}
	eo = out.AddDirLookupEntry(de)
	return eo, eo != nil
}

// FsyncDir makes the directory's entries durable; fsnode has no finer
// unit for directory metadata than draining the committer.
func (r *rawFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return fuse.OK
	}
	return toStatus(r.fsys.Sync(ctxOf(cancel)))
}

func (r *rawFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	st, err := r.fsys.Statfs(ctxOf(cancel))
	if err != nil {
		return toStatus(err)
	}
	fillStatfs(st, out)
	return fuse.OK
}

func fillStatfs(st fsnode.Statfs, out *fuse.StatfsOut) {
	*out = fuse.StatfsOut{
		Blocks: st.Blocks, Bfree: st.Bfree, Bavail: st.Bavail,
		Files: st.Files, Ffree: st.Ffree,
		Bsize: st.Bsize, Frsize: st.Frsize, NameLen: st.NameLen,
	}
}
