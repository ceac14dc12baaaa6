//go:build linux && cgofuse

package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// On Linux the cgofuse adapter runs over libfuse3's high-level API. It
// exists to test the adapter WinFsp uses; go-fuse stays the default.
const (
	// Linux holds any name but "/" and NUL.
	cgofuseWindowsNames = false
	// libfuse hides open files instead of unlinking them unless
	// hard_remove is set, and cgofuse clears libfuse's configuration in
	// its init callback, so the adapter undoes the hiding itself.
	cgofuseLibfuseHide = true
	// libfuse names the caller of every request (fuse.Getcontext).
	cgofuseCallerKnown = true

	fuseLibraryMissing = "libfuse3 (libfuse3.so.3) is not installed; install fuse3 (e.g. apt-get install fuse3)"
)

// cgofuseMountpoint checks that mp is an existing directory.
func cgofuseMountpoint(mp string) (string, error) {
	abs, err := filepath.Abs(mp)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// cgofuseArgs is libfuse's command line (cgofuse adds the mount point and
// -f): the same kernel-facing choices as the go-fuse mount. (libfuse
// 3.14 prints "Ignoring invalid max threads value 4294967295" at every
// mount through fuse_main_real whatever -o max_threads says; it is
// harmless, the default of 10 worker threads applies.)
func cgofuseArgs(opt Options) []string {
	fsname := opt.FsName
	if fsname == "" {
		fsname = "hgfs"
	}
	// libfuse splits -o values at commas; a backslash escapes.
	fsname = strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(fsname)
	o := []string{"fsname=" + fsname, "subtype=hgfs", "default_permissions"}
	if opt.AllowOther {
		o = append(o, "allow_other")
	}
	if opt.ReadOnly {
		o = append(o, "ro")
	}
	if os.Geteuid() == 0 {
		// Device nodes that open, as the go-fuse mount's (cacheMountOptions).
		o = append(o, "dev")
	}
	args := []string{"-o", strings.Join(o, ",")}
	if opt.Debug {
		args = append(args, "-d")
	}
	return args
}

// cgofuseUnmount unmounts with fusermount3 like the go-fuse mount (cgofuse's
// own Unmount is always lazy); the loop in host.Mount then ends. cgofuse
// also detaches the mount itself on SIGINT and SIGTERM, racing the
// command's own unmount on the same signal: a mount already gone is not
// an error.
func cgofuseUnmount(s *CgofuseServer, lazy bool) error {
	err := UnmountPath(s.mountpoint, lazy)
	if err != nil && !isMountpoint(s.mountpoint) {
		return nil
	}
	return err
}

// isMountpoint reports whether dir is a mount point in this process's
// mount namespace (/proc/self/mountinfo, field 5, octal escapes).
func isMountpoint(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true // cannot tell: keep the unmount error
	}
	unescape := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && unescape.Replace(f[4]) == dir {
			return true
		}
	}
	return false
}
