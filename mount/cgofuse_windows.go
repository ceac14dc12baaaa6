//go:build windows

package mount

import (
	"fmt"
	"os"
	"path/filepath"
)

// On Windows the cgofuse adapter is the only one, over WinFsp's FUSE
// layer, built without cgo: cgofuse loads winfsp-x64.dll (or -a64, -x86)
// at run time, from the DLL search path or WinFsp's install directory as
// the registry records it.
const (
	// Windows cannot hold every name Linux can (see WindowsName).
	cgofuseWindowsNames = true
	// WinFsp never hides files: Windows deletes on the last close.
	cgofuseLibfuseHide = false
	// WinFsp names the caller only in requests that create (see
	// cgoFS.Access).
	cgofuseCallerKnown = false

	fuseLibraryMissing = "WinFsp is not installed; get it from https://winfsp.dev/rel/"
)

// cgofuseMountpoint accepts a drive letter ("X:") or a directory that
// does not exist yet in an existing parent: WinFsp creates the directory
// (as a reparse point) and removes it at unmount.
func cgofuseMountpoint(mp string) (string, error) {
	if isDriveLetter(mp) {
		return mp[:2], nil
	}
	abs, err := filepath.Abs(mp)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(abs); err == nil {
		return "", fmt.Errorf("%s exists; WinFsp mounts on a drive letter (X:) or a directory it creates", abs)
	}
	if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: parent directory missing", abs)
	}
	return abs, nil
}

// cgofuseArgs is WinFsp's FUSE command line: files owned by the user who
// mounts (uid=-1, gid=-1), a volume label and a file system name.
func cgofuseArgs(opt Options) []string {
	args := []string{"-o", "uid=-1,gid=-1,volname=hgfs", "--FileSystemName=hgfs"}
	if opt.Debug {
		args = append(args, "-d")
	}
	return args
}

// cgofuseUnmount stops WinFsp's dispatcher (fuse_exit); Windows deletes
// open files on their last close, so there is no lazy variant.
func cgofuseUnmount(s *CgofuseServer, lazy bool) error {
	if !s.host.Unmount() {
		return fmt.Errorf("unmount %s: WinFsp refused", s.mountpoint)
	}
	return nil
}
