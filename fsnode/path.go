package fsnode

// Path-level helpers for path-based adapters, the clone sink, the fs.FS
// view and tests. Paths are slash-separated and relative to the root (""
// and "." are the root; a leading slash is ignored); components must be
// valid names other than "." and "..". Only Walk takes a kernel
// reference.

import (
	"context"
	"io"
	"slices"
	"strings"
	"syscall"
)

// splitPath checks p and returns its components.
func splitPath(p string) ([]string, error) {
	p = strings.TrimPrefix(p, "/")
	if p == "" || p == "." {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for _, c := range parts {
		if c == "." || c == ".." {
			return nil, syscall.EINVAL
		}
		if err := checkName(c); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// resolve finds the inode at path p. f.tree is read-locked by the caller
// and stays read-locked (loading directories upgrades it briefly).
func (f *FS) resolve(p string) (Ino, error) {
	parts, err := splitPath(p)
	if err != nil {
		return 0, err
	}
	ino := RootIno
	for _, name := range parts {
		if ino, err = f.childLocked(ino, name); err != nil {
			return 0, err
		}
	}
	return ino, nil
}

// childLocked finds name in directory ino, loading the directory if
// needed; f.tree as for resolve.
func (f *FS) childLocked(ino Ino, name string) (Ino, error) {
	dir, err := f.getInode(ino)
	if err != nil {
		return 0, err
	}
	child, _, err := f.childOfLocked(dir, name)
	return child, err
}

// childOfLocked is childLocked of the directory's inode; it also
// returns the directory's inode, which loading it may have replaced.
func (f *FS) childOfLocked(dir *inode, name string) (Ino, *inode, error) {
	ino := dir.ino
	if !dir.isDir() {
		return 0, dir, syscall.ENOTDIR
	}
	// Again while not loaded: an ingest's commit may have dropped the
	// directory's entries again while the lock was free (evictDirsLocked).
	for !dir.loaded() {
		f.tree.RUnlock()
		f.tree.Lock()
		err := f.loadDir(dir)
		f.tree.Unlock()
		f.tree.RLock()
		if err != nil {
			return 0, dir, err
		}
		if dir, err = f.getInode(ino); err != nil || !dir.isDir() {
			return 0, dir, syscall.ENOENT
		}
	}
	e := dir.dir.entries[name]
	if e == nil {
		return 0, dir, syscall.ENOENT
	}
	return e.ino, dir, nil
}

// LookupPath returns the attributes of the inode at path p.
func (f *FS) LookupPath(ctx context.Context, p string) (Attr, error) {
	return f.walk(p, false)
}

// Walk resolves the path p from the root, as a kernel's path walk of one
// Lookup per component would, and returns the attributes of the inode it
// names holding one kernel reference on it (the root's included), which
// the caller drops with Forget. Adapters whose protocol names files by
// path (package mount's cgofuse adapter) call it for every request; the
// walk itself takes no reference on the directories it passes.
func (f *FS) Walk(ctx context.Context, p string) (Attr, error) {
	return f.walk(p, true)
}

// walk is LookupPath, and with ref Walk.
func (f *FS) walk(p string, ref bool) (Attr, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	ino, err := f.resolve(p)
	if err != nil {
		return Attr{}, err
	}
	in, err := f.getInode(ino)
	if err != nil {
		return Attr{}, err
	}
	if !ref {
		return in.attr(), nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.lookups++
	return in.attrLocked(), nil
}

// MkdirAll makes directory p and any missing parents (mode for new
// ones) and returns its inode number.
func (f *FS) MkdirAll(ctx context.Context, p string, mode uint32) (Ino, error) {
	parts, err := splitPath(p)
	if err != nil {
		return 0, err
	}
	ino := RootIno
	for _, name := range parts {
		ino, err = f.mkdirStep(ctx, ino, name, mode)
		if err != nil {
			return 0, err
		}
	}
	return ino, nil
}

// mkdirStep returns directory name in parent, making it if missing.
func (f *FS) mkdirStep(ctx context.Context, parent Ino, name string, mode uint32) (Ino, error) {
	if dir, err := f.rlockDir(parent); err == nil {
		e := dir.dir.entries[name]
		f.tree.RUnlock()
		if e != nil {
			if e.typ != syscall.S_IFDIR {
				return 0, syscall.ENOTDIR
			}
			return e.ino, nil
		}
	} else {
		return 0, err
	}
	if err := f.c.admit(ctx); err != nil {
		return 0, err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return 0, err
	}
	if e := dir.dir.entries[name]; e != nil { // made meanwhile
		if e.typ != syscall.S_IFDIR {
			return 0, syscall.ENOTDIR
		}
		return e.ino, nil
	}
	in, err := f.mknodeLocked(ctx, parent, name, syscall.S_IFDIR|mode&07777, "", false)
	if err != nil {
		return 0, err
	}
	return in.ino, nil
}

// splitDir splits p into its parent directory's path and its last name.
func splitDir(p string) (string, string) {
	p = strings.TrimPrefix(p, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// WriteFile creates or truncates the file at p (parents must exist) and
// writes data to it.
func (f *FS) WriteFile(ctx context.Context, p string, data []byte, mode uint32) error {
	dirPath, name := splitDir(p)
	f.tree.RLock()
	parent, err := f.resolve(dirPath)
	f.tree.RUnlock()
	if err != nil {
		return err
	}
	attr, h, err := f.Create(ctx, parent, name, mode, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC)
	if err != nil {
		return err
	}
	f.Forget(attr.Ino, 1)
	defer f.Release(h)
	for len(data) > 0 {
		n, err := f.Write(ctx, h, int64(attr.Size), data[:min(len(data), 1<<20)])
		if err != nil {
			return err
		}
		data = data[n:]
		attr.Size += uint64(n)
	}
	return nil
}

// ReadFile returns the contents of the file at p.
//
// It pins the inode as an open handle does (in.handles, which keeps it
// in the table and its contents from being reclaimed) without making
// one: one tree lock for the path and the pin, no handle table. The
// checkout of a mounted clone reads 20,000 filelogs this way, with the
// group committer taking the tree lock between them.
func (f *FS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return f.AppendFile(ctx, nil, p)
}

// AppendFile appends the contents of the file at p to buf, as ReadFile
// reads them: ReadFile into a buffer the caller reuses.
func (f *FS) AppendFile(ctx context.Context, buf []byte, p string) ([]byte, error) {
	in, err := f.pinPath(p)
	if err != nil {
		return buf, err
	}
	defer f.unpin(in)
	size := int(in.attr().Size)
	buf = slices.Grow(buf, size)
	n, err := f.readIn(in, buf[len(buf):len(buf)+size], 0)
	return buf[:len(buf)+n], err
}

// pinPath finds the regular file at p and pins it (unpin undoes it).
func (f *FS) pinPath(p string) (*inode, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	ino, err := f.resolve(p)
	if err != nil {
		return nil, err
	}
	in, err := f.getInode(ino)
	if err != nil {
		return nil, err
	}
	switch in.typ() {
	case syscall.S_IFDIR:
		return nil, syscall.EISDIR
	case syscall.S_IFLNK:
		return nil, syscall.ELOOP
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.reclaimed {
		return nil, syscall.ENOENT
	}
	in.handles++
	return in, nil
}

// unpin releases pinPath's pin, as Release does a handle's.
func (f *FS) unpin(in *inode) {
	in.mu.Lock()
	if in.handles > 0 {
		in.handles--
	}
	f.maybeReclaimLocked(in)
	in.mu.Unlock()
}

// CreateFile creates the file at p (making parent directories) that will
// hold exactly size bytes, written through the returned writer; Close
// makes it visible and fails if fewer or more bytes came. It is the
// sink's fast path; an existing file at p is replaced.
func (f *FS) CreateFile(p string, size int64) (io.WriteCloser, error) {
	s := &Sink{f: f, ctx: context.Background(), dirs: map[string]Ino{}, noTrack: true}
	return s.Create(p, size)
}
