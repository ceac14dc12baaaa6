//go:build linux && cgofuse

package mount

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/fsnode/posixtest"
	"github.com/hgfs/hgfs/testenv"
)

// cgofuseBackend mounts in-process through cgofuse and libfuse3, the
// adapter WinFsp runs, here over the Linux kernel. The shared suite
// (TestBackends) runs on it too; after its POSIX cases no file libfuse
// hid instead of unlinking it may be left.
var cgofuseBackend = backend{
	name: "cgofuse",
	// cgofuse has no fallocate callback (see cgofuse_special.go).
	lacks: posixtest.OSOptions{NoFallocate: true},
	mount: func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return MountCgofuse(fsys, mp, opt)
	},
	afterPOSIX: func(t *testing.T, m *testMount) {
		if out := runIn(t, m.mp, "find", ".", "-name", ".fuse_hidden*"); out != "" {
			t.Errorf("libfuse hidden files on the mount:\n%s", out)
		}
	},
}

func init() { backends = append(backends, cgofuseBackend) }

// newCgoMount creates a cache and mounts it through cgofuseBackend; the
// cleanup is newMount's.
func init() {
	damageMounts["cgofuse"] = func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return MountCgofuse(fsys, mp, opt)
	}
}

func newCgoMount(t testing.TB) *testMount {
	t.Helper()
	return newMountWith(t, cgofuseBackend.mount)
}

// TestCgofuseHg runs real hg (init, add, commit, mv, rm, update back and
// forth: hgScript) inside a cgofuse mount and compares the history with
// the same script run on the native file system; then hg verify, a clone
// into the mount and an update there, before and after a remount.
func TestCgofuseHg(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: about 20 hg runs")
	}
	m := newCgoMount(t)
	nr, mr, nativeLog, same := hgScriptOn(t, m)

	// A clone into the mount by pull, updated to an older revision and
	// back, then committed to.
	testenv.Hg(t, m.mp, "clone", "-q", "--pull", nr, "pulled")
	pr := m.path("pulled")
	testenv.Hg(t, pr, "update", "-q", "0")
	if got, want := readFile(t, filepath.Join(pr, "dir", "b.txt")), string(testenv.Hg(t, nr, "cat", "-r", "0", "dir/b.txt")); got != want {
		t.Errorf("dir/b.txt at rev 0 differs after hg update")
	}
	testenv.Hg(t, pr, "update", "-q", "tip")
	writeFile(t, filepath.Join(pr, "new.txt"), "added through cgofuse\n")
	testenv.Hg(t, pr, "commit", "-qAm", "fourth", "-d", "3 0")
	testenv.Hg(t, pr, "verify", "-q")
	if got := string(testenv.Hg(t, pr, "log", "-r", "tip", "-T", "{rev} {desc} {files}\n")); got != "3 fourth new.txt\n" {
		t.Errorf("tip after commit: %q", got)
	}

	m.remount(t)
	same(mr, []string{"log", "--debug"}, nativeLog)
	testenv.Hg(t, pr, "verify", "-q")
	if got := readFile(t, filepath.Join(pr, "new.txt")); got != "added through cgofuse\n" {
		t.Errorf("new.txt after remount: %q", got)
	}
}

// TestCgofuseReadOnly checks that a read-only mount refuses changes with
// EROFS and still serves reads.
func TestCgofuseReadOnly(t *testing.T) {
	testenv.RequireFUSE(t)
	cache, mp := t.TempDir(), t.TempDir()
	fsys, err := fsnode.Create(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.WriteFile(t.Context(), "f", []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := MountCgofuse(fsys, mp, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		var err error
		if testenv.Within(t, unmountWait, "unmounting "+mp, func() { err = srv.Unmount() }) && err != nil {
			t.Error(err)
		}
	}()
	if got := readFile(t, filepath.Join(mp, "f")); got != "data" {
		t.Fatalf("read %q", got)
	}
	if err := os.WriteFile(filepath.Join(mp, "g"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("create on a read-only mount: %v, want EROFS", err)
	}
}

// newAdapter is the cgofuse adapter over a fresh cache, called directly
// (no kernel): for what only WinFsp would send.
func newAdapter(t *testing.T) *cgoFS {
	t.Helper()
	fsys, err := fsnode.Create(t.TempDir(), fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fsys.Close(); err != nil {
			t.Error(err)
		}
	})
	a := newCgoFS(fsys, false, func() any { return nil })
	a.caller = func() (uint32, uint32) { return uint32(os.Getuid()), uint32(os.Getgid()) }
	return a
}

// TestCgofuseWindowsNames checks the WinFsp rules: names Windows cannot
// hold are refused with EINVAL and left out of listings.
func TestCgofuseWindowsNames(t *testing.T) {
	a := newAdapter(t)
	// Made before the rules apply, as a cache filled on Linux would be.
	for _, p := range []string{"/ok", "/aux", "/a:b"} {
		if errc := a.Mkdir(p, 0o755); errc != 0 {
			t.Fatalf("mkdir %s: %d", p, errc)
		}
	}
	a.winNames = true
	for _, p := range []string{"/con.txt", "/x.", "/ok/LPT1", "/q?", "/ok/nul"} {
		if errc := a.Mkdir(p, 0o755); errc != -fuse.EINVAL {
			t.Errorf("mkdir %s: %d, want -EINVAL", p, errc)
		}
		if errc, _ := a.Create(p, fuse.O_RDWR, 0o644); errc != -fuse.EINVAL {
			t.Errorf("create %s: %d, want -EINVAL", p, errc)
		}
		if errc := a.Rename("/ok", p); errc != -fuse.EINVAL && !strings.HasPrefix(p, "/ok/") {
			t.Errorf("rename onto %s: %d, want -EINVAL", p, errc)
		}
	}
	if errc := a.Mkdir("/ok/fine.i", 0o755); errc != 0 {
		t.Fatalf("mkdir of a good name: %d", errc)
	}
	var names []string
	errc, fh := a.Opendir("/")
	if errc != 0 {
		t.Fatal(errc)
	}
	defer a.Releasedir("/", fh)
	a.Readdir("/", func(name string, st *fuse.Stat_t, off int64) bool {
		names = append(names, name)
		return true
	}, 0, fh)
	if strings.Join(names, " ") != ". .. ok" {
		t.Errorf("listing %q, want . .. ok", names)
	}
}

// TestCgofuseAdapterErrors checks the error mapping and handle table the
// kernel never exercises: bad handles, the root, unknown rename flags.
func TestCgofuseAdapterErrors(t *testing.T) {
	a := newAdapter(t)
	if n := a.Read("/x", make([]byte, 4), 0, 12345); n != -fuse.EBADF {
		t.Errorf("read of an unknown handle: %d", n)
	}
	if errc := a.Rmdir("/"); errc != -fuse.EINVAL {
		t.Errorf("rmdir /: %d", errc)
	}
	var st fuse.Stat_t
	if errc := a.Getattr("/nope/deeper", &st, noFh); errc != -fuse.ENOENT {
		t.Errorf("getattr of a missing path: %d", errc)
	}
	errc, fh := a.Create("/f", fuse.O_WRONLY, 0o600)
	if errc != 0 {
		t.Fatal(errc)
	}
	if n := a.Write("/f", []byte("abc"), 0, fh); n != 3 {
		t.Fatalf("write: %d", n)
	}
	// Unlinked but open: the handle still answers getattr, with nlink 0.
	if errc := a.Unlink("/f"); errc != 0 {
		t.Fatal(errc)
	}
	if errc := a.Getattr("", &st, fh); errc != 0 || st.Nlink != 0 || st.Size != 3 {
		t.Errorf("getattr by handle after unlink: %d nlink %d size %d", errc, st.Nlink, st.Size)
	}
	if errc := a.Release("/f", fh); errc != 0 {
		t.Fatal(errc)
	}
	if errc := a.Rename3("/a", "/b", 1<<5); errc != -fuse.EINVAL {
		t.Errorf("unknown rename flag: %d", errc)
	}
	if errc := a.Mkdir("/"+VirtualDirName, 0o755); errc != -fuse.EPERM {
		t.Errorf("mkdir of the control directory: %d", errc)
	}
}

// TestCgofuseAccess checks that Access makes the real permission check
// for the caller libfuse names (it used to allow everything): the kernel
// never sends ACCESS to a default_permissions mount, so the adapter is
// called directly.
func TestCgofuseAccess(t *testing.T) {
	a := newAdapter(t)
	errc, fh := a.Create("/f", fuse.O_WRONLY, 0o640)
	if errc != 0 {
		t.Fatal(errc)
	}
	a.Release("/f", fh)
	owner, group := uint32(os.Getuid()), uint32(os.Getgid())
	for _, c := range []struct {
		path     string
		mask     uint32
		uid, gid uint32
		want     int
	}{
		{"/f", 6, owner, group, 0},
		{"/f", 1, owner, group, -fuse.EACCES},
		{"/f", 4, owner + 1000, group, 0},                   // group read
		{"/f", 2, owner + 1000, group, -fuse.EACCES},        // group, no write bit
		{"/f", 4, owner + 1000, group + 1000, -fuse.EACCES}, // other: nothing
		{"/", 7, owner, group, 0},
		{"/missing", 0, owner, group, -fuse.ENOENT},
		{"/" + VirtualDirName + "/stats", 4, owner + 1000, group + 1000, 0},
		{"/" + VirtualDirName + "/stats", 2, owner + 1000, group + 1000, -fuse.EACCES},
		{"/" + VirtualDirName, 5, owner + 1000, group + 1000, 0},
	} {
		a.caller = func() (uint32, uint32) { return c.uid, c.gid }
		if got := a.Access(c.path, c.mask); got != c.want {
			t.Errorf("Access(%s, %o) as %d:%d = %d, want %d", c.path, c.mask, c.uid, c.gid, got, c.want)
		}
	}
}

// TestCgofuseUnmountFromOutside checks the lifecycle `hgfs unmount` and
// cgofuse's own signal handler rely on: a mount detached by someone else
// ends the file system loop (Wait returns), and a later Unmount is not an
// error.
func TestCgofuseUnmountFromOutside(t *testing.T) {
	testenv.RequireFUSE(t)
	cache, mp := t.TempDir(), t.TempDir()
	fsys, err := fsnode.Create(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := MountCgofuse(fsys, mp, Options{})
	if err != nil {
		fsys.Close()
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mp, "f"), "kept")
	if err := UnmountPath(mp, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
	case <-time.After(unmountWait):
		t.Fatalf("the cgofuse loop still runs %v after %s was unmounted from outside", unmountWait, mp)
	}
	if err := srv.Unmount(); err != nil {
		t.Errorf("Unmount after an outside unmount: %v", err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, cache)
	fsys, err = fsnode.Open(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if got, err := fsys.ReadFile(t.Context(), "f"); err != nil || string(got) != "kept" {
		t.Fatalf("after remount f = %q, %v", got, err)
	}
}
