//go:build linux

package posixtest

import (
	"fmt"
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

// TestNativeHooked runs it on the native file system through Hooked with
// a hook that reads each file back through its descriptor: the wrapper
// itself changes nothing the cases see.
func TestNativeHooked(t *testing.T) {
	calls := 0
	Run(t, func(t *testing.T) FS {
		return Hooked(t, OS(t.TempDir()), func(f File) error {
			calls++
			st, err := f.Stat()
			if err != nil {
				return err
			}
			fd := f.(interface{ Fd() uintptr }).Fd()
			data, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", fd))
			if err == nil && int64(len(data)) != st.Size {
				err = fmt.Errorf("read %d bytes, size %d", len(data), st.Size)
			}
			return err
		})
	})
	if calls == 0 {
		t.Error("the hook was never called")
	}
}
