package fsnode

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

// TestSinkAttr: files created with permission bits and an mtime, and
// symlinks, keep them through a commit and a reopen; an inline and a
// data-file file, an empty one, a symlink replacing a file.
func TestSinkAttr(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0)
	s := f.NewSink(bg)
	big := bytes.Repeat([]byte("x"), 3*f.opt.InlineMax)
	for _, c := range []struct {
		name string
		data []byte
		perm uint32
	}{{"a/exec.sh", []byte("#!/bin/sh\n"), 0o755}, {"a/b/big", big, 0o644}, {"empty", nil, 0o600}, {"link", []byte("old"), 0o644}} {
		w, err := s.CreateAttr(c.name, int64(len(c.data)), c.perm, mtime)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(c.data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Symlink("link", "a/exec.sh", mtime); err != nil {
		t.Fatal(err)
	}
	if err := s.Symlink("a/b/deep/l", "../../../empty", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAttr("bad", 0, 0o10000, mtime); err == nil {
		t.Error("CreateAttr took a mode with type bits")
	}
	if err := s.Symlink("a", "x", mtime); err == nil {
		t.Error("Symlink replaced a directory")
	}
	if err := s.Symlink("x", "", mtime); err == nil {
		t.Error("Symlink made an empty target")
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
	if f, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name   string
		mode   uint32
		size   int
		mtimed bool
	}{{"a/exec.sh", syscall.S_IFREG | 0o755, 10, true}, {"a/b/big", syscall.S_IFREG | 0o644, len(big), true},
		{"empty", syscall.S_IFREG | 0o600, 0, true}, {"link", syscall.S_IFLNK | 0o777, 9, true}, {"a/b/deep/l", syscall.S_IFLNK | 0o777, 14, false}} {
		a, err := f.LookupPath(bg, c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a.Mode != c.mode || a.Size != uint64(c.size) || a.Mtime.Equal(mtime) != c.mtimed {
			t.Errorf("%s: mode %o size %d mtime %v", c.name, a.Mode, a.Size, a.Mtime)
		}
	}
	if got, err := f.ReadFile(bg, "a/b/big"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("big file: %d bytes, %v", len(got), err)
	}
	a, _ := f.LookupPath(bg, "link")
	if tg, err := f.Readlink(bg, a.Ino); err != nil || tg != "a/exec.sh" {
		t.Errorf("link -> %q %v", tg, err)
	}
}
