//go:build unix

package sysio

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirs checks the directory descriptors files are opened relative
// to: the root for a bare name, one descriptor per directory (the same
// each time), -1 for a directory that cannot be opened, and Trim closing
// them once there are MaxDirs.
func TestDirs(t *testing.T) {
	dir := t.TempDir()
	for i := range MaxDirs + 1 {
		p := filepath.Join(dir, "d", fmt.Sprint(i), "f")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	d := NewDirs(root)
	defer d.Close()
	if fd, base := d.At("top"); fd != root || base != "top" || d.Root() != root {
		t.Errorf("bare name: %d %q, want the root %d", fd, base, root)
	}
	read := func(fd int, base string) string {
		t.Helper()
		f, err := Openat(fd, base, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(f)
		b := make([]byte, 8)
		n, _ := PreadFull(f, b, 0)
		return string(b[:n])
	}
	fd0, base := d.At("d/0/f")
	if fd0 < 0 || base != "f" || read(fd0, base) != "0" {
		t.Fatalf("d/0/f: %d %q", fd0, base)
	}
	if fd, _ := d.At("d/1/f"); fd < 0 || fd == fd0 || read(fd, "f") != "1" {
		t.Errorf("d/1/f: %d", fd)
	}
	if fd, _ := d.At("d/0/g"); fd != fd0 {
		t.Errorf("d/0 again: %d, want %d", fd, fd0)
	}
	if fd, base := d.At("missing/f"); fd != -1 || base != "f" {
		t.Errorf("missing directory: %d %q, want -1", fd, base)
	}
	for i := range MaxDirs + 1 {
		d.At(fmt.Sprintf("d/%d/f", i))
	}
	d.Trim()
	if len(d.fds) != 0 {
		t.Errorf("%d directories open after Trim", len(d.fds))
	}
	if fd, _ := d.At("d/0/f"); fd < 0 || read(fd, "f") != "0" {
		t.Errorf("d/0/f after Trim: %d", fd)
	}
}
