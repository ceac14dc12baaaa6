//go:build linux

package posixtest

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNative runs the suite on the native file system: it checks the
// cases themselves against the kernel's behaviour.
func TestNative(t *testing.T) {
	Run(t, func(t *testing.T) FS { return OS(t.TempDir()) })
}

// TestNativeTmpfs runs it on tmpfs (/dev/shm) as well, where the
// attribute and allocation rules differ in details from ext4's.
func TestNativeTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm")
	}
	Run(t, func(t *testing.T) FS {
		dir, err := os.MkdirTemp("/dev/shm", "posixtest")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return OSWith(dir, OSOptions{NoZeroRange: true})
	})
}
