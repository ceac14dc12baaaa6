//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// TestFsckCheckMount: a byte flipped in a data file under a mounted
// cache makes cat of the file fail with an I/O error (another file still
// reads), and after unmount `hgfs fsck` names the file, exits 1, and
// --repair says it cannot repair it.
func TestFsckCheckMount(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	mp := testenv.MountCache(t, cache)
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320,000 bytes: data file, not inline
	if err := os.MkdirAll(filepath.Join(mp, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(mp, "dir", "victim")
	if err := os.WriteFile(victim, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "fine"), data[:100000], 0o644); err != nil {
		t.Fatal(err)
	}
	// Written first, the victim's bytes start data-0001. Make them
	// durable (fsync commits), drop the kernel's pages of the file (so
	// that cat asks the daemon), then damage.
	fh, err := os.Open(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(fh.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	testenv.FlipBit(t, filepath.Join(cache, "data-0001"), 1000)
	out, err := exec.Command("cat", victim).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Input/output error") {
		t.Fatalf("cat of a damaged file: %v\n%.200s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(mp, "fine")); err != nil || !bytes.Equal(got, data[:100000]) {
		t.Fatalf("an intact file: %v", err)
	}
	testenv.UnmountCache(t, mp)

	out2, code := hgfsCmd(t, "fsck", cache)
	if code != 1 || !strings.Contains(out2, "/dir/victim: data damaged (extent at offset 0") || strings.Contains(out2, "/fine") {
		t.Fatalf("hgfs fsck: exit %d\n%s", code, out2)
	}
	out2, code = hgfsCmd(t, "fsck", "--repair", cache)
	if code != 1 || !strings.Contains(out2, "/dir/victim: data damaged") || !strings.Contains(out2, "cannot be repaired") {
		t.Fatalf("hgfs fsck --repair: exit %d\n%s", code, out2)
	}
}

// TestUnfinishedCloneRefused: a cache whose clone never finished (its
// sink abandoned without Finish, as a killed clone leaves it) is refused
// by the real binary's mount and fsck with a message that says so.
func TestUnfinishedCloneRefused(t *testing.T) {
	testenv.RequireFUSE(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fsys, err := fsnode.CreateForIngest(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := fsys.NewSink(context.Background())
	w, err := s.Create(".hg/store/00changelog.i", 64)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 64))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil { // no Finish
		t.Fatal(err)
	}
	want := "abort: the cache at " + cache + " holds an unfinished clone (interrupted); remove it and clone again"
	mp := t.TempDir()
	for _, args := range [][]string{{"mount", cache, mp}, {"mount", "--foreground", cache, mp}, {"fsck", cache}, {"fsck", "--repair", cache}} {
		out, code := hgfsCmd(t, args...)
		if code != 255 || !strings.Contains(out, want) {
			t.Errorf("hgfs %s: exit %d\n%s\nwant %q", strings.Join(args, " "), code, out, want)
		}
	}
	if testenv.IsMounted(mp) {
		t.Fatal("mounted")
	}
}
