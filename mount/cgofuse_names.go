package mount

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCgofuseNotBuilt is returned by MountCgofuse in builds without the
// cgofuse adapter.
var ErrCgofuseNotBuilt = errors.New("the cgofuse backend is not in this build (on Linux rebuild with -tags cgofuse,fuse3, which needs cgo and libfuse3-dev)")

// ErrFuseLibraryMissing is returned by MountCgofuse when the FUSE library
// cgofuse loads at run time (WinFsp's DLL on Windows, libfuse3.so.3 on
// Linux) cannot be loaded; the message says where to get it.
var ErrFuseLibraryMissing = errors.New("FUSE library not found")

// WindowsName reports why Windows cannot hold name as a file name, or nil
// if it can: control characters, any of \ / : * ? " < > |, a trailing dot
// or space, or a reserved device name (CON, PRN, AUX, NUL, COM1-COM9,
// LPT1-LPT9, alone or before a dot, in any case). Mercurial's store
// encoding never produces such names (keep in sync with
// mercurial/store.py: _auxencode, _winres3, _winres4, _reserved), so a
// store cloned on any platform mounts whole on Windows; the WinFsp adapter
// refuses to create others (EINVAL) and leaves existing ones out of
// listings.
func WindowsName(name string) error {
	if name == "" {
		return errors.New("empty name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || strings.IndexByte(`\/:*?"<>|`, c) >= 0 {
			return fmt.Errorf("%q: Windows does not allow %q in file names", name, c)
		}
	}
	if last := name[len(name)-1]; last == '.' || last == ' ' {
		if name != "." && name != ".." {
			return fmt.Errorf("%q: Windows drops a trailing dot or space", name)
		}
	}
	base := name
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToLower(base)
	switch {
	case base == "con" || base == "prn" || base == "aux" || base == "nul",
		len(base) == 4 && (base[:3] == "com" || base[:3] == "lpt") && base[3] >= '1' && base[3] <= '9':
		return fmt.Errorf("%q: %s is a reserved device name on Windows", name, strings.ToUpper(base))
	}
	return nil
}

// isLibfuseHidden reports whether name is one libfuse's high-level API
// gives an open file it "unlinks" without hard_remove
// (".fuse_hidden%08x%08x", keep in sync with libfuse lib/fuse.c
// hidden_name). The adapter treats a rename to such a name as the unlink
// it stands for, and reserves these names (EPERM on create).
func isLibfuseHidden(name string) bool {
	const prefix = ".fuse_hidden"
	if len(name) != len(prefix)+16 || !strings.HasPrefix(name, prefix) {
		return false
	}
	for _, c := range name[len(prefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isDriveLetter reports whether mp names a whole drive: X: (or with a
// trailing slash or backslash).
func isDriveLetter(mp string) bool {
	if len(mp) < 2 || len(mp) > 3 || mp[1] != ':' {
		return false
	}
	c := mp[0] | 0x20 // lower case
	return 'a' <= c && c <= 'z' && (len(mp) == 2 || mp[2] == '\\' || mp[2] == '/')
}
