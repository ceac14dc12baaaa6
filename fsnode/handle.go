package fsnode

import (
	"context"
	"sync"
	"syscall"
)

// Handle identifies an open file. A released handle is EBADF.
type Handle uint64

// handle is an open file. Every operation read-locks mu; Release
// write-locks it and sets released, so late calls get EBADF and no call is
// in flight when the inode loses the handle's reference.
type handle struct {
	mu       sync.RWMutex
	in       *inode
	flags    int
	released bool
}

// accMode masks the access mode out of open flags: syscall.O_ACCMODE
// where it exists (Linux, macOS), which Windows' syscall package lacks;
// O_RDONLY, O_WRONLY and O_RDWR are 0, 1 and 2 on all three.
const accMode = syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR

func (h *handle) readable() bool { return h.flags&accMode != syscall.O_WRONLY }
func (h *handle) writable() bool { return h.flags&accMode != syscall.O_RDONLY }

// newHandleLocked opens a handle on in; in.mu is held.
func (f *FS) newHandleLocked(in *inode, flags int) Handle {
	in.handles++
	f.hmu.Lock()
	defer f.hmu.Unlock()
	f.nextHandle++
	f.handles[f.nextHandle] = &handle{in: in, flags: flags}
	return f.nextHandle
}

// handle returns the live handle h, read-locked; the caller RUnlocks it.
func (f *FS) handle(h Handle) (*handle, error) {
	f.hmu.Lock()
	fh := f.handles[h]
	f.hmu.Unlock()
	if fh == nil {
		return nil, syscall.EBADF
	}
	fh.mu.RLock()
	if fh.released {
		fh.mu.RUnlock()
		return nil, syscall.EBADF
	}
	return fh, nil
}

// Create makes (or with flags lacking O_EXCL, opens) regular file name in
// parent and opens it; it takes a kernel reference. O_EXCL on an existing
// name is EEXIST; O_TRUNC truncates an existing file (WithKillPriv: and
// clears its privileges).
func (f *FS) Create(ctx context.Context, parent Ino, name string, mode uint32, flags int) (Attr, Handle, error) {
	return f.create(ctx, parent, name, mode, flags, true)
}

// create is Create, opening a handle only if open is set (CreateInode
// opens none).
func (f *FS) create(ctx context.Context, parent Ino, name string, mode uint32, flags int, open bool) (Attr, Handle, error) {
	if err := f.c.admit(ctx); err != nil {
		return Attr{}, 0, err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	if name == "." || name == ".." {
		return Attr{}, 0, syscall.EISDIR
	}
	if err := checkName(name); err != nil {
		return Attr{}, 0, err
	}
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return Attr{}, 0, err
	}
	if e := dir.dir.entries[name]; e != nil {
		if flags&syscall.O_EXCL != 0 {
			return Attr{}, 0, syscall.EEXIST
		}
		in, err := f.getInode(e.ino)
		if err != nil {
			return Attr{}, 0, err
		}
		switch in.typ() {
		case syscall.S_IFDIR:
			return Attr{}, 0, syscall.EISDIR
		case syscall.S_IFLNK:
			return Attr{}, 0, syscall.ELOOP
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		if err := f.openTruncLocked(ctx, in, flags); err != nil {
			return Attr{}, 0, err
		}
		in.lookups++
		return in.attrLocked(), f.handleIfLocked(open, in, flags), nil
	}
	in, err := f.mknodeLocked(ctx, parent, name, syscall.S_IFREG|mode&07777, "", true)
	if err != nil {
		return Attr{}, 0, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.attrLocked(), f.handleIfLocked(open, in, flags), nil
}

// openTruncLocked truncates in, opened with flags, if they ask for it
// (O_TRUNC with write access), clearing privileges if ctx says so
// (WithKillPriv); in.mu is held for writing.
func (f *FS) openTruncLocked(ctx context.Context, in *inode, flags int) error {
	if flags&syscall.O_TRUNC == 0 || flags&accMode == syscall.O_RDONLY {
		return nil
	}
	if in.d.Size > 0 {
		if err := f.truncateLocked(in, 0); err != nil {
			return err
		}
	}
	if killPriv(ctx) {
		return f.killPrivLocked(in)
	}
	return nil
}

// handleIfLocked opens a handle on in if open is set; in.mu is held.
func (f *FS) handleIfLocked(open bool, in *inode, flags int) Handle {
	if !open {
		return 0
	}
	return f.newHandleLocked(in, flags)
}

// Open opens an existing inode. Writing flags on a directory are EISDIR;
// O_TRUNC with write access truncates (and with WithKillPriv clears
// privileges).
func (f *FS) Open(ctx context.Context, ino Ino, flags int) (Handle, error) {
	if flags&syscall.O_TRUNC != 0 {
		if err := f.c.admit(ctx); err != nil {
			return 0, err
		}
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return 0, err
	}
	writing := flags&accMode != syscall.O_RDONLY
	switch in.typ() {
	case syscall.S_IFDIR:
		if writing {
			return 0, syscall.EISDIR
		}
	case syscall.S_IFLNK:
		return 0, syscall.ELOOP
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.reclaimed {
		return 0, syscall.ENOENT
	}
	if err := f.openTruncLocked(ctx, in, flags); err != nil {
		return 0, err
	}
	return f.newHandleLocked(in, flags), nil
}

// Read reads at off; a short count means end of file.
func (f *FS) Read(ctx context.Context, h Handle, off int64, buf []byte) (int, error) {
	fh, err := f.handle(h)
	if err != nil {
		return 0, err
	}
	defer fh.mu.RUnlock()
	if !fh.readable() {
		return 0, syscall.EBADF
	}
	in := fh.in
	switch in.typ() {
	case syscall.S_IFDIR:
		return 0, syscall.EISDIR
	case syscall.S_IFREG:
	default:
		return 0, syscall.EINVAL // the kernel does I/O on special files
	}
	return f.readIn(in, buf, off)
}

// Write writes data at off, or at the end of file for a handle opened
// with O_APPEND. The bytes are visible to readers at once and committed by
// the next group commit. With WithKillPriv the write clears privileges.
func (f *FS) Write(ctx context.Context, h Handle, off int64, data []byte) (int, error) {
	n, err := f.write(ctx, h, off, data)
	if isNoSpace(err) && f.compactForSpace(ctx) {
		n, err = f.write(ctx, h, off, data)
	}
	return n, err
}

func (f *FS) write(ctx context.Context, h Handle, off int64, data []byte) (int, error) {
	if err := f.c.admit(ctx); err != nil {
		return 0, err
	}
	fh, err := f.handle(h)
	if err != nil {
		return 0, err
	}
	defer fh.mu.RUnlock()
	if !fh.writable() {
		return 0, syscall.EBADF
	}
	in := fh.in
	switch in.typ() {
	case syscall.S_IFDIR:
		return 0, syscall.EISDIR
	case syscall.S_IFREG:
	default:
		return 0, syscall.EINVAL // the kernel does I/O on special files
	}
	if err := f.lockMaterialized(in); err != nil {
		return 0, err
	}
	defer in.mu.Unlock()
	if killPriv(ctx) {
		if err := f.killPrivLocked(in); err != nil {
			return 0, err
		}
	}
	if fh.flags&syscall.O_APPEND != 0 {
		off = int64(in.d.Size)
	}
	return f.writeAtLocked(in, data, off)
}

// Flush returns at once: the handle's changes are already queued for the
// committer. It reports an earlier failed commit (EIO), the last chance
// for close(2) to see it.
func (f *FS) Flush(ctx context.Context, h Handle) error {
	fh, err := f.handle(h)
	if err != nil {
		return err
	}
	fh.mu.RUnlock()
	return f.c.failed()
}

// Fsync waits until the file's changes so far are committed and (unless
// Options.NoSync) durable. datasync makes no difference: metadata and data
// commit together.
func (f *FS) Fsync(ctx context.Context, h Handle, datasync bool) error {
	fh, err := f.handle(h)
	if err != nil {
		return err
	}
	in := fh.in
	fh.mu.RUnlock()
	return f.c.waitInode(ctx, in)
}

// Release closes a handle and returns at once. An unlinked file whose
// last handle and kernel reference are gone is reclaimed.
func (f *FS) Release(h Handle) {
	f.hmu.Lock()
	fh := f.handles[h]
	delete(f.handles, h)
	f.hmu.Unlock()
	if fh == nil {
		return
	}
	fh.mu.Lock()
	already := fh.released
	fh.released = true
	fh.mu.Unlock()
	if already {
		return
	}
	in := fh.in
	in.mu.Lock()
	if in.handles > 0 {
		in.handles--
	}
	f.maybeReclaimLocked(in)
	in.mu.Unlock()
}
