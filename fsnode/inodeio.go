package fsnode

import (
	"context"
	"syscall"
)

// Reading and writing by inode, without a handle: for adapters whose
// kernel sends I/O without an open (FUSE's no_open mode, where the
// kernel keeps no server handle and addresses READ and WRITE to the node
// alone). Access modes are the kernel's to check, as it checked them at
// open(2); an unlinked file stays readable and writable as long as the
// caller holds a kernel reference (Lookup/Forget), which an open file
// always does, so reclaim waits for it as it waits for handles.

// CreateInode is Create without a handle: the file is then used by
// inode, as one opened without OPEN.
func (f *FS) CreateInode(ctx context.Context, parent Ino, name string, mode uint32, flags int) (Attr, error) {
	a, _, err := f.create(ctx, parent, name, mode, flags, false)
	return a, err
}

// inodeForIO returns the regular file ino for I/O, pinned (inode.pins)
// so that it stays the table's while the caller uses it without f.tree;
// the caller unpins it.
func (f *FS) inodeForIO(ino Ino) (*inode, error) {
	f.tree.RLock()
	in, err := f.getInode(ino)
	if err == nil && in.typ() == syscall.S_IFREG {
		in.pins.Add(1)
	}
	f.tree.RUnlock()
	if err != nil {
		return nil, err
	}
	switch in.typ() {
	case syscall.S_IFDIR:
		return nil, syscall.EISDIR
	case syscall.S_IFREG:
		if f.ioHook != nil {
			f.ioHook(in)
		}
		return in, nil
	}
	// Symlinks, and FIFOs, sockets and devices, whose I/O the kernel
	// handles itself.
	return nil, syscall.EINVAL
}

// ReadInode reads ino at off, as Read does through a handle.
func (f *FS) ReadInode(ctx context.Context, ino Ino, off int64, buf []byte) (int, error) {
	in, err := f.inodeForIO(ino)
	if err != nil {
		return 0, err
	}
	defer in.pins.Add(-1)
	return f.readIn(in, buf, off)
}

// WriteInode writes data at off, or at the end of the file when flags
// (the writer's open flags) hold O_APPEND, as Write does through a handle
// (WithKillPriv too).
func (f *FS) WriteInode(ctx context.Context, ino Ino, off int64, data []byte, flags int) (int, error) {
	n, err := f.writeInode(ctx, ino, off, data, flags)
	if isNoSpace(err) && f.compactForSpace(ctx) {
		n, err = f.writeInode(ctx, ino, off, data, flags)
	}
	return n, err
}

func (f *FS) writeInode(ctx context.Context, ino Ino, off int64, data []byte, flags int) (int, error) {
	if err := f.c.admit(ctx); err != nil {
		return 0, err
	}
	in, err := f.inodeForIO(ino)
	if err != nil {
		return 0, err
	}
	defer in.pins.Add(-1)
	if err := f.lockMaterialized(in); err != nil {
		return 0, err
	}
	defer in.mu.Unlock()
	if in.reclaimed {
		return 0, syscall.ENOENT
	}
	if killPriv(ctx) {
		if err := f.killPrivLocked(in); err != nil {
			return 0, err
		}
	}
	if flags&syscall.O_APPEND != 0 {
		off = int64(in.d.Size)
	}
	return f.writeAtLocked(in, data, off)
}

// FsyncInode waits until ino's changes so far are committed and durable,
// as Fsync does through a handle.
func (f *FS) FsyncInode(ctx context.Context, ino Ino) error {
	f.tree.RLock()
	in, err := f.getInode(ino)
	f.tree.RUnlock()
	if err != nil {
		return err
	}
	return f.c.waitInode(ctx, in)
}
