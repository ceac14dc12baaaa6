//go:build linux

package mount

import (
	"bytes"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// suiteSpecialPersist: FIFOs, sockets, device nodes, extended attributes
// and punched holes made through the mount are there, the same, after
// an unmount, a restart of the cache and a new mount.
func suiteSpecialPersist(t *testing.T, b backend, m *testMount) {
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must(unix.Mkfifo(m.path("fifo"), 0o640), "mkfifo")
	// A socket node stays after its listener closes (as on any file system).
	fd, err := unix.Open(m.mp, unix.O_PATH|unix.O_DIRECTORY, 0)
	must(err, "open the mount point")
	l, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(fd)+"/sock")
	unix.Close(fd)
	must(err, "bind")
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	root := os.Geteuid() == 0
	if root {
		must(unix.Mknod(m.path("null"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))), "mknod")
	}
	data := bytes.Repeat([]byte("0123456789"), 2000)
	writeFile(t, m.path("f"), string(data))
	must(unix.Setxattr(m.path("f"), "user.a", []byte("alpha"), 0), "setxattr")
	must(unix.Setxattr(m.path("f"), "user.b", make([]byte, 5000), 0), "setxattr")
	must(os.Mkdir(m.path("d"), 0o755), "mkdir")
	must(unix.Setxattr(m.path("d"), "user.d", []byte("dir"), 0), "setxattr")
	if !b.lacks.NoFallocate {
		f, err := os.OpenFile(m.path("f"), os.O_RDWR, 0)
		must(err, "open")
		must(unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 100, 10000), "punch hole")
		must(unix.Fallocate(int(f.Fd()), 0, 0, 30000), "allocate")
		f.Close()
		clear(data[100:10100])
		data = append(data, make([]byte, 10000)...)
	}
	m.remount(t)
	check := func(name string, mode uint32, rdev uint64) {
		t.Helper()
		var st unix.Stat_t
		must(unix.Lstat(m.path(name), &st), "stat "+name)
		if st.Mode != mode || st.Rdev != rdev {
			t.Errorf("%s: mode %#o rdev %#x, want %#o %#x", name, st.Mode, st.Rdev, mode, rdev)
		}
	}
	check("fifo", syscall.S_IFIFO|0o640&^umask(), 0)
	var st unix.Stat_t
	must(unix.Lstat(m.path("sock"), &st), "stat sock")
	if st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		t.Errorf("sock: mode %#o", st.Mode)
	}
	if root {
		check("null", syscall.S_IFCHR|0o666&^umask(), unix.Mkdev(1, 3))
	}
	if got := readFile(t, m.path("f")); got != string(data) {
		t.Errorf("f: %d bytes, want %d", len(got), len(data))
	}
	names, err := posixtest.XattrNames(m.path("f"))
	must(err, "listxattr")
	if !slices.Equal(names, []string{"user.a", "user.b"}) {
		t.Errorf("f lists %q", names)
	}
	buf := make([]byte, 10)
	n, err := unix.Getxattr(m.path("f"), "user.a", buf)
	if err != nil || string(buf[:n]) != "alpha" {
		t.Errorf("user.a = %q, %v", buf[:n], err)
	}
	if n, err := unix.Getxattr(m.path("d"), "user.d", buf); err != nil || string(buf[:n]) != "dir" {
		t.Errorf("user.d = %q, %v", buf[:n], err)
	}
	// Gone with their inodes: fsck (at cleanup) finds no stray records.
	for _, name := range []string{"fifo", "sock", "f"} {
		must(os.Remove(m.path(name)), "remove "+name)
	}
	must(os.Remove(m.path("d")), "rmdir")
}

func umask() uint32 {
	old := unix.Umask(0)
	unix.Umask(old)
	return uint32(old)
}
