package fsnode

// Clearing privileges on modification.
//
// A local Linux file system clears a regular file's set-user-ID bit, its
// set-group-ID bit when the group may execute it, and its
// security.capability attribute when a caller without CAP_FSETID writes,
// truncates or fallocates it, and on every chown of a non-directory.
// Through FUSE the kernel does that itself by default, at the price of a
// GETXATTR ("security.capability") before every write; with
// FUSE_HANDLE_KILLPRIV_V2 it leaves it to the file system and marks the
// requests that must clear (see mount/doc.go). WithKillPriv carries that
// mark to fsnode, and killPrivLocked is the one place that clears.

import (
	"context"
	"syscall"
	"time"
)

// capabilityXattr holds a file's capabilities (setcap(8)); a change of
// the file drops it, as it drops set-id bits.
const capabilityXattr = "security.capability"

// Mode bits (syscall lacks some on Windows).
const (
	modeSetuid  = 0o4000
	modeSetgid  = 0o2000
	modeGroupEx = 0o0010
)

type killPrivKey struct{}

// WithKillPriv returns a context saying that the change the request makes
// also clears privileges: a write (Write, WriteInode), a Fallocate, a
// truncation at open (Open, Create and CreateInode of an existing file
// with O_TRUNC and write access), or a SetAttr that changes the size or
// the owner. The inode, unless it is a directory, loses S_ISUID, S_ISGID
// if S_IXGRP is set (a set-group-ID bit without group execute marks
// mandatory locking, which Linux keeps), and its security.capability
// attribute; ctime becomes now if anything was cleared. It is the
// caller's decision, not fsnode's, who has the privilege to keep them
// (the kernel sends FUSE's *_KILL_SUIDGID flags for callers without
// CAP_FSETID, and for every chown).
func WithKillPriv(ctx context.Context) context.Context {
	return context.WithValue(ctx, killPrivKey{}, true)
}

// killPriv reports whether ctx carries WithKillPriv.
func killPriv(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	v, _ := ctx.Value(killPrivKey{}).(bool)
	return v
}

// killPrivLocked clears in's set-id bits and security.capability as
// WithKillPriv describes; in.mu is held for writing. It changes (and
// marks dirty) nothing when there is nothing to clear: then a marked
// write costs a look at the mode and, once the cache holds any
// attribute, at the inode's attributes (loaded from the index once).
func (f *FS) killPrivLocked(in *inode) error {
	if in.typ() == syscall.S_IFDIR {
		return nil
	}
	mode := in.d.Mode &^ modeSetuid
	if mode&modeGroupEx != 0 {
		mode &^= modeSetgid
	}
	changed := mode != in.d.Mode
	in.d.Mode = mode
	if f.anyXattrs.Load() {
		if err := f.loadXattrsLocked(in); err != nil {
			return err
		}
		if _, ok := in.xattrs[capabilityXattr]; ok {
			delete(in.xattrs, capabilityXattr)
			in.xattrsDirty = true
			changed = true
		}
	}
	if changed {
		in.d.Ctime = time.Now().UnixNano()
		f.markDirtyLocked(in)
	}
	return nil
}
