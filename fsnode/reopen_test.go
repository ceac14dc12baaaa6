package fsnode

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"
)

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := must[Attr](t)(f.Mkdir(bg, f.Root(), "d", 0o755))
	small := createFile(t, f, d.Ino, "small", []byte("hello"))
	bigData := bytes.Repeat([]byte("0123456789"), 1000)
	big := createFile(t, f, d.Ino, "big", bigData)
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	if got := readAll(t, f, small.Ino); string(got) != "hello" {
		t.Errorf("small = %q", got)
	}
	if got := readAll(t, f, big.Ino); !bytes.Equal(got, bigData) {
		t.Errorf("big differs: %d bytes", len(got))
	}
	a := must[Attr](t)(f.Lookup(bg, d.Ino, "big"))
	if a.Ino != big.Ino || a.Size != uint64(len(bigData)) {
		t.Errorf("lookup big = %+v", a)
	}
}

// TestReopenBatchedDirChanges commits one batch holding many entry changes
// to committed entries of one directory (unlinks, renames over existing
// names, names removed and made again), the batch writeDirChanges orders
// by key, and
// checks that the reopened cache lists the same entries at the same
// offsets.
func TestReopenBatchedDirChanges(t *testing.T) {
	dir := t.TempDir()
	// A window long enough that everything below is one batch.
	f, err := Create(dir, Options{CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	d := must[Attr](t)(f.Mkdir(bg, f.Root(), "d", 0o755))
	for i := range 300 {
		createFile(t, f, d.Ino, fmt.Sprintf("f%03d", (i*7)%300), []byte{byte(i)})
	}
	// Committed: the changes below replace records already written.
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i += 5 {
		if err := f.Unlink(bg, d.Ino, fmt.Sprintf("f%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < 300; i += 10 {
		if err := f.Rename(bg, d.Ino, fmt.Sprintf("f%03d", i), d.Ino, fmt.Sprintf("f%03d", i+1), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i += 15 {
		createFile(t, f, d.Ino, fmt.Sprintf("f%03d", i), []byte("again"))
	}
	before := must[[]DirEntry](t)(f.ReadDir(bg, d.Ino, 0))
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	after := must[[]DirEntry](t)(f.ReadDir(bg, d.Ino, 0))
	if len(after) != len(before) || len(before) != 300-60-30+20 {
		t.Fatalf("%d entries before close, %d after reopen", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("entry %d: %+v before close, %+v after reopen", i, before[i], after[i])
		}
	}
}

// TestPreload loads a reopened cache's inodes in one batch, stale numbers
// included, and checks that every lookup then sees what was written, and
// that inodes removed before the batch stay removed.
func TestPreload(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{InlineMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	d := must[Attr](t)(f.Mkdir(bg, f.Root(), "d", 0o755))
	want := map[string][]byte{}
	var inos []Ino
	for i := range 40 {
		name := fmt.Sprintf("f%02d", i)
		data := bytes.Repeat([]byte{byte('a' + i%26)}, i*5) // inline and extents
		want[name] = data
		inos = append(inos, createFile(t, f, d.Ino, name, data).Ino)
	}
	l := must[Attr](t)(f.Symlink(bg, d.Ino, "link", "f01"))
	f.Forget(l.Ino, 1)
	inos = append(inos, l.Ino)
	f = closeAndReopen(t, f, dir)
	defer f.Close()

	// Removed and committed before the batch: their numbers are stale.
	gone := map[Ino]bool{}
	for i := 0; i < 40; i += 4 {
		name := fmt.Sprintf("f%02d", i)
		gone[must[Attr](t)(f.Lookup(bg, d.Ino, name)).Ino] = true
		f.Forget(inos[i], 1)
		if err := f.Unlink(bg, d.Ino, name); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	f.Preload(append(inos, 0, 1<<40))

	f.imu.Lock()
	for _, ino := range inos {
		if in := f.inodes[ino]; gone[ino] != (in == nil) {
			t.Errorf("inode %d: in the table %v after Preload, removed %v", ino, in != nil, gone[ino])
		}
	}
	f.imu.Unlock()
	for ino := range gone {
		_, err := f.GetAttr(bg, ino)
		wantErrno(t, err, syscall.ENOENT)
	}
	for name, data := range want {
		a := must[Attr](t)(f.Lookup(bg, d.Ino, name))
		if a.Size != uint64(len(data)) || a.Mode != syscall.S_IFREG|0o644 {
			t.Errorf("%s: size %d mode %o, want %d and regular 0644", name, a.Size, a.Mode, len(data))
		}
		if got := readAll(t, f, a.Ino); !bytes.Equal(got, data) {
			t.Errorf("%s: read %q, want %q", name, got, data)
		}
	}
	if target := must[string](t)(f.Readlink(bg, l.Ino)); target != "f01" {
		t.Errorf("link reads %q after Preload", target)
	}
}
