package main

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/fsnode"
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
	fsckRepairCycle(t, dir, "victim", "(repaired)")

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
	fsckRepairCycle(t, dir, "index.db: ", "index rebuilt")
	if _, err := os.Stat(path + ".damaged"); err != nil {
		t.Error(err)
	}
}

// fsckRepairCycle runs hgfs fsck on the damaged cache in dir (exit 1,
// found in its output), fsck --repair (exit 0, repaired in its output)
// and fsck again (exit 0).
func fsckRepairCycle(t *testing.T, dir, found, repaired string) {
	t.Helper()
	out, stderr, code := dispatchRun(t, "fsck", dir)
	if code != 1 || !strings.Contains(out, found) {
		t.Fatalf("damaged cache: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = dispatchRun(t, "fsck", "--repair", dir)
	if code != 0 || !strings.Contains(out, repaired) {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code = dispatchRun(t, "fsck", dir); code != 0 {
		t.Fatalf("after repair: exit %d\n%s%s", code, out, stderr)
	}
}
