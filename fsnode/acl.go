package fsnode

// POSIX access ACLs and the mode. The mount does not ask the kernel to
// enforce ACLs (see mount/doc.go): system.posix_acl_access and
// system.posix_acl_default are stored as the bytes the kernel passes.
// But the mode and the access ACL are two views of the same permissions,
// which a file system keeps in step (ext4, tmpfs, and what FUSE asks of
// its servers): setting an access ACL sets the mode's permission bits
// from it, an ACL the mode says all of (owner, group and other entries
// only) is not stored at all, and chmod rewrites a stored ACL's owner,
// group (or mask) and other entries. cp -a relies on this: it creates a
// file with mode 0600, then sets the source's mode as an access ACL.

import (
	"encoding/binary"
	"syscall"
)

const aclAccess = "system.posix_acl_access"

// ACL entry tags and the xattr format's version (linux/posix_acl_xattr.h).
const (
	aclVersion  = 2
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
	aclEntryLen = 8 // u16 tag, u16 perm, u32 id, little-endian
)

// aclMode returns the permission bits an access ACL stands for, and
// whether the ACL says no more than they do (no named users or groups,
// no mask). A malformed ACL is EINVAL.
func aclMode(v []byte) (mode uint32, minimal bool, err error) {
	if len(v) < 4 || (len(v)-4)%aclEntryLen != 0 || binary.LittleEndian.Uint32(v) != aclVersion {
		return 0, false, syscall.EINVAL
	}
	var user, group, mask, other uint32
	var have uint16
	minimal = true
	for p := v[4:]; len(p) > 0; p = p[aclEntryLen:] {
		tag, perm := binary.LittleEndian.Uint16(p), uint32(binary.LittleEndian.Uint16(p[2:]))
		if perm&^7 != 0 {
			return 0, false, syscall.EINVAL
		}
		switch tag {
		case aclUserObj:
			user = perm
		case aclGroupObj:
			group = perm
		case aclOther:
			other = perm
		case aclMask:
			mask = perm
			minimal = false
		case aclUser, aclGroup:
			minimal = false
		default:
			return 0, false, syscall.EINVAL
		}
		if tag&(aclUserObj|aclGroupObj|aclOther|aclMask) != 0 {
			if have&tag != 0 {
				return 0, false, syscall.EINVAL
			}
			have |= tag
		}
	}
	if have&(aclUserObj|aclGroupObj|aclOther) != aclUserObj|aclGroupObj|aclOther {
		return 0, false, syscall.EINVAL
	}
	if have&aclMask != 0 {
		group = mask
	}
	return user<<6 | group<<3 | other, minimal, nil
}

// aclChmod returns access ACL v with its owner, group class (the mask if
// there is one, else the owning group) and other entries set from mode.
func aclChmod(v []byte, mode uint32) []byte {
	out := append([]byte(nil), v...)
	hasMask := false
	for p := out[4:]; len(p) >= aclEntryLen; p = p[aclEntryLen:] {
		hasMask = hasMask || binary.LittleEndian.Uint16(p) == aclMask
	}
	for p := out[4:]; len(p) >= aclEntryLen; p = p[aclEntryLen:] {
		var perm uint32
		switch tag := binary.LittleEndian.Uint16(p); {
		case tag == aclUserObj:
			perm = mode >> 6
		case tag == aclMask, tag == aclGroupObj && !hasMask:
			perm = mode >> 3
		case tag == aclOther:
			perm = mode
		default:
			continue
		}
		binary.LittleEndian.PutUint16(p[2:], uint16(perm&7))
	}
	return out
}

// aclChmodLocked brings a stored access ACL in step with in's new mode;
// in.mu is held for writing.
func (f *FS) aclChmodLocked(in *inode) error {
	if !f.anyXattrs.Load() {
		return nil
	}
	if err := f.loadXattrsLocked(in); err != nil {
		return err
	}
	if v, ok := in.xattrs[aclAccess]; ok {
		in.xattrs[aclAccess] = aclChmod(v, in.d.Mode)
		in.xattrsDirty = true
	}
	return nil
}
