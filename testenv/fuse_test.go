package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMountCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	mp := MountCache(t, cache)
	if !IsMounted(mp) {
		t.Fatalf("%s is not a mount point after MountCache", mp)
	}
	p := filepath.Join(mp, "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if fds := OpenFDsUnder(mp); len(fds) != 1 {
		t.Errorf("OpenFDsUnder with one file open: %v", fds)
	}
	f.Close()
	if fds := OpenFDsUnder(mp); len(fds) != 0 {
		t.Errorf("OpenFDsUnder after close: %v", fds)
	}
	UnmountCache(t, mp)
	if IsMounted(mp) {
		t.Fatalf("%s still mounted after UnmountCache", mp)
	}
	// The data is durable: a new mount of the cache sees it.
	mp = MountCache(t, cache)
	if b, err := os.ReadFile(filepath.Join(mp, "f")); err != nil || string(b) != "x" {
		t.Fatalf("after remount: %q %v", b, err)
	}
}
