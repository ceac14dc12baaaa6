package sysio

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileBound checks the bounded whole-file read: a file up to the
// bound is read whole, one byte larger is refused with an error that
// names the file and its size and matches syscall.EFBIG (the errno a
// filesystem view answers), and nothing is read beyond.
func TestReadFileBound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int64{10, 11, math.MaxInt} {
		if b, err := ReadFile(p, max); err != nil || string(b) != "0123456789" {
			t.Errorf("bound %d: %q %v", max, b, err)
		}
	}
	b, err := ReadFile(p, 9)
	if b != nil || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("over the bound: %q %v, want EFBIG", b, err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != p || !strings.Contains(err.Error(), "10 bytes, more than the 9 read whole") {
		t.Errorf("over the bound: %q, want the file's name and both sizes", err)
	}
	if b, err := ReadFile(filepath.Join(dir, "empty"), 0); err != nil || len(b) != 0 {
		t.Errorf("empty file, bound 0: %q %v", b, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadFile(dir, math.MaxInt); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}

	// DirFS's bound is NewDirFS's, and its errors name the file as the
	// fs.FS does.
	d := NewDirFS(dir, 9)
	if _, err := d.ReadFile("f"); !errors.Is(err, syscall.EFBIG) || !errors.As(err, &pe) || pe.Path != "f" {
		t.Errorf("DirFS over its bound: %v, want EFBIG naming f", err)
	}
	if b, err := NewDirFS(dir, 10).ReadFile("f"); err != nil || string(b) != "0123456789" {
		t.Errorf("DirFS at its bound: %q %v", b, err)
	}
}
