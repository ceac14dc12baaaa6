package fsnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// vdirTree is the working copy the deferred-listing tests check out:
// nested directories, a directory's files interleaved with its
// subdirectory's in manifest order (a/b.txt, a/b/x), an executable, an
// empty file, a directory that already holds another file (pre) and one
// that holds a file of the same name (clash: made, not deferred).
func vdirTree(st *testStore, mtime time.Time) []NewVirtual {
	var files []NewVirtual
	add := func(name string, data []byte, perm uint32) {
		files = append(files, NewVirtual{Name: name, Size: int64(len(data)), Perm: perm, Mtime: mtime, Ref: st.add(name, data)})
	}
	add("README", []byte("top\n"), 0o644)
	add("a/b.txt", []byte("b text\n"), 0o644)
	add("a/b/c/deep", bytes.Repeat([]byte("deep "), 300), 0o644)
	add("a/b/x", []byte("x\n"), 0o600)
	add("a/empty", nil, 0o644)
	add("bin/run", []byte("#!/bin/sh\necho run\n"), 0o755)
	add("clash/x", []byte("virtual x\n"), 0o644)
	add("pre/new", []byte("new beside keep\n"), 0o644)
	for i := range 40 {
		add(fmt.Sprintf("many/f%03d", i), []byte(strings.Repeat(fmt.Sprint(i), i)), 0o644)
	}
	return files
}

// newVdirCache makes a cache holding vdirTree, deferred or made, after
// two ordinary files (pre/keep, clash/x) the checkout meets.
func newVdirCache(t *testing.T, defer_ bool) (*FS, string, *testStore) {
	t.Helper()
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Millisecond, InlineMax: 64}))
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.NewSink(bg)
	for _, name := range []string{"pre/keep", "clash/x"} {
		w := must[io.WriteCloser](t)(s.Create(name, 5))
		if _, err := w.Write([]byte("plain")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files := vdirTree(st, time.Unix(1700000000, 0))
	var err error
	if defer_ {
		var n int
		n, err = s.DeferVirtuals(Virtuals(files))
		if err == nil && n != len(files)-1 { // clash/x is made
			t.Errorf("DeferVirtuals deferred %d files, want %d", n, len(files)-1)
		}
	} else {
		err = s.CreateVirtuals(files)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	return f, dir, st
}

// treeOf describes every name under the root: type, permissions, size,
// link count, mtime (files), whether virtual, and contents.
func treeOf(t *testing.T, f *FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir Ino, p string)
	walk = func(dir Ino, p string) {
		ents, err := f.ReadDir(bg, dir, 0)
		if err != nil {
			t.Fatalf("readdir %q: %v", p, err)
		}
		for _, e := range ents {
			name := p + e.Name
			a, err := f.Lookup(bg, dir, e.Name)
			if err != nil {
				t.Fatalf("lookup %q: %v", name, err)
			}
			f.Forget(a.Ino, 1)
			desc := fmt.Sprintf("mode %o nlink %d", a.Mode, a.Nlink)
			switch {
			case a.IsDir():
				walk(a.Ino, name+"/")
			case isVirtual(t, f, a.Ino):
				// The checkout's mtime; an ordinary file's is when
				// the test made or wrote it.
				desc += fmt.Sprintf(" size %d mtime %d virtual %q", a.Size, a.Mtime.UnixNano(), readAll(t, f, a.Ino))
			default:
				desc += fmt.Sprintf(" size %d %q", a.Size, readAll(t, f, a.Ino))
			}
			out[name] = desc
		}
	}
	walk(RootIno, "")
	return out
}

func diffTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if got[n] != want[n] {
			t.Errorf("%s: %s: deferred %q, made %q", what, n, got[n], want[n])
		}
	}
}

func ino(t *testing.T, f *FS, p string) Ino {
	t.Helper()
	return must[Attr](t)(f.LookupPath(bg, p)).Ino
}

// TestDeferVirtuals: a checkout whose files are deferred and one whose
// files are made give the same tree (names, types, permissions, sizes,
// links, mtimes, virtual files, contents) after each operation that
// meets a directory not loaded yet, and again after a close and reopen
// with fsck clean. Before anything looks, the deferred cache holds one
// listing per directory (format version 4, fsck and VirtualStats count
// the deferred files, fsck lists them for hgfs fsck's store check), and
// loading a directory leaves its times alone.
func TestDeferVirtuals(t *testing.T) {
	ops := []struct {
		name string
		op   func(t *testing.T, f *FS) error
	}{
		{"nothing", func(t *testing.T, f *FS) error { return nil }},
		{"lookup deep", func(t *testing.T, f *FS) error { _, err := f.LookupPath(bg, "a/b/c/deep"); return err }},
		{"rename a directory first", func(t *testing.T, f *FS) error { return f.Rename(bg, RootIno, "a", RootIno, "z", 0) }},
		{"rename over a deferred directory", func(t *testing.T, f *FS) error {
			must[Attr](t)(f.Mkdir(bg, RootIno, "fresh", 0o755))
			return f.Rename(bg, RootIno, "fresh", RootIno, "many", 0)
		}},
		{"rmdir a deferred directory", func(t *testing.T, f *FS) error { return f.Rmdir(bg, RootIno, "bin") }},
		{"unlink a deferred file", func(t *testing.T, f *FS) error { return f.Unlink(bg, ino(t, f, "many"), "f001") }},
		{"create in a deferred directory", func(t *testing.T, f *FS) error {
			createFile(t, f, ino(t, f, "many"), "new", []byte("new"))
			return nil
		}},
		{"create over a deferred file", func(t *testing.T, f *FS) error {
			_, _, err := f.Create(bg, ino(t, f, "many"), "f002", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
			return err
		}},
		{"write a deferred file", func(t *testing.T, f *FS) error {
			h := must[Handle](t)(f.Open(bg, ino(t, f, "many/f003"), syscall.O_RDWR))
			defer f.Release(h)
			_, err := f.Write(bg, h, 1, []byte("XY"))
			return err
		}},
		{"link into another deferred directory", func(t *testing.T, f *FS) error {
			_, err := f.Link(bg, ino(t, f, "bin/run"), ino(t, f, "many"), "run")
			return err
		}},
		{"rename a file out", func(t *testing.T, f *FS) error { return f.Rename(bg, ino(t, f, "a/b"), "x", RootIno, "x2", 0) }},
		{"mkdir in a deferred directory", func(t *testing.T, f *FS) error {
			_, err := f.Mkdir(bg, ino(t, f, "bin"), "sub", 0o755)
			return err
		}},
		{"chmod", func(t *testing.T, f *FS) error {
			_, err := f.SetAttr(bg, ino(t, f, "many/f004"), SetAttr{Mode: ptr(uint32(0o700))})
			return err
		}},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			d, ddir, dst := newVdirCache(t, true)
			m, mdir, mst := newVdirCache(t, false)
			derr, merr := tc.op(t, d), tc.op(t, m)
			if ToErrno(derr) != ToErrno(merr) {
				t.Errorf("deferred: %v, made: %v", derr, merr)
			}
			diffTrees(t, "after", treeOf(t, d), treeOf(t, m))
			d, m = closeAndReopen(t, d, ddir), closeAndReopen(t, m, mdir)
			d.SetResolver(dst.resolve)
			m.SetResolver(mst.resolve)
			diffTrees(t, "reopened", treeOf(t, d), treeOf(t, m))
			for _, f := range []*FS{d, m} {
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			checkFsck(t, ddir)
		})
	}

	// The listings themselves, before anything looks.
	f, dir, st := newVdirCache(t, true)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if v := cacheVersion(t, dir); v != vdirFormatVersion {
		t.Errorf("format version %d with deferred listings, want %d", v, vdirFormatVersion)
	}
	r := must[*FsckReport](t)(Fsck(dir, false))
	files := len(vdirTree(st, time.Time{}))
	if !r.OK() || r.Deferred != files-1 { // clash/x was made
		t.Errorf("fsck: %d deferred files, want %d; %s", r.Deferred, files-1, r)
	}
	for _, v := range r.Virtual {
		if want := strings.TrimPrefix(v.Path, "/"); v.Ref.Path != want || v.Size != uint64(len(st.data[v.Ref])) {
			t.Errorf("fsck lists %+v", v)
		}
	}
	if len(r.Virtual) != files {
		t.Errorf("fsck lists %d virtual files, want %d", len(r.Virtual), files)
	}
	f = must[*FS](t)(Open(dir, Options{}))
	f.SetResolver(st.resolve)
	if vs := f.VirtualStats(); vs.Virtual != int64(files) {
		t.Errorf("VirtualStats %+v, want %d virtual", vs, files)
	}
	mtimes := map[string]time.Time{}
	for _, p := range []string{"a", "many", "pre"} { // loads the root alone
		mtimes[p] = must[Attr](t)(f.LookupPath(bg, p)).Mtime
	}
	treeOf(t, f)
	for p, mt := range mtimes {
		if got := must[Attr](t)(f.LookupPath(bg, p)).Mtime; !got.Equal(mt) {
			t.Errorf("%s: mtime %v after loading, %v before", p, got, mt)
		}
	}
	if vs := f.VirtualStats(); vs.Virtual != int64(files) {
		t.Errorf("VirtualStats %+v once loaded, want %d virtual", vs, files)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if r := must[*FsckReport](t)(Fsck(dir, false)); !r.OK() || r.Deferred != 0 {
		t.Errorf("fsck once loaded: %d deferred; %s", r.Deferred, r)
	}
}

func ptr[T any](v T) *T { return &v }

// TestDeferVirtualsCrash: the files a load makes, their entries and the
// listing's deletion commit together. An image of the cache taken after
// a load and before its commit (a kill -9 then) still has the listing
// and gives the same files; one taken after the commit has the files,
// with the inode numbers the load gave them, and no listing. Both fsck
// clean.
func TestDeferVirtualsCrash(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Hour, BatchItems: 1 << 20, InlineMax: 64}))
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.NewSink(bg)
	if _, err := s.DeferVirtuals(Virtuals(vdirTree(st, time.Unix(1700000000, 0)))); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, f) // loads every directory; nothing commits (an hour)
	deep := ino(t, f, "a/b/c/deep")
	image := func() string {
		t.Helper()
		img := t.TempDir()
		ents := must[[]os.DirEntry](t)(os.ReadDir(dir))
		for _, e := range ents {
			b := must[[]byte](t)(os.ReadFile(filepath.Join(dir, e.Name())))
			if err := os.WriteFile(filepath.Join(img, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return img
	}
	check := func(what, img string, listings int) {
		t.Helper()
		r := must[*FsckReport](t)(Fsck(img, false))
		if !r.OK() {
			t.Errorf("%s: fsck: %s", what, r)
		}
		n := 0
		db := must[*bolt.DB](t)(bolt.Open(filepath.Join(img, indexName), 0o600, &bolt.Options{ReadOnly: true}))
		_ = db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketVdirs); b != nil {
				n = b.Stats().KeyN
			}
			return nil
		})
		db.Close()
		if n != listings {
			t.Errorf("%s: %d listings, want %d", what, n, listings)
		}
		g := must[*FS](t)(Open(img, Options{}))
		g.SetResolver(st.resolve)
		diffTrees(t, what, treeOf(t, g), want)
		if listings == 0 {
			if got := ino(t, g, "a/b/c/deep"); got != deep {
				t.Errorf("%s: a/b/c/deep is inode %d, the load made %d", what, got, deep)
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	check("before the load's commit", image(), 8) // every directory holding files
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	check("after the load's commit", image(), 0)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVdirFsck: fsck reports a listing that does not decode, one that
// names a file the directory has an entry for, and one of an inode that
// is no directory; repair drops each, and the next fsck is clean.
func TestVdirFsck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(tx *bolt.Tx, root, a Ino) error
		want   string
	}{
		{"truncated", func(tx *bolt.Tx, root, a Ino) error {
			b := tx.Bucket(bucketVdirs)
			v := bytes.Clone(b.Get(inoKey(a)))
			return b.Put(inoKey(a), v[:len(v)-3])
		}, "deferred listing"},
		{"name taken", func(tx *bolt.Tx, root, a Ino) error {
			r := must[*vdirRec](t)(decodeVdir(tx.Bucket(bucketVdirs).Get(inoKey(a))))
			r.ents = append(r.ents, vdirEnt{name: "b", size: 1}) // a/b is a directory
			sort.Slice(r.ents, func(i, j int) bool { return r.ents[i].name < r.ents[j].name })
			return tx.Bucket(bucketVdirs).Put(inoKey(a), encodeVdir(r))
		}, "is also an entry"},
		{"of a file", func(tx *bolt.Tx, root, a Ino) error {
			readme := tx.Bucket(bucketVdirs).Get(inoKey(root))
			c := tx.Bucket(bucketDirents).Get(direntKey(root, "clash"))
			d := must[diskDirent](t)(decodeDirent(c))
			x := must[diskDirent](t)(decodeDirent(tx.Bucket(bucketDirents).Get(direntKey(d.Child, "x"))))
			return tx.Bucket(bucketVdirs).Put(inoKey(x.Child), bytes.Clone(readme))
		}, "deferred listing of no directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, dir, _ := newVdirCache(t, true)
			a := ino(t, f, "a") // loads the root, not a
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			db := must[*bolt.DB](t)(bolt.Open(filepath.Join(dir, indexName), 0o600, nil))
			if err := db.Update(func(tx *bolt.Tx) error {
				if tx.Bucket(bucketVdirs).Get(inoKey(RootIno)) == nil {
					// the root was loaded: give it a listing again
					r := &vdirRec{prefix: "", ents: []vdirEnt{{name: "zz", perm: 0o644}}}
					if err := tx.Bucket(bucketVdirs).Put(inoKey(RootIno), encodeVdir(r)); err != nil {
						return err
					}
				}
				return tc.damage(tx, RootIno, a)
			}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			r := must[*FsckReport](t)(Fsck(dir, true))
			if r.OK() || !strings.Contains(r.String(), tc.want) {
				t.Errorf("fsck --repair: want %q in\n%s", tc.want, r)
			}
			checkFsck(t, dir)
		})
	}
}

// TestDeferVirtualsLoadError: a listing that names a file the
// directory already has fails the directory's load (EIO), as a damaged
// entry does, and makes nothing.
func TestDeferVirtualsLoadError(t *testing.T) {
	f, dir, _ := newVdirCache(t, true)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db := must[*bolt.DB](t)(bolt.Open(filepath.Join(dir, indexName), 0o600, nil))
	if err := db.Update(func(tx *bolt.Tx) error {
		d := must[diskDirent](t)(decodeDirent(tx.Bucket(bucketDirents).Get(direntKey(RootIno, "pre"))))
		r := must[*vdirRec](t)(decodeVdir(tx.Bucket(bucketVdirs).Get(inoKey(d.Child))))
		r.ents = append(r.ents, vdirEnt{name: "keep", size: 1})
		return tx.Bucket(bucketVdirs).Put(inoKey(d.Child), encodeVdir(r))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f = must[*FS](t)(Open(dir, Options{}))
	defer f.Close()
	pre := ino(t, f, "pre")
	if _, err := f.ReadDir(bg, pre, 0); ToErrno(err) != syscall.EIO || !errors.Is(err, ErrCorrupt) {
		t.Errorf("readdir of a directory whose listing names an entry: %v", err)
	}
	if _, err := f.Lookup(bg, pre, "new"); ToErrno(err) != syscall.EIO {
		t.Errorf("lookup in it: %v", err)
	}
}

func FuzzDecodeVdir(f *testing.F) {
	f.Add(encodeVdir(&vdirRec{mtime: 1, ctime: 2, uid: 3, gid: 4, prefix: "a/b", ents: []vdirEnt{
		{name: "f", perm: 0o644, size: 10}, {name: "g", perm: 0o755, size: 1 << 40, node: [20]byte{1}}}}))
	f.Add(encodeVdir(&vdirRec{}))
	f.Add([]byte{})
	f.Add(make([]byte, vdirHeaderLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeVdir(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(encodeVdir(r), b) {
			t.Fatalf("re-encoding differs")
		}
		if vdirCount(b) != int64(len(r.ents)) {
			t.Fatalf("count %d, %d files", vdirCount(b), len(r.ents))
		}
		for i := range r.ents {
			if checkNewName(r.ents[i].name) != nil || i > 0 && r.ents[i].name <= r.ents[i-1].name || r.ents[i].perm&^07777 != 0 {
				t.Fatalf("accepted %+v", r.ents[i])
			}
		}
	})
}

// TestDeferVirtualsChangesDir: deferring files to a directory that
// existed changes its times and tells a Watch, as making them does; a
// directory's load afterwards does neither.
func TestDeferVirtualsChangesDir(t *testing.T) {
	for _, defer_ := range []bool{false, true} {
		dir := t.TempDir()
		f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Millisecond}))
		st := newTestStore()
		f.SetResolver(st.resolve)
		s := f.NewSink(bg)
		w := must[io.WriteCloser](t)(s.Create("pre/keep", 0))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		pre := must[Attr](t)(f.LookupPath(bg, "pre"))
		watch := NewWatch()
		watch.Set(pre.Ino, "pre")
		f.SetWatch(watch)
		time.Sleep(2 * time.Millisecond)
		files := []NewVirtual{{Name: "pre/new", Size: 1, Perm: 0o644, Mtime: time.Unix(1700000000, 0), Ref: st.add("pre/new", []byte("n"))}}
		var err error
		if defer_ {
			_, err = s.DeferVirtuals(Virtuals(files))
		} else {
			err = s.CreateVirtuals(files)
		}
		if err != nil {
			t.Fatal(err)
		}
		after := must[Attr](t)(f.GetAttr(bg, pre.Ino))
		if !after.Mtime.After(pre.Mtime) || !after.Ctime.After(pre.Ctime) {
			t.Errorf("defer %v: pre's times %v %v, before %v %v", defer_, after.Mtime, after.Ctime, pre.Mtime, pre.Ctime)
		}
		if names, _ := watch.Take(); len(names) != 1 || names[0] != "pre" {
			t.Errorf("defer %v: the watch says %v changed", defer_, names)
		}
		must[Attr](t)(f.LookupPath(bg, "pre/new")) // loads pre
		if names, _ := watch.Take(); len(names) != 0 {
			t.Errorf("defer %v: loading pre told the watch %v", defer_, names)
		}
		if loaded := must[Attr](t)(f.GetAttr(bg, pre.Ino)); !loaded.Mtime.Equal(after.Mtime) || !loaded.Ctime.Equal(after.Ctime) {
			t.Errorf("defer %v: loading pre changed its times", defer_)
		}
		if err := s.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		checkFsck(t, dir)
	}
}

// TestDeferVirtualsFailsWhole: a directory that is gone by the time the
// files are deferred fails the call before any directory's files are.
func TestDeferVirtualsFailsWhole(t *testing.T) {
	f := newTestFS(t, Options{})
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.NewSink(bg)
	defer s.Finish()
	if _, err := f.MkdirAll(bg, "gone", 0o755); err != nil {
		t.Fatal(err)
	}
	// The sink knows "gone" from a file it made there, since removed.
	w := must[io.WriteCloser](t)(s.Create("gone/old", 0))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	gone := ino(t, f, "gone")
	if err := f.Unlink(bg, gone, "old"); err != nil {
		t.Fatal(err)
	}
	if err := f.Rmdir(bg, RootIno, "gone"); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0)
	_, err := s.DeferVirtuals(Virtuals{
		{Name: "first/a", Size: 1, Perm: 0o644, Mtime: mtime, Ref: st.add("first/a", []byte("a"))},
		{Name: "gone/b", Size: 1, Perm: 0o644, Mtime: mtime, Ref: st.add("gone/b", []byte("b"))},
	})
	if err == nil {
		t.Fatal("DeferVirtuals into a removed directory succeeded")
	}
	if _, err := f.LookupPath(bg, "first/a"); ToErrno(err) != syscall.ENOENT {
		t.Errorf("first/a after the failed call: %v", err)
	}
}

// TestDecodeVdirAllocation: decoding a listing allocates in proportion
// to its length, however long its prefix and however many its files.
func TestDecodeVdirAllocation(t *testing.T) {
	r := &vdirRec{prefix: strings.Repeat("p/", 2000) + "q"}
	for i := range 40000 {
		r.ents = append(r.ents, vdirEnt{name: fmt.Sprintf("%05d", i)})
	}
	b := encodeVdir(r)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := decodeVdir(b); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*uint64(len(b)) {
		t.Errorf("decoding %d bytes allocated %d", len(b), got)
	}
}

// TestDeferVirtualsListingDecodes: a listing DeferVirtuals records is
// one loadDir can read. A name with two leading slashes is taken (as
// CreateVirtuals takes it: the file a/x), but its directory's path,
// "/a", would be the listing's prefix, which decodeVdir refuses: the
// directory was EIO from then on, in this process and, once committed,
// after a reopen. Its files are made instead, in both.
func TestDeferVirtualsListingDecodes(t *testing.T) {
	f := must[*FS](t)(Create(t.TempDir(), Options{CommitInterval: time.Millisecond}))
	defer f.Close()
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.NewSink(bg)
	ref := st.add("/a/x", []byte("x"))
	n, err := s.DeferVirtuals(Virtuals{{Name: "//a/x", Size: 1, Perm: 0o644, Mtime: time.Unix(1700000000, 0), Ref: ref}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d files deferred under the prefix \"/a\", want 0", n)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.LookupPath(bg, "a/x"); err != nil {
		t.Fatalf("lookup a/x: %v", err)
	}
	dir := f.Dir()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := must[*FS](t)(Open(dir, Options{}))
	defer g.Close()
	if _, err := g.LookupPath(bg, "a/x"); err != nil {
		t.Fatalf("lookup a/x after a reopen: %v", err)
	}
}

// TestEncodeVdirExact: a listing is encoded in a slice of exactly its
// length (a deferred directory keeps it), and decodes to what it was.
func TestEncodeVdirExact(t *testing.T) {
	for _, r := range []*vdirRec{
		{prefix: ""},
		{prefix: "a/b", mtime: 1, ctime: 2, uid: 3, gid: 4, ents: []vdirEnt{{name: "x", perm: 0o644, size: 0}, {name: "y", perm: 0o755, size: 1 << 40}}},
		{prefix: strings.Repeat("p", 200), ents: []vdirEnt{{name: strings.Repeat("n", 200), size: 127}, {name: strings.Repeat("o", 200), size: 128}}},
	} {
		b := encodeVdir(r)
		if len(b) != cap(b) {
			t.Errorf("prefix %q: %d bytes in a slice of %d", r.prefix, len(b), cap(b))
		}
		got, err := decodeVdir(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.prefix != r.prefix || len(got.ents) != len(r.ents) {
			t.Fatalf("decoded %+v, want %+v", got, r)
		}
		for i := range r.ents {
			if got.ents[i] != r.ents[i] {
				t.Errorf("file %d: %+v, want %+v", i, got.ents[i], r.ents[i])
			}
		}
	}
}
