//go:build linux

package mount

import (
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestAccessStatus checks the non-root branch of the adapter's access(2)
// answer, which a root mount (the only one without default_permissions)
// never reaches through the kernel; the root branch is compared with the
// kernel's own answer in the Access POSIX case.
func TestAccessStatus(t *testing.T) {
	const uid, gid = 1000, 100
	reg := uint32(syscall.S_IFREG)
	for _, c := range []struct {
		mask, mode, callerUid, callerGid uint32
		want                             fuse.Status
	}{
		{4, reg | 0o400, uid, 1, fuse.OK},       // owner read
		{2, reg | 0o400, uid, 1, fuse.EACCES},   // owner, no write bit
		{2, reg | 0o020, uid, gid, fuse.EACCES}, // owner class wins over group
		{2, reg | 0o020, 7, gid, fuse.OK},       // group write
		{1, reg | 0o001, 7, 8, fuse.OK},         // other execute
		{6, reg | 0o004, 7, 8, fuse.EACCES},     // other: read yes, write no
		{0, reg, 7, 8, fuse.OK},                 // F_OK
		{1, reg | 0o644, 0, 0, fuse.EACCES},     // root, no execute bit anywhere
		{1, reg | 0o010, 0, 0, fuse.OK},         // root, one execute bit
		{7, syscall.S_IFDIR, 0, 0, fuse.OK},     // root searches any directory
		{6, reg, 0, 0, fuse.OK},                 // root reads and writes mode 0
	} {
		if got := accessStatus(c.mask, c.mode, uid, gid, c.callerUid, c.callerGid); got != c.want {
			t.Errorf("accessStatus(mask %o, mode %o, caller %d:%d) = %v, want %v", c.mask, c.mode, c.callerUid, c.callerGid, got, c.want)
		}
	}
}
