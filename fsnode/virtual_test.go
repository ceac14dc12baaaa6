package fsnode

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testStore is a resolver over a map: the contents of each reference,
// with a count of resolutions. Resolutions may run concurrently with
// each other and with add; calls is read once they are done.
type testStore struct {
	mu    sync.Mutex
	data  map[VirtualRef][]byte
	calls int
}

func newTestStore() *testStore { return &testStore{data: map[VirtualRef][]byte{}} }

func (s *testStore) add(path string, data []byte) VirtualRef {
	ref := VirtualRef{Node: sha1.Sum(append([]byte(path+"\x00"), data...)), Path: path}
	s.mu.Lock()
	s.data[ref] = data
	s.mu.Unlock()
	return ref
}

func (s *testStore) resolve(r VirtualRef) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	d, ok := s.data[r]
	if !ok {
		return nil, fmt.Errorf("no revision %x of %s", r.Node, r.Path)
	}
	return d, nil
}

// TestVirtualFiles: files made virtual by the sink read as their
// references' contents; the first write, truncation or fallocate copies
// the bytes into the cache (keeping the times), truncation to 0 copies
// nothing, and rename, link and chmod keep the reference; all of it
// through a reopen (format version 3 once a virtual record exists,
// version 2 before), with fsck clean.
func TestVirtualFiles(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Millisecond, InlineMax: 64}))
	st := newTestStore()
	f.SetResolver(st.resolve)
	mtime := time.Unix(1700000000, 0)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	small := []byte("small file\n")
	files := map[string][]byte{
		"a/big": big, "a/small": small, "write": big, "trunc": big, "trunc0": big,
		"falloc": small, "ren": small, "chmod": big, "link": small, "empty": nil,
	}
	s := f.NewSink(bg)
	for name, data := range files {
		ref := st.add(name, data)
		if err := s.CreateVirtual(name, int64(len(data)), 0o644, mtime, ref); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateVirtual("bad", 1, 0o10644, mtime, st.add("bad", []byte("x"))); err == nil {
		t.Error("CreateVirtual took a mode with type bits")
	}
	// A batch is checked whole before any file of it is made.
	batch := []NewVirtual{
		{Name: "batch/ok", Size: int64(len(small)), Perm: 0o644, Mtime: mtime, Ref: st.add("batch/ok", small)},
		{Name: "batch/bad", Size: -1, Perm: 0o644, Mtime: mtime, Ref: st.add("batch/bad", small)},
	}
	if err := s.CreateVirtuals(batch); err == nil {
		t.Error("CreateVirtuals took a negative size")
	}
	if _, err := f.LookupPath(bg, "batch/ok"); err == nil {
		t.Error("a batch that failed its check made a file")
	}
	batch[1].Size = int64(len(small))
	if err := s.CreateVirtuals(batch); err != nil {
		t.Fatal(err)
	}
	files["batch/ok"], files["batch/bad"] = small, small
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if v := cacheVersion2(t, f); v != virtualFormatVersion {
		t.Errorf("format version %d after virtual records, want %d", v, virtualFormatVersion)
	}
	ino := func(p string) Ino { return must[Attr](t)(f.LookupPath(bg, p)).Ino }
	for name, data := range files {
		a := must[Attr](t)(f.GetAttr(bg, ino(name)))
		if a.Size != uint64(len(data)) || a.Mode != syscall.S_IFREG|0o644 || !a.Mtime.Equal(mtime) {
			t.Errorf("%s: size %d mode %#o mtime %v", name, a.Size, a.Mode, a.Mtime)
		}
		if got := readAll(t, f, a.Ino); !bytes.Equal(got, data) {
			t.Errorf("%s reads %d bytes, want %d", name, len(got), len(data))
		}
		if !isVirtual(t, f, a.Ino) {
			t.Errorf("%s is not virtual after a read", name)
		}
	}
	if got := must[[]byte](t)(f.ReadFile(bg, "a/big")); !bytes.Equal(got, big) {
		t.Error("ReadFile of a virtual file differs")
	}
	// Partial reads.
	buf := make([]byte, 10)
	if n, err := f.ReadInode(bg, ino("a/big"), int64(len(big))-4, buf); err != nil || !bytes.Equal(buf[:n], big[len(big)-4:]) {
		t.Errorf("read at the end: %d, %v", n, err)
	}
	if n, err := f.ReadInode(bg, ino("a/big"), int64(len(big))+4, buf); err != nil || n != 0 {
		t.Errorf("read past the end: %d, %v", n, err)
	}

	// Copy on write.
	if _, err := f.WriteInode(bg, ino("write"), 5, []byte("XY"), syscall.O_RDWR); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for k, v := range files {
		want[k] = v
	}
	w := bytes.Clone(big)
	copy(w[5:], "XY")
	want["write"] = w
	size := uint64(100)
	must[Attr](t)(f.SetAttr(bg, ino("trunc"), SetAttr{Size: &size}))
	want["trunc"] = big[:100]
	zero := uint64(0)
	calls := st.calls
	must[Attr](t)(f.SetAttr(bg, ino("trunc0"), SetAttr{Size: &zero}))
	if st.calls != calls {
		t.Error("truncation to 0 read the revision")
	}
	want["trunc0"] = []byte{}
	if err := f.Fallocate(bg, ino("falloc"), 0, 100, 0); err != nil {
		t.Fatal(err)
	}
	want["falloc"] = append(bytes.Clone(small), make([]byte, 100-len(small))...)
	calls = st.calls
	if err := f.Rename(bg, RootIno, "ren", RootIno, "renamed", 0); err != nil {
		t.Fatal(err)
	}
	want["renamed"] = want["ren"]
	delete(want, "ren")
	mode := uint32(0o755)
	must[Attr](t)(f.SetAttr(bg, ino("chmod"), SetAttr{Mode: &mode}))
	must[Attr](t)(f.Link(bg, ino("link"), RootIno, "link2"))
	want["link2"] = want["link"]
	if st.calls != calls {
		t.Error("rename, chmod or link read the revision")
	}
	check := func(f *FS) {
		t.Helper()
		for name, data := range want {
			in := must[Attr](t)(f.LookupPath(bg, name))
			if got := readAll(t, f, in.Ino); !bytes.Equal(got, data) {
				t.Errorf("%s: %d bytes, want %d", name, len(got), len(data))
			}
			virt := isVirtual(t, f, in.Ino)
			cow := name == "write" || name == "trunc" || name == "trunc0" || name == "falloc"
			if virt == cow {
				t.Errorf("%s: virtual %v", name, virt)
			}
			if name == "write" && !in.Mtime.After(mtime) {
				t.Error("write kept the mtime")
			}
		}
		if a := must[Attr](t)(f.LookupPath(bg, "chmod")); a.Mode&07777 != 0o755 {
			t.Errorf("chmod: mode %#o", a.Mode)
		}
	}
	check(f)
	if vs := f.VirtualStats(); vs.Materialized != 3 {
		t.Errorf("%d materialized, want 3 (write, trunc, falloc)", vs.Materialized)
	}
	f = closeAndReopen(t, f, dir)
	st.calls = 0
	f.SetResolver(st.resolve)
	check(f)
	if vs := f.VirtualStats(); vs.Virtual != 8 { // a/big a/small renamed chmod link(=link2) empty batch/ok batch/bad
		t.Errorf("%d virtual records, want 8", vs.Virtual)
	}

	// SetVirtual moves a file, virtual or not, to another revision.
	next := st.add("write", []byte("next revision\n"))
	a := must[Attr](t)(f.SetVirtual(bg, ino("write"), next, 14, time.Time{}))
	if a.Size != 14 {
		t.Errorf("size %d after SetVirtual", a.Size)
	}
	if got := readAll(t, f, a.Ino); string(got) != "next revision\n" {
		t.Errorf("after SetVirtual: %q", got)
	}
	// A reference whose contents are not the size is EIO, not a panic.
	bad := st.add("a/small", []byte("longer than it says"))
	must[Attr](t)(f.SetVirtual(bg, ino("a/small"), bad, 3, mtime))
	_, err := f.ReadInode(bg, ino("a/small"), 0, buf)
	wantErrno(t, err, syscall.EIO)
	_, err = f.WriteInode(bg, ino("a/small"), 0, []byte("x"), syscall.O_RDWR)
	wantErrno(t, err, syscall.EIO)
	// Unlinking a virtual file drops its record.
	if err := f.Unlink(bg, RootIno, "empty"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// TestVirtualVersion: a cache that never held a virtual file stays at
// format version 2; a version above 3 is refused.
func TestVirtualVersion(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Millisecond}))
	createFile(t, f, RootIno, "plain", []byte("x"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if v := cacheVersion(t, dir); v != formatVersion {
		t.Errorf("version %d without virtual files, want %d", v, formatVersion)
	}
}

func isVirtual(t testing.TB, f *FS, ino Ino) bool {
	t.Helper()
	_, ok, err := f.Virtual(bg, ino)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func cacheVersion2(t testing.TB, f *FS) uint32 {
	t.Helper()
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	return f.virt.version.Load()
}

// TestLookupStates: the batched lookup says of each path what LookupPath
// and Virtual say, in any order of the paths (sorted ones reuse the
// directory before), for virtual and ordinary files, directories,
// missing names, names under a file and invalid paths.
func TestLookupStates(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{CommitInterval: time.Millisecond}))
	defer f.Close()
	st := newTestStore()
	f.SetResolver(st.resolve)
	s := f.Sink()
	mtime := time.Unix(1700000000, 0)
	for _, p := range []string{"a/v1", "a/v2", "a/b/v3", "top"} {
		data := []byte("content of " + p)
		if err := s.CreateVirtual(p, int64(len(data)), 0o644, mtime, st.add(p, data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile(bg, "a/plain", []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{"a/plain", "a/v1", "a/v2", "a/b/v3", "a/b", "a/missing", "a/v1/under", "nodir/x", "top", "", "a/../top", "a/b/v3", "a/v1"}
	got := map[int]PathState{}
	f.LookupStates(len(paths), func(i int) string { return paths[i] }, func(i int, s PathState) { got[i] = s })
	if len(got) != len(paths) {
		t.Fatalf("%d states for %d paths", len(got), len(paths))
	}
	for i, p := range paths {
		g := got[i]
		a, err := f.LookupPath(bg, p)
		if p == "" {
			// LookupPath's "" is the root; a path to look up names a file.
			if g.Err == nil {
				t.Errorf("%q: no error", p)
			}
			continue
		}
		if (err == nil) != (g.Err == nil) || err != nil && err.Error() != g.Err.Error() {
			t.Errorf("%q: error %v, LookupPath's %v", p, g.Err, err)
			continue
		}
		if err != nil {
			continue
		}
		if g.Attr != a {
			t.Errorf("%q: attributes %+v, LookupPath's %+v", p, g.Attr, a)
		}
		ref, virtual, err := f.Virtual(bg, a.Ino)
		if err != nil {
			t.Fatal(err)
		}
		if g.Virtual != virtual || g.Ref != ref {
			t.Errorf("%q: virtual %t %v, Virtual's %t %v", p, g.Virtual, g.Ref, virtual, ref)
		}
	}
	if !got[1].Virtual || got[0].Virtual {
		t.Errorf("a/v1 virtual %t, a/plain virtual %t", got[1].Virtual, got[0].Virtual)
	}
}
