package sysio

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestDirFSReadFile checks DirFS.ReadFile against os.ReadFile, and that
// it refuses what os.DirFS refuses (names leaving the directory) and
// reports missing files as fs.ErrNotExist, which revlog opens map to
// ENOENT.
func TestDirFSReadFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 70000) // > 1 MiB: several reads
	for name, data := range map[string][]byte{"empty": nil, "small": []byte("x\n"), "sub/big": big} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "outside"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := NewDirFS(dir, math.MaxInt)
	for _, name := range []string{"empty", "small", "sub/big"} {
		got, err := fs.ReadFile(d, name)
		want, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (%v), want %d", name, len(got), err, len(want))
		}
	}
	for _, name := range []string{"../outside", "/etc/passwd", "sub/../small", "", "sub/"} {
		if got, err := d.ReadFile(name); err == nil {
			t.Errorf("ReadFile(%q) = %q, want an error", name, got)
		}
	}
	if _, err := d.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := d.ReadFile("sub"); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	if err := fs.WalkDir(d, ".", func(string, fs.DirEntry, error) error { return nil }); err != nil {
		t.Errorf("walk: %v", err)
	}
}
