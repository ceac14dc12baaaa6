//go:build linux

package mount

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// testServer is what both adapters' servers offer the tests.
type testServer interface {
	Unmount() error
	LazyUnmount() error
	Wait()
	Done() <-chan struct{}
}

// unmountWait bounds each wait for a mount to go away: an unmount is
// answered at once, and a server's loop ends as soon as the kernel drops
// the connection, so a minute means a request stuck in the server.
const unmountWait = time.Minute

// testMount is a cache mounted in-process, through go-fuse (newMount) or
// cgofuse (newCgoMount, in builds with the cgofuse tag).
type testMount struct {
	mp    string
	cache string
	fsys  *fsnode.FS
	srv   testServer
	mnt   func(fsys *fsnode.FS, mp string, opt Options) (testServer, error)
}

// newMount creates a cache in a temporary directory and mounts it. At
// cleanup it checks for file descriptors left open on the mount, unmounts
// (retrying while busy), closes the cache and fscks it.
func newMount(t testing.TB) *testMount {
	t.Helper()
	return newMountWith(t, func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return Mount(fsys, mp, opt)
	})
}

func newMountWith(t testing.TB, mnt func(*fsnode.FS, string, Options) (testServer, error)) *testMount {
	t.Helper()
	testenv.RequireFUSE(t)
	m := &testMount{cache: t.TempDir(), mp: t.TempDir(), mnt: mnt}
	fsys, err := fsnode.Create(m.cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.fsys = fsys
	m.mount(t)
	t.Cleanup(func() { m.close(t) })
	return m
}

func (m *testMount) mount(t testing.TB) {
	t.Helper()
	srv, err := m.mnt(m.fsys, m.mp, Options{FsName: m.cache})
	if err != nil {
		m.fsys.Close()
		m.fsys = nil
		t.Fatal(err)
	}
	m.srv = srv
}

// unmount unmounts, retrying while the kernel still holds a file busy,
// and falls back to a lazy unmount (failing the test) if it must.
func (m *testMount) unmount(t testing.TB) {
	t.Helper()
	if m.srv == nil {
		return
	}
	if fds := testenv.OpenFDsUnder(m.mp); len(fds) > 0 {
		t.Errorf("file descriptors left open on the mount: %s", strings.Join(fds, ", "))
	}
	srv := m.srv
	m.srv = nil
	var err error
	for delay := 5 * time.Millisecond; delay < 2*time.Second; delay *= 2 {
		if !testenv.Within(t, unmountWait, "unmounting "+m.mp, func() { err = srv.Unmount() }) {
			m.abandon(t, srv)
			return
		}
		if err == nil || !errors.Is(err, syscall.EBUSY) && !strings.Contains(err.Error(), "busy") {
			break
		}
		time.Sleep(delay)
	}
	if err != nil {
		t.Errorf("unmount: %v; unmounting lazily", err)
		if err := srv.LazyUnmount(); err != nil {
			t.Errorf("lazy unmount: %v", err)
		}
	}
	select {
	case <-srv.Done():
	case <-time.After(unmountWait):
		t.Errorf("%s: the file system server still runs %v after the unmount (a process still holds files open on it, or a request is stuck)", m.mp, unmountWait)
		m.abandon(t, srv)
	}
}

// abandon gives up on a server that would not stop: the mount is
// detached so that later tests do not trip on it, and the cache, which
// its loop may still use, is left open instead of closed under it.
func (m *testMount) abandon(t testing.TB, srv testServer) {
	t.Helper()
	if err := srv.LazyUnmount(); err != nil {
		t.Logf("lazy unmount of %s: %v", m.mp, err)
	}
	m.fsys = nil
}

// remount closes and reopens the cache between an unmount and a mount, as
// a restart of the daemon does.
func (m *testMount) remount(t testing.TB) {
	t.Helper()
	m.unmount(t)
	if m.fsys == nil {
		t.FailNow() // abandoned: unmount said why
	}
	if err := m.fsys.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	m.fsys = nil
	checkFsck(t, m.cache)
	fsys, err := fsnode.Open(m.cache, fsnode.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	m.fsys = fsys
	m.mount(t)
}

func (m *testMount) close(t testing.TB) {
	t.Helper()
	m.unmount(t)
	if m.fsys != nil {
		if err := m.fsys.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		m.fsys = nil
		checkFsck(t, m.cache)
	}
}

func (m *testMount) path(elem ...string) string {
	return filepath.Join(append([]string{m.mp}, elem...)...)
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if afterWriteFile != nil {
		afterWriteFile(t, name)
	}
}

// afterWriteFile, while set, is called on each file writeFile wrote:
// TestConformanceVirtualMount makes the files of the mount's POSIX cases
// virtual there. (No mount test runs in parallel with another.)
var afterWriteFile func(t *testing.T, name string)

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func stat(t *testing.T, name string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(name, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}
