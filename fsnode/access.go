package fsnode

import (
	"context"
	"syscall"
)

// CheckAccess reports whether the caller uid, gid may access an inode
// with attributes a as access(2)'s mask asks (R_OK 4, W_OK 2, X_OK 1; 0
// is F_OK): nil, or EACCES. It is the kernel's generic_permission without
// ACLs or supplementary groups: root may do anything but execute a
// non-directory that has no execute bit; anyone else gets the owner,
// group or other bits, the first class that matches. Adapters call it
// where no kernel checks permissions for them (package mount: the raw
// adapter's ACCESS on a root mount, the cgofuse adapter's Access).
func (a Attr) CheckAccess(mask, uid, gid uint32) error {
	mask &= 7
	if uid == 0 {
		if mask&1 != 0 && !a.IsDir() && a.Mode&0o111 == 0 {
			return syscall.EACCES
		}
		return nil
	}
	perm := a.Mode & 7
	switch {
	case uid == a.Uid:
		perm = a.Mode >> 6 & 7
	case gid == a.Gid:
		perm = a.Mode >> 3 & 7
	}
	if mask&^perm != 0 {
		return syscall.EACCES
	}
	return nil
}

// Access checks the caller's access to ino (Attr.CheckAccess).
func (f *FS) Access(ctx context.Context, ino Ino, mask, uid, gid uint32) error {
	a, err := f.GetAttr(ctx, ino)
	if err != nil {
		return err
	}
	return a.CheckAccess(mask, uid, gid)
}
