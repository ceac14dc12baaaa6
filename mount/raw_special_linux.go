//go:build linux

package mount

// The raw adapter's special files (MKNOD), space allocation (FALLOCATE)
// and extended attributes (the XATTR opcodes). The control directory has
// no attributes and cannot change.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// Mknod creates FIFOs, sockets (bind(2) of a Unix socket), device nodes
// (the kernel has checked CAP_MKNOD) and regular files (mknod(2) with
// S_IFREG). The kernel gives these nodes its own file operations (pipes,
// sockets, the device's driver) from the type and rdev in their
// attributes: it never sends OPEN, READ or WRITE for them.
func (r *rawFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	if st := r.virt.refuse(in.NodeId, name); st != fuse.OK {
		return st
	}
	a, err := r.fsys.Mknod(creatorCtx(cancel, &in.InHeader), r.ino(in.NodeId), name, in.Mode, uint64(in.Rdev))
	if err != nil {
		return toStatus(err)
	}
	r.fillEntry(a, out)
	return fuse.OK
}

// Fallocate is fsnode.Fallocate; the kernel has checked that the file is
// open for writing, and drops the cached pages of a punched or zeroed
// range itself.
//
// Under FUSE_HANDLE_KILLPRIV_V2 the kernel leaves clearing set-id bits
// to the daemon but marks no FALLOCATE (it has no flag for it), so the
// caller's uid stands in for its CAP_FSETID: anyone but root clears
// (fsnode.WithKillPriv), in every mode, as the kernel does without the
// capability (Linux 6.18 clears them on FALLOC_FL_KEEP_SIZE too).
func (r *rawFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return fuse.EPERM
	}
	ctx := ctxOf(cancel)
	kill := in.Uid != 0 && r.kernel.killPrivV2()
	if kill {
		ctx = fsnode.WithKillPriv(ctx)
	}
	err := r.fsys.Fallocate(ctx, r.ino(in.NodeId), int64(in.Offset), int64(in.Length), in.Mode)
	if err == nil && kill {
		r.forgetAttr(in.NodeId) // set-id bits cleared, as after a WRITE (Write)
	}
	return toStatus(err)
}

func (r *rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if r.virt.owns(h.NodeId) {
		return 0, fuse.ENOATTR
	}
	if strings.HasPrefix(attr, UpdateXattr) {
		return r.updateXattr(h, attr, dest)
	}
	if attr == InfoXattr {
		if h.NodeId != fuse.FUSE_ROOT_ID || r.infoXattr == nil {
			return 0, fuse.ENOATTR
		}
		return XattrReply(r.infoXattr, dest)
	}
	if attr == VirtualXattr {
		ref, ok, err := r.fsys.Virtual(ctxOf(cancel), r.ino(h.NodeId))
		switch {
		case err != nil:
			return 0, toStatus(err)
		case !ok:
			return 0, fuse.ENOATTR
		}
		return XattrReply(encodeVirtualGet(ref), dest)
	}
	v, err := r.fsys.Getxattr(ctxOf(cancel), r.ino(h.NodeId), attr)
	if err != nil {
		return 0, toStatus(err)
	}
	return XattrReply(v, dest)
}

// XattrReply copies v into dest, the kernel's buffer: its size alone
// when dest is empty (a size query), ERANGE when it does not fit. The
// bench's FUSE floor answers with it too.
func XattrReply(v, dest []byte) (uint32, fuse.Status) {
	if len(v) > len(dest) {
		return uint32(len(v)), fuse.ERANGE // go-fuse answers a size query (empty dest) OK
	}
	return uint32(copy(dest, v)), fuse.OK
}

func (r *rawFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if r.virt.owns(h.NodeId) {
		return 0, fuse.OK
	}
	names, err := r.fsys.Listxattr(ctxOf(cancel), r.ino(h.NodeId))
	if err != nil {
		return 0, toStatus(err)
	}
	var list []byte
	for _, n := range names {
		list = append(append(list, n...), 0)
	}
	return XattrReply(list, dest)
}

// SetXAttr passes setxattr(2)'s flags (XATTR_CREATE, XATTR_REPLACE) on
// to fsnode, whose constants are the same.
func (r *rawFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	if r.virt.owns(in.NodeId) {
		return fuse.EPERM
	}
	if attr == VirtualXattr {
		return r.setVirtual(cancel, in.NodeId, data)
	}
	if attr == InfoXattr || strings.HasPrefix(attr, UpdateXattr) {
		// Reads of these names are answered by the daemon (on the root)
		// or refused (elsewhere): a stored value could never be read
		// back.
		return fuse.EPERM
	}
	err := r.fsys.Setxattr(ctxOf(cancel), r.ino(in.NodeId), attr, data, int(in.Flags))
	if err == nil && attr == "system.posix_acl_access" {
		// The mode follows an access ACL (fsnode's acl.go), which the
		// kernel, not enforcing ACLs here, does not know. (Removing the
		// ACL leaves the mode as it is, as on ext4.)
		r.forgetAttr(in.NodeId)
	}
	return toStatus(err)
}

// setVirtual answers a set of VirtualXattr: the file becomes the file
// revision asked for (moveVirtual).
func (r *rawFS) setVirtual(cancel <-chan struct{}, nodeID uint64, data []byte) fuse.Status {
	if nodeID == fuse.FUSE_ROOT_ID {
		return r.setVirtualBatch(cancel, data)
	}
	s, err := ParseVirtualSet(data)
	if err != nil {
		return fuse.EINVAL
	}
	return toStatus(r.moveVirtual(ctxOf(cancel), nodeID, r.ino(nodeID), s))
}

// moveVirtual makes the file (nodeID to the kernel, ino to fsnode) the
// revision s asks for. The kernel writes back and forgets the file's
// pages first: pages a shared mapping left dirty would otherwise be
// written over the new revision (as the kernel launders them when it
// drops them), where a rewrite of an ordinary file replaces them. Then
// it forgets its pages and attributes again, what it read meanwhile,
// before the caller returns, so that its next stat and read see the
// revision.
func (r *rawFS) moveVirtual(ctx context.Context, nodeID uint64, ino fsnode.Ino, s VirtualSet) error {
	srv := r.kernel.srv.Load()
	if srv != nil {
		srv.InodeNotify(nodeID, 0, -1)
	}
	if _, err := r.fsys.SetVirtual(ctx, ino, s.Ref, s.Size, s.Mtime); err != nil {
		return err
	}
	if srv != nil {
		srv.InodeNotify(nodeID, 0, -1)
	}
	return nil
}

func (r *rawFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	if r.virt.owns(h.NodeId) {
		return fuse.EPERM
	}
	return toStatus(r.fsys.Removexattr(ctxOf(cancel), r.ino(h.NodeId), attr))
}

// encodeVirtualGet is the value read from VirtualXattr of a virtual file.
func encodeVirtualGet(r fsnode.VirtualRef) []byte {
	return fmt.Appendf(nil, "%x %s", r.Node, r.Path)
}

// setVirtualBatch answers a set of VirtualXattr on the root: each line
// names a file by its path under the root (EncodeVirtualBatch). The
// first failure ends the batch with its error; the files before it have
// their revisions.
func (r *rawFS) setVirtualBatch(cancel <-chan struct{}, data []byte) fuse.Status {
	sets, err := ParseVirtualBatch(data)
	if err != nil {
		return fuse.EINVAL
	}
	ctx := ctxOf(cancel)
	for _, s := range sets {
		a, err := r.fsys.LookupPath(ctx, s.Ref.Path)
		if err != nil {
			return toStatus(err)
		}
		if err := r.moveVirtual(ctx, r.nodeID(a.Ino), a.Ino, s); err != nil {
			return toStatus(err)
		}
	}
	return fuse.OK
}
