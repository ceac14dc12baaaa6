//go:build linux && cgofuse

package mount

import (
	"bytes"
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

// newCgoMount creates a cache and mounts it in-process through cgofuse
// and libfuse3, the adapter WinFsp runs, here over the Linux kernel; the
// cleanup is newMount's.
func init() {
	damageMounts["cgofuse"] = func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return MountCgofuse(fsys, mp, opt)
	}
}

func newCgoMount(t testing.TB) *testMount {
	t.Helper()
	return newMountWith(t, func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return MountCgofuse(fsys, mp, opt)
	})
}

// TestCgofuseConformance runs fsnode's POSIX conformance suite through
// the kernel, libfuse3 and cgofuse, as TestConformance does for go-fuse.
func TestCgofuseConformance(t *testing.T) {
	m := newCgoMount(t)
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		dir := m.path(posixtest.DirName(t))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return posixtest.OS(dir)
	})
}

// TestCgofusePOSIX runs the go-fuse mount's POSIX cases (posixCases) on a
// cgofuse mount.
func TestCgofusePOSIX(t *testing.T) {
	m := newCgoMount(t)
	for name, fn := range posixCases {
		t.Run(name, func(t *testing.T) {
			dir := m.path(name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, dir)
		})
	}
	// No hidden files left behind by unlinking open files.
	if out := runIn(t, m.mp, "find", ".", "-name", ".fuse_hidden*"); out != "" {
		t.Errorf("libfuse hidden files on the mount:\n%s", out)
	}
}

// TestCgofuseHg runs real hg (init, add, commit, mv, rm, update back and
// forth: hgScript) inside a cgofuse mount and compares the history with
// the same script run on the native file system; then hg verify, a clone
// into the mount and an update there, before and after a remount.
func TestCgofuseHg(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: about 20 hg runs")
	}
	testenv.HgPath(t)
	m := newCgoMount(t)
	native := t.TempDir()
	nativeDone := make(chan error, 1)
	go func() { nativeDone <- hgScript(native) }()
	// The native run is waited for either way: it must not outlive the
	// test and write into its removed temporary directory.
	mountErr, nativeErr := hgScript(m.mp), <-nativeDone
	if mountErr != nil {
		t.Fatal(mountErr)
	}
	if nativeErr != nil {
		t.Fatal(nativeErr)
	}
	nr, mr := filepath.Join(native, "repo"), m.path("repo")
	same := func(dir string, args []string, want []byte) {
		t.Helper()
		if got := testenv.Hg(t, dir, args...); !bytes.Equal(got, want) {
			t.Errorf("hg %s in %s differs:\n--- native\n%s--- mount\n%s", strings.Join(args, " "), dir, want, got)
		}
	}
	nativeLog := testenv.Hg(t, nr, "log", "--debug")
	same(mr, []string{"log", "--debug"}, nativeLog)
	same(mr, []string{"status", "--all"}, testenv.Hg(t, nr, "status", "--all"))
	testenv.Hg(t, mr, "verify", "-q")

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

// TestCgofuseControlDir checks MOUNTPOINT/.hgfs on the cgofuse mount:
// found by name, never listed, never changeable, stats is this process.
func TestCgofuseControlDir(t *testing.T) {
	m := newCgoMount(t)
	writeFile(t, m.path("a"), "x")
	ents, err := os.ReadDir(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "a" {
		t.Fatalf("root lists %v, want only a", ents)
	}
	info, err := ReadInfo(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pid != os.Getpid() || info.Kind != "cache" || info.Source != m.cache || info.Stats == nil {
		t.Fatalf("info = %+v", info)
	}
	for _, err := range []error{
		os.WriteFile(filepath.Join(m.mp, VirtualDirName, "x"), nil, 0o644),
		os.WriteFile(StatsPath(m.mp), nil, 0o644),
		os.Mkdir(filepath.Join(m.mp, VirtualDirName), 0o755),
		os.Rename(m.path("a"), filepath.Join(m.mp, VirtualDirName)),
		os.Remove(StatsPath(m.mp)),
	} {
		if err == nil {
			t.Errorf("changing the control directory succeeded")
		}
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
