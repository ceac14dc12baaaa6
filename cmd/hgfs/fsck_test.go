package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

func TestFsckCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	fsys, err := fsnode.Create(dir, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, h, err := fsys.Create(context.Background(), fsys.Root(), "victim", 0o644, os.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	fsys.Release(h)
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := dispatchRun(t, "fsck", dir)
	if code != 0 || !strings.Contains(out, "checked 2 inodes") {
		t.Fatalf("clean cache: exit %d\n%s%s", code, out, stderr)
	}

	// Delete the file's inode record behind fsnode's back (bucket
	// "inodes", big-endian inode number: see fsnode/format.go), leaving
	// its directory entry dangling.
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("inodes")).Delete(binary.BigEndian.AppendUint64(nil, uint64(a.Ino)))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	out, stderr, code = dispatchRun(t, "fsck", dir)
	if code != 1 || !strings.Contains(out, "victim") {
		t.Fatalf("stray data file: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = dispatchRun(t, "fsck", "--repair", dir)
	if code != 0 || !strings.Contains(out, "(repaired)") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	if _, _, code = dispatchRun(t, "fsck", dir); code != 0 {
		t.Fatalf("after repair: exit %d", code)
	}

	_, stderr, code = dispatchRun(t, "fsck", t.TempDir())
	if code != 255 || !strings.Contains(stderr, "is not an hgfs cache") {
		t.Fatalf("not a cache: exit %d %q", code, stderr)
	}
}

// TestFsckDamagedIndex: fsck reports an index file bbolt cannot read
// (its root page zeroed) and exits 1 instead of aborting; --repair
// rebuilds it and the next fsck is clean.
func TestFsckDamagedIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	fsys, err := fsnode.Create(dir, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(context.Background(), "f", []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	// Zero the root page of the current meta (bbolt's layout: the meta
	// follows a 16-byte page header; root page id at +16, txid at +48).
	path := filepath.Join(dir, "index.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := b[16:]
	if binary.LittleEndian.Uint64(b[4096+16+48:]) > binary.LittleEndian.Uint64(meta[48:]) {
		meta = b[4096+16:]
	}
	root := binary.LittleEndian.Uint64(meta[16:])
	clear(b[root*4096 : (root+1)*4096])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := dispatchRun(t, "fsck", dir)
	if code != 1 || !strings.Contains(out, "index.db: ") {
		t.Fatalf("damaged index: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = dispatchRun(t, "fsck", "--repair", dir)
	if code != 0 || !strings.Contains(out, "index rebuilt") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code = dispatchRun(t, "fsck", dir); code != 0 {
		t.Fatalf("after repair: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(path + ".damaged"); err != nil {
		t.Error(err)
	}
}

// TestMountDamagedIndexSIGTERM: a mount whose index has a damaged page
// (the directory entries' root page, zeroed after a clean unmount) answers
// reading the tree with EIO instead of hanging or dying, and SIGTERM still
// unmounts it and ends the daemon.
func TestMountDamagedIndexSIGTERM(t *testing.T) {
	testenv.RequireFUSE(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fsys, err := fsnode.Create(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		p := fmt.Sprintf("d%d/f%02d", i%5, i)
		if _, err := fsys.MkdirAll(context.Background(), filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(context.Background(), p, []byte(strings.Repeat(p, i*20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cache, "index.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var page uint64
	db.View(func(tx *bolt.Tx) error {
		page = uint64(tx.Bucket([]byte("dirents")).RootPage())
		return nil
	})
	db.Close()
	if page == 0 {
		t.Fatal("the dirents bucket is inline")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(b[page*4096 : (page+1)*4096])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	mp := t.TempDir()
	cmd, out, exited := startMount(t, "--foreground", cache, mp)
	waitMounted(t, mp, exited)
	find := exec.Command("timeout", "60", "find", mp)
	findOut, err := find.CombinedOutput()
	if code := find.ProcessState.ExitCode(); code == 124 || !strings.Contains(string(findOut), "Input/output error") {
		t.Errorf("find on the damaged mount: %v (exit %d)\n%s", err, code, findOut)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if testenv.IsMounted(mp) {
			t.Errorf("still mounted after SIGTERM (exit %v)", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("hgfs mount still running 30 s after SIGTERM\n%s", out.Bytes())
	}
	if !strings.Contains(out.String(), "recovered panic") {
		t.Errorf("the daemon logged no recovered panic:\n%s", out.Bytes())
	}
}
