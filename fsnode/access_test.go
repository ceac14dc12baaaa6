package fsnode

import (
	"syscall"
	"testing"
)

// TestCheckAccess checks the non-root branch of the access(2) answer,
// which a root mount (the only one without default_permissions) never
// reaches through the kernel; the root branch is compared with the
// kernel's own answer in package mount's Access POSIX case.
func TestCheckAccess(t *testing.T) {
	const uid, gid = 1000, 100
	reg := uint32(syscall.S_IFREG)
	for _, c := range []struct {
		mask, mode, callerUid, callerGid uint32
		want                             error
	}{
		{4, reg | 0o400, uid, 1, nil},              // owner read
		{2, reg | 0o400, uid, 1, syscall.EACCES},   // owner, no write bit
		{2, reg | 0o020, uid, gid, syscall.EACCES}, // owner class wins over group
		{2, reg | 0o020, 7, gid, nil},              // group write
		{1, reg | 0o001, 7, 8, nil},                // other execute
		{6, reg | 0o004, 7, 8, syscall.EACCES},     // other: read yes, write no
		{0, reg, 7, 8, nil},                        // F_OK
		{1, reg | 0o644, 0, 0, syscall.EACCES},     // root, no execute bit anywhere
		{1, reg | 0o010, 0, 0, nil},                // root, one execute bit
		{7, syscall.S_IFDIR, 0, 0, nil},            // root searches any directory
		{6, reg, 0, 0, nil},                        // root reads and writes mode 0
	} {
		a := Attr{Mode: c.mode, Uid: uid, Gid: gid}
		if got := a.CheckAccess(c.mask, c.callerUid, c.callerGid); got != c.want {
			t.Errorf("CheckAccess(mask %o, mode %o, caller %d:%d) = %v, want %v", c.mask, c.mode, c.callerUid, c.callerGid, got, c.want)
		}
	}
}
