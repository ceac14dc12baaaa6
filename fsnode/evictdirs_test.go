package fsnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"
)

// evictDirsAt makes f's ingest drop left directories' entries once
// more than n are in memory (dirEvictEntries is far larger than a
// test's store).
func evictDirsAt(f *FS, n int) {
	f.tree.Lock()
	f.c.dirEvictBase, f.c.dirEvictAt = n, n
	f.tree.Unlock()
}

// unloadedDirs counts the directories in the inode table whose entries
// are not in memory.
func unloadedDirs(f *FS) int {
	f.tree.RLock()
	defer f.tree.RUnlock()
	f.imu.Lock()
	defer f.imu.Unlock()
	n := 0
	for _, in := range f.inodes {
		if in.isDir() && in.dir == nil {
			n++
		}
	}
	return n
}

// TestIngestEvictDirs: an ingest that drops the entries of directories
// its commits left reads them back when it writes there again, and
// every directory lists, and every file reads, what was written: during
// the ingest, after it and after a reopen. The store's files go round
// robin over 300 directories, each batch leaving many, the order that
// makes the most of them come back.
func TestIngestEvictDirs(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(CreateForIngest(dir, Options{QueueCap: 64, BatchItems: 32, IngestEvict: true}))
	evictDirsAt(f, 100)
	files := syntheticStore(1500, 5)
	s := f.NewSink(bg)
	write := func(files []storeFile) {
		sinkWrite(t, s, files)
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
	}
	write(files)
	if n := unloadedDirs(f); n == 0 {
		t.Fatal("no directory's entries were dropped")
	}
	// Into every directory again, its entries dropped or not.
	more := make([]storeFile, 0, 300)
	for i := range 300 {
		more = append(more, storeFile{fmt.Sprintf(".hg/store/data/d%03d/g%05d.i", i, i), []byte(fmt.Sprint("more ", i))})
	}
	write(more)
	all := append(slices.Clone(files), more...)
	check := func(when string) {
		t.Helper()
		want := map[string][]string{}
		for _, sf := range all {
			d, base := splitDir(sf.name)
			want[d] = append(want[d], base)
			if got := must[[]byte](t)(f.ReadFile(bg, sf.name)); !bytes.Equal(got, sf.data) {
				t.Fatalf("%s: %s: contents differ", when, sf.name)
			}
		}
		for d, names := range want {
			if d == ".hg" {
				continue // store/ besides requires
			}
			a := must[Attr](t)(f.LookupPath(bg, d))
			ents := must[[]DirEntry](t)(f.ReadDir(bg, a.Ino, 0))
			var got []string
			for _, e := range ents {
				got = append(got, e.Name)
			}
			slices.Sort(got)
			slices.Sort(names)
			if !slices.Equal(got, names) {
				t.Fatalf("%s: %s lists %d names, want %d", when, d, len(got), len(names))
			}
		}
	}
	check("during the ingest")
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	check("after it")
	f = closeAndReopen(t, f, dir)
	check("after a reopen")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// TestDeferVirtualsEvictedDir: a checkout defers files into a directory
// whose entries a commit dropped (as into one it just made), beside the
// file already there.
func TestDeferVirtualsEvictedDir(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(CreateForIngest(dir, Options{IngestEvict: true}))
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.NewSink(bg)
	w := must[io.WriteCloser](t)(s.Create("w/old", 3))
	w.Write([]byte("old"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	evictDirsAt(f, 0)
	f.tree.Lock()
	f.evictDirsLocked(nil)
	f.tree.Unlock()
	if unloadedDirs(f) == 0 {
		t.Fatal("no directory's entries were dropped")
	}
	mtime := time.Unix(1700000000, 0)
	files := []NewVirtual{
		{Name: "w/a", Size: 1, Perm: 0o644, Mtime: mtime, Ref: st.add("w/a", []byte("a"))},
		{Name: "w/b", Size: 2, Perm: 0o644, Mtime: mtime, Ref: st.add("w/b", []byte("bb"))},
	}
	if n, err := s.DeferVirtuals(Virtuals(files)); err != nil || n != 2 {
		t.Fatalf("DeferVirtuals: %d deferred, %v; want 2", n, err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"w/old": "old", "w/a": "a", "w/b": "bb"} {
		if got := must[[]byte](t)(f.ReadFile(bg, name)); string(got) != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// TestEvictReferencedDirs: directories the kernel refers to (a lookup
// reference each, as a mount's daemon holds for every directory it has
// shown) lose their loaded entries once commits have left them, and
// every request the kernel sends by inode number then reads them back:
// lookups, listings, creates, renames between two such directories,
// unlinks and rmdir. The tree after it all is the model's, before and
// after a reopen, and fsck finds nothing.
func TestEvictReferencedDirs(t *testing.T) {
	f := newTestFS(t, Options{})
	dir := f.Dir()
	model := map[string]map[string]string{} // directory -> name -> contents
	var dirs []Ino
	for i := range 40 {
		name := fmt.Sprintf("d%02d", i)
		a := must[Attr](t)(f.Mkdir(bg, RootIno, name, 0o755))
		dirs = append(dirs, a.Ino)
		model[name] = map[string]string{}
		for j := range 10 {
			fn := fmt.Sprintf("f%02d", j)
			createFile(t, f, a.Ino, fn, []byte(fn+" of "+name))
			model[name][fn] = fn + " of " + name
		}
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	evictDirsAt(f, 20)
	// A commit that changes d00 only: the others are left.
	createFile(t, f, dirs[0], "new", []byte("new"))
	model["d00"]["new"] = "new"
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	if n := unloadedDirs(f); n < 30 {
		t.Fatalf("%d referenced directories' entries dropped, want most of 40", n)
	}
	// By inode number, as the kernel asks.
	if _, err := f.Lookup(bg, dirs[1], "f03"); err != nil {
		t.Fatalf("lookup in an evicted directory: %v", err)
	}
	if _, err := f.Lookup(bg, dirs[1], "nothing"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("lookup of a missing name in an evicted directory: %v", err)
	}
	createFile(t, f, dirs[2], "made", []byte("made in d02"))
	model["d02"]["made"] = "made in d02"
	if err := f.Rename(bg, dirs[3], "f01", dirs[4], "moved", 0); err != nil {
		t.Fatalf("rename between evicted directories: %v", err)
	}
	model["d04"]["moved"] = model["d03"]["f01"]
	delete(model["d03"], "f01")
	if err := f.Unlink(bg, dirs[5], "f09"); err != nil {
		t.Fatalf("unlink in an evicted directory: %v", err)
	}
	delete(model["d05"], "f09")
	for fn := range model["d06"] {
		if err := f.Unlink(bg, dirs[6], fn); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	f.tree.Lock()
	f.evictDirsLocked(nil)
	f.tree.Unlock()
	if err := f.Rmdir(bg, RootIno, "d06"); err != nil {
		t.Fatalf("rmdir of an emptied, evicted directory: %v", err)
	}
	delete(model, "d06")
	if err := f.Rmdir(bg, RootIno, "d07"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("rmdir of a full, evicted directory: %v, want ENOTEMPTY", err)
	}
	check := func(when string) {
		t.Helper()
		root := must[[]DirEntry](t)(f.ReadDir(bg, RootIno, 0))
		if len(root) != len(model) {
			t.Fatalf("%s: the root lists %d directories, want %d", when, len(root), len(model))
		}
		for _, de := range root {
			want := model[de.Name]
			ents := must[[]DirEntry](t)(f.ReadDir(bg, de.Ino, 0))
			if len(ents) != len(want) {
				t.Fatalf("%s: %s lists %d names, want %d", when, de.Name, len(ents), len(want))
			}
			for _, e := range ents {
				got := must[[]byte](t)(f.ReadFile(bg, de.Name+"/"+e.Name))
				if string(got) != want[e.Name] {
					t.Fatalf("%s: %s/%s holds %q, want %q", when, de.Name, e.Name, got, want[e.Name])
				}
			}
		}
	}
	check("evicted")
	f = closeAndReopen(t, f, dir)
	check("after a reopen")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}
