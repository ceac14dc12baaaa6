package fsnode

// Extended attributes.
//
// An inode's attributes live in the xattrs bucket (ino(8) name -> value)
// and, once a call touches them, in the inode (inode.xattrs, loaded whole
// on first use). A change marks the inode dirty; its snapshot carries the
// whole set, which the batch writes in place of the inode's records in the
// same transaction as its inode record, so a crash never leaves half a
// change. They belong to the inode, not a name: links and renames keep
// them, and they go with the inode's other records when it is reclaimed.
//
// Names must be in a namespace Linux file systems store: user., trusted.,
// security., or system.posix_acl_access / system.posix_acl_default
// (stored as the raw bytes the kernel passes; see mount/doc.go on ACLs);
// others are EOPNOTSUPP. Bounds: a name is 1..255 bytes (ERANGE
// otherwise, as Linux says), a value at most 64 KiB (E2BIG), an inode's
// names and values together at most maxXattrTotal (ENOSPC, as ext4 says
// when an inode's attribute space is full). Which caller may touch which
// namespace (trusted. needs CAP_SYS_ADMIN, user. only on regular files
// and directories) is the kernel's check before the request arrives.

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Setxattr flags, as setxattr(2) defines them.
const (
	XattrCreate  = 1 // XATTR_CREATE: fail with EEXIST if the name exists
	XattrReplace = 2 // XATTR_REPLACE: fail with ENODATA if it does not
)

const (
	maxXattrName  = 255      // XATTR_NAME_MAX
	maxXattrValue = 64 << 10 // XATTR_SIZE_MAX
	// maxXattrTotal bounds an inode's names and values together, so one
	// inode cannot grow the index without bound.
	maxXattrTotal = 256 << 10
)

// errNoData is ENODATA: no attribute by that name.
const errNoData = syscall.ENODATA

// checkXattrName validates an attribute name.
func checkXattrName(name string) error {
	if name == "" || len(name) > maxXattrName || strings.IndexByte(name, 0) >= 0 {
		return syscall.ERANGE
	}
	for _, p := range []string{"user.", "trusted.", "security."} {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return nil
		}
	}
	if name == "system.posix_acl_access" || name == "system.posix_acl_default" {
		return nil
	}
	return syscall.EOPNOTSUPP
}

// loadXattrsLocked loads in's attributes from the index if not yet
// loaded; in.mu is held for writing. An inode not loaded yet has no
// uncommitted change, so the index holds its attributes.
func (f *FS) loadXattrsLocked(in *inode) error {
	if in.xattrsLoaded {
		return nil
	}
	var m map[string][]byte
	if f.anyXattrs.Load() {
		err := f.view("getxattr", func(tx *bolt.Tx) error {
			var err error
			m, err = readXattrs(tx.Bucket(bucketXattrs), in.ino)
			return err
		})
		if err != nil {
			return fmt.Errorf("inode %d: %w: %w", in.ino, err, syscall.EIO)
		}
	}
	in.xattrs, in.xattrsLoaded = m, true
	return nil
}

// readXattrs reads ino's attributes (nil if none).
func readXattrs(b *bolt.Bucket, ino Ino) (map[string][]byte, error) {
	var m map[string][]byte
	prefix := inoKey(ino)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		name := string(k[8:])
		if checkXattrName(name) != nil || len(v) > maxXattrValue {
			return nil, fmt.Errorf("%w: extended attribute %q of %d bytes", ErrCorrupt, name, len(v))
		}
		if m == nil {
			m = map[string][]byte{}
		}
		m[name] = bytes.Clone(v)
	}
	return m, nil
}

// deleteXattrs deletes ino's attribute records (none if b is nil: a
// format 1 cache has no bucket).
func deleteXattrs(b *bolt.Bucket, ino Ino) error {
	if b == nil {
		return nil
	}
	prefix := inoKey(ino)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// putXattrs replaces ino's attribute records with m.
func putXattrs(b *bolt.Bucket, ino Ino, m map[string][]byte) error {
	if err := deleteXattrs(b, ino); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := b.Put(xattrKey(ino, name), m[name]); err != nil {
			return err
		}
	}
	return nil
}

// xattrInode returns a loaded inode for an xattr call, locked for
// writing; the caller unlocks in.mu and then f.tree (read).
func (f *FS) xattrInode(ino Ino) (*inode, error) {
	f.tree.RLock()
	in, err := f.getInode(ino)
	if err != nil {
		f.tree.RUnlock()
		return nil, err
	}
	in.mu.Lock()
	if err := f.loadXattrsLocked(in); err != nil {
		in.mu.Unlock()
		f.tree.RUnlock()
		return nil, err
	}
	return in, nil
}

// Getxattr returns the value of attribute name of ino; ENODATA if it has
// none by that name.
func (f *FS) Getxattr(ctx context.Context, ino Ino, name string) ([]byte, error) {
	if err := checkXattrName(name); err != nil {
		return nil, err
	}
	if !f.anyXattrs.Load() {
		f.tree.RLock()
		_, err := f.getInode(ino)
		f.tree.RUnlock()
		if err != nil {
			return nil, err
		}
		return nil, errNoData
	}
	in, err := f.xattrInode(ino)
	if err != nil {
		return nil, err
	}
	defer f.tree.RUnlock()
	defer in.mu.Unlock()
	v, ok := in.xattrs[name]
	if !ok {
		return nil, errNoData
	}
	return bytes.Clone(v), nil
}

// Listxattr returns ino's attribute names, sorted.
func (f *FS) Listxattr(ctx context.Context, ino Ino) ([]string, error) {
	in, err := f.xattrInode(ino)
	if err != nil {
		return nil, err
	}
	defer f.tree.RUnlock()
	defer in.mu.Unlock()
	return slices.Sorted(maps.Keys(in.xattrs)), nil
}

// Setxattr sets attribute name of ino to value. flags: XattrCreate
// (EEXIST if it exists), XattrReplace (ENODATA if it does not), 0 either
// way; others are EINVAL. ctime becomes now.
func (f *FS) Setxattr(ctx context.Context, ino Ino, name string, value []byte, flags int) error {
	if flags&^(XattrCreate|XattrReplace) != 0 {
		return syscall.EINVAL
	}
	if len(value) > maxXattrValue && checkXattrName(name) == nil {
		return syscall.E2BIG
	}
	return f.changeXattrs(ctx, ino, name, func(in *inode) error {
		return f.setxattrLocked(in, name, value, flags)
	})
}

// setxattrLocked is Setxattr on the loaded, write-locked inode.
func (f *FS) setxattrLocked(in *inode, name string, value []byte, flags int) error {
	old, exists := in.xattrs[name]
	switch {
	case exists && flags&XattrCreate != 0:
		return syscall.EEXIST
	case !exists && flags&XattrReplace != 0:
		return errNoData
	}
	total := len(name) + len(value)
	for n, v := range in.xattrs {
		total += len(n) + len(v)
	}
	if exists {
		total -= len(name) + len(old)
	}
	if total > maxXattrTotal {
		return syscall.ENOSPC
	}
	if name == aclAccess {
		mode, minimal, err := aclMode(value)
		if err != nil {
			return err
		}
		in.d.Mode = in.d.Mode&^0o777 | mode
		if minimal { // the mode says it all (see acl.go)
			delete(in.xattrs, name)
			f.xattrsChangedLocked(in)
			return nil
		}
	}
	if in.xattrs == nil {
		in.xattrs = map[string][]byte{}
	}
	in.xattrs[name] = bytes.Clone(value)
	f.anyXattrs.Store(true)
	f.xattrsChangedLocked(in)
	return nil
}

// Removexattr removes attribute name of ino; ENODATA if it has none.
func (f *FS) Removexattr(ctx context.Context, ino Ino, name string) error {
	return f.changeXattrs(ctx, ino, name, func(in *inode) error {
		if _, ok := in.xattrs[name]; !ok {
			return errNoData
		}
		delete(in.xattrs, name)
		f.xattrsChangedLocked(in)
		return nil
	})
}

// changeXattrs checks name, waits for room in the queue and runs change
// on ino, loaded and locked for writing.
func (f *FS) changeXattrs(ctx context.Context, ino Ino, name string, change func(*inode) error) error {
	if err := checkXattrName(name); err != nil {
		return err
	}
	if err := f.c.admit(ctx); err != nil {
		return err
	}
	in, err := f.xattrInode(ino)
	if err != nil {
		return err
	}
	defer f.tree.RUnlock()
	defer in.mu.Unlock()
	return change(in)
}

// xattrsChangedLocked records a change of in's attributes: ctime now,
// queued with the whole set. in.mu is held.
func (f *FS) xattrsChangedLocked(in *inode) {
	in.d.Ctime = time.Now().UnixNano()
	in.xattrsDirty = true
	f.markDirtyLocked(in)
}
