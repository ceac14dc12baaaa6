package txn

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// unixModes is false where a file mode is only the read-only attribute
// (Windows: every writable file is 0666).
var unixModes = runtime.GOOS != "windows"

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "phaseroots")
	if err := WriteFileAtomic(p, []byte("new file\n")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || unixModes && st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v", st.Mode(), err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	// A hard link stands for a transaction's backup: it must keep the
	// old content.
	if err := os.Link(p, p+".backup"); err != nil {
		t.Fatal(err)
	}
	old, _ := os.Stat(p)
	if err := WriteFileAtomic(p, []byte("same size\n")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "same size\n" {
		t.Errorf("content %q", data)
	}
	if data, _ := os.ReadFile(p + ".backup"); string(data) != "new file\n" {
		t.Errorf("the hard link changed: %q", data)
	}
	nw, _ := os.Stat(p)
	if unixModes && nw.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old 0600", nw.Mode())
	}
	// checkambig: same ctime second -> mtime advanced past the old one.
	if oc, ok := ctime(old); ok {
		if nc, _ := ctime(nw); nc == oc && nw.ModTime().Unix() != old.ModTime().Unix()+1 {
			t.Errorf("ambiguous rewrite: mtime %v, old %v", nw.ModTime(), old.ModTime())
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	os.WriteFile(src, []byte("data"), 0o640)
	os.WriteFile(dst, []byte("old and longer"), 0o644)
	if err := copyFile(src, dst, false); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(src)
	b, _ := os.Stat(dst)
	if data, _ := os.ReadFile(dst); string(data) != "data" || os.SameFile(a, b) || unixModes && b.Mode().Perm() != 0o640 {
		t.Errorf("copy: %q same=%v mode=%v", data, os.SameFile(a, b), b.Mode())
	}
	if err := copyFile(src, dst, true); err != nil {
		t.Fatal(err)
	}
	b, _ = os.Stat(dst)
	if !os.SameFile(a, b) {
		t.Error("hardlink copy is not a link")
	}
	if err := unlinkFile(dir); err == nil {
		t.Error("unlinkFile removed a directory")
	}
	if err := unlinkFile(filepath.Join(dir, "none")); err != nil {
		t.Error(err)
	}
}
