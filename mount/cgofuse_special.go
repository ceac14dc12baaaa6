//go:build (linux && cgofuse) || windows

package mount

// The cgofuse adapter's special files (Mknod) and extended attributes.
// cgofuse (v1.6) has no fallocate callback: libfuse answers FALLOCATE
// with ENOSYS, and the kernel then fails fallocate(2) with EOPNOTSUPP
// (glibc's posix_fallocate falls back to writing zeros), so this backend
// has no fallocate while the go-fuse one has every mode fsnode offers.

import (
	"context"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// Mknod creates FIFOs, sockets, device nodes and regular files, as the
// raw adapter's Mknod. libfuse passes the kernel's device number through
// unchanged in both directions.
func (a *cgoFS) Mknod(p string, mode uint32, dev uint64) (rc int) {
	defer a.recovered(&rc)
	return a.makeNode(p, func(ctx context.Context, dir fsnode.Ino, name string) (fsnode.Attr, error) {
		return a.fsys.Mknod(ctx, dir, name, mode, dev)
	})
}

// xattrIno resolves p for an xattr call; in is true for the control
// directory, which has no attributes.
func (a *cgoFS) xattrIno(p string) (ino fsnode.Ino, in bool, err error) {
	if _, in, err := a.ctlNode(p); in {
		return 0, true, err
	}
	attr, err := a.resolve(p)
	if err != nil {
		return 0, false, err
	}
	a.put(attr.Ino)
	return attr.Ino, false, nil
}

func (a *cgoFS) Getxattr(p string, name string) (rc int, _ []byte) {
	defer a.recovered(&rc)
	ino, ctl, err := a.xattrIno(p)
	if err != nil {
		return toErrno(err), nil
	}
	if ctl {
		return -fuse.ENODATA, nil
	}
	v, err := a.fsys.Getxattr(a.ctx(), ino, name)
	if err != nil {
		return toErrno(err), nil
	}
	return 0, v
}

// Listxattr fills the names; a buffer too small for them is ERANGE.
func (a *cgoFS) Listxattr(p string, fill func(name string) bool) (rc int) {
	defer a.recovered(&rc)
	ino, ctl, err := a.xattrIno(p)
	if err != nil {
		return toErrno(err)
	}
	if ctl {
		return 0
	}
	names, err := a.fsys.Listxattr(a.ctx(), ino)
	if err != nil {
		return toErrno(err)
	}
	for _, n := range names {
		if !fill(n) {
			return -fuse.ERANGE
		}
	}
	return 0
}

// Setxattr passes setxattr(2)'s flags on; fsnode's constants are
// Linux's, which cgofuse's are too.
func (a *cgoFS) Setxattr(p string, name string, value []byte, flags int) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(p); err != nil {
		return toErrno(err)
	}
	ino, _, err := a.xattrIno(p)
	if err != nil {
		return toErrno(err)
	}
	return toErrno(a.fsys.Setxattr(a.ctx(), ino, name, value, flags))
}

func (a *cgoFS) Removexattr(p string, name string) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(p); err != nil {
		return toErrno(err)
	}
	ino, _, err := a.xattrIno(p)
	if err != nil {
		return toErrno(err)
	}
	return toErrno(a.fsys.Removexattr(a.ctx(), ino, name))
}
