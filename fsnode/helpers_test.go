package fsnode

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// newTestFS creates a cache in a temporary directory; at cleanup it is
// closed and must pass Fsck (bbolt's btesting habit).
func newTestFS(t testing.TB, opt Options) *FS {
	t.Helper()
	dir := t.TempDir()
	if opt.CommitInterval == 0 {
		opt.CommitInterval = time.Millisecond
	}
	f, err := Create(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkFsck(t, dir)
	})
	return f
}

// checkFsck fails the test unless the closed cache in dir is consistent.
func checkFsck(t testing.TB, dir string) {
	t.Helper()
	r, err := Fsck(dir, false)
	if err != nil {
		t.Errorf("Fsck: %v", err)
		return
	}
	if !r.OK() {
		t.Errorf("Fsck found problems:\n%s", r)
	}
}

var bg = context.Background()

func wantErrno(t testing.TB, err error, want syscall.Errno) {
	t.Helper()
	if got := ToErrno(err); got != want {
		t.Fatalf("error %v (%d), want %v", err, got, want)
	}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// createFile creates name in parent with data, releases the handle and
// drops the kernel reference.
func createFile(t testing.TB, f *FS, parent Ino, name string, data []byte) Attr {
	t.Helper()
	a, h, err := f.Create(bg, parent, name, 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if len(data) > 0 {
		if n, err := f.Write(bg, h, 0, data); err != nil || n != len(data) {
			t.Fatalf("write %s: %d, %v", name, n, err)
		}
	}
	f.Release(h)
	f.Forget(a.Ino, 1) // as the kernel would, eventually
	a.Size = uint64(len(data))
	return a
}

func readAll(t testing.TB, f *FS, ino Ino) []byte {
	t.Helper()
	h, err := f.Open(bg, ino, syscall.O_RDONLY)
	if err != nil {
		t.Fatalf("open %d: %v", ino, err)
	}
	defer f.Release(h)
	a, err := f.GetAttr(bg, ino)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, a.Size+10)
	n, err := f.Read(bg, h, 0, buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// closeAndReopen closes f, checks the closed cache in dir with fsck, and
// opens it again.
func closeAndReopen(t testing.TB, f *FS, dir string) *FS {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
	f, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
