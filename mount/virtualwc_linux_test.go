//go:build linux

package mount

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/internal/mmapload"
)

// TestVirtualFilesPOSIX: virtual files through a go-fuse mount, at the
// copy-on-write boundary. They read (read(2), a shared mapping in a
// child) as their revisions with their sizes; a write, a truncation, an
// O_TRUNC open copy them into the cache (or drop the reference) and
// user.hgfs.virtual then reports no reference; rename, link and chmod
// keep it; setting user.hgfs.virtual moves a file whose pages the
// kernel holds to another revision, and the next read and stat show it;
// all of it holds after a remount.
func TestVirtualFilesPOSIX(t *testing.T) {
	m := newMount(t)
	revs := newTestRevs()
	add, resolver := revs.add, revs.resolve
	m.fsys.SetResolver(resolver) // in place of the mount's repository

	const mapped = 1<<20 + 1000
	pattern := make([]byte, mapped)
	for i := range pattern {
		pattern[i] = mmapload.Pattern(int64(i))
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	files := map[string][]byte{
		"mapped": pattern, "write": big, "trunc": big, "otrunc": []byte("open truncated\n"),
		"ren": []byte("renamed\n"), "link": big, "chmod": []byte("chmod\n"), "dir/deep": []byte("deep\n"),
	}
	s := m.fsys.NewSink(context.Background())
	mtime := time.Unix(1700000000, 0)
	for name, data := range files {
		if err := s.CreateVirtual(name, int64(len(data)), 0o644, mtime, add(name, data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	virtual := func(name string) bool {
		t.Helper()
		buf := make([]byte, 4200)
		n, err := syscall.Getxattr(m.path(name), VirtualXattr, buf)
		if errors.Is(err, syscall.ENODATA) {
			return false
		}
		if err != nil {
			t.Fatalf("getxattr %s: %v", name, err)
		}
		if n < 42 { // "NODEHEX PATH"
			t.Fatalf("getxattr %s: %q", name, buf[:n])
		}
		return true
	}
	for name, data := range files {
		if got := readFile(t, m.path(name)); got != string(data) {
			t.Errorf("%s reads %d bytes, want %d", name, len(got), len(data))
		}
		if st := stat(t, m.path(name)); st.Size != int64(len(data)) || st.Mtim.Sec != mtime.Unix() || st.Mode != syscall.S_IFREG|0o644 {
			t.Errorf("%s: size %d mtime %d mode %#o", name, st.Size, st.Mtim.Sec, st.Mode)
		}
		if !virtual(name) {
			t.Errorf("%s is not virtual after reads", name)
		}
	}
	mmapChild(t, "seqread", m.path("mapped"))
	if !virtual("mapped") {
		t.Error("a mapped read copied the file")
	}

	want := map[string][]byte{}
	for k, v := range files {
		want[k] = v
	}
	// A write in the middle: the rest comes from the revision.
	f, err := os.OpenFile(m.path("write"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("XYZ"), 5000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	w := bytes.Clone(big)
	copy(w[5000:], "XYZ")
	want["write"] = w
	if err := os.Truncate(m.path("trunc"), 100); err != nil {
		t.Fatal(err)
	}
	want["trunc"] = big[:100]
	if err := os.WriteFile(m.path("otrunc"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	want["otrunc"] = []byte("new")
	if err := os.Rename(m.path("ren"), m.path("dir/renamed")); err != nil {
		t.Fatal(err)
	}
	want["dir/renamed"] = want["ren"]
	delete(want, "ren")
	if err := os.Link(m.path("link"), m.path("link2")); err != nil {
		t.Fatal(err)
	}
	want["link2"] = want["link"]
	if err := os.Chmod(m.path("chmod"), 0o755); err != nil {
		t.Fatal(err)
	}
	materialized := map[string]bool{"write": true, "trunc": true, "otrunc": true}
	check := func(when string) {
		t.Helper()
		for name, data := range want {
			if got := readFile(t, m.path(name)); got != string(data) {
				t.Errorf("%s: %s reads %d bytes, want %d", when, name, len(got), len(data))
			}
			if v := virtual(name); v == materialized[name] {
				t.Errorf("%s: %s virtual %v", when, name, v)
			}
		}
		if st := stat(t, m.path("chmod")); st.Mode&0o7777 != 0o755 {
			t.Errorf("%s: chmod: mode %#o", when, st.Mode)
		}
		if st := stat(t, m.path("link")); st.Nlink != 2 {
			t.Errorf("%s: link: %d links", when, st.Nlink)
		}
	}
	check("after the changes")

	// Moving a file the kernel has cached to another revision of the
	// same size and to one of another size.
	for i, data := range [][]byte{bytes.ToUpper(files["chmod"]), []byte("a longer revision\n")} {
		r := add("chmod", data)
		set := VirtualSet{Ref: r, Size: uint64(len(data)), Mtime: mtime.Add(time.Duration(i+1) * time.Second)}
		if err := syscall.Setxattr(m.path("chmod"), VirtualXattr, set.Encode(), 0); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, m.path("chmod")); got != string(data) {
			t.Errorf("after setting a reference: %q, want %q", got, data)
		}
		if st := stat(t, m.path("chmod")); st.Size != int64(len(data)) || st.Mtim.Sec != set.Mtime.Unix() {
			t.Errorf("after setting a reference: size %d mtime %d", st.Size, st.Mtim.Sec)
		}
		want["chmod"] = data
	}
	// A batch on the root: a virtual file and a materialized one.
	var sets []VirtualSet
	for _, name := range []string{"dir/deep", "write"} {
		data := []byte("batched " + name + "\n")
		sets = append(sets, VirtualSet{Ref: add(name, data), Size: uint64(len(data)), Mtime: mtime})
		want[name] = data
	}
	for _, v := range EncodeVirtualBatch(sets) {
		if err := syscall.Setxattr(m.mp, VirtualXattr, v, 0); err != nil {
			t.Fatal(err)
		}
	}
	delete(materialized, "write")
	for _, name := range []string{"dir/deep", "write"} {
		if got := readFile(t, m.path(name)); got != string(want[name]) {
			t.Errorf("after a batch: %s reads %q", name, got)
		}
	}
	if err := syscall.Setxattr(m.mp, VirtualXattr, []byte("nonsense\n"), 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a malformed batch: %v, want EINVAL", err)
	}
	if err := syscall.Setxattr(m.path("chmod"), VirtualXattr, []byte("nonsense"), 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a malformed reference: %v, want EINVAL", err)
	}

	m.remount(t)
	m.fsys.SetResolver(resolver)
	check("after a remount")
}

// testRevs is a mount's resolver in tests: file revisions in a map,
// added by a test while the mount's goroutines read them, with a count
// of resolutions.
type testRevs struct {
	mu    sync.Mutex
	data  map[fsnode.VirtualRef][]byte
	calls int
}

func newTestRevs() *testRevs { return &testRevs{data: map[fsnode.VirtualRef][]byte{}} }

// add stores data as a revision of path and returns its reference.
func (r *testRevs) add(path string, data []byte) fsnode.VirtualRef {
	ref := fsnode.VirtualRef{Node: sha1.Sum(append([]byte(path+"\x00"), data...)), Path: path}
	r.mu.Lock()
	r.data[ref] = data
	r.mu.Unlock()
	return ref
}

func (r *testRevs) resolve(ref fsnode.VirtualRef) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if d, ok := r.data[ref]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no revision %x of %s", ref.Node, ref.Path)
}

// resolutions returns how many times resolve was called.
func (r *testRevs) resolutions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// TestInfoXattr: the root of a cache mount answers mount.InfoXattr with
// its Info (no counters), what the stats file says of the mount itself;
// no other node has the attribute, and no listing shows it. No node
// stores a value under it (or under an UpdateXattr name): reads of those
// names never reach what is stored.
func TestInfoXattr(t *testing.T) {
	m := newMount(t)
	if err := os.Mkdir(m.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.path("f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	n, err := syscall.Getxattr(m.mp, InfoXattr, buf)
	if err != nil {
		t.Fatalf("getxattr %s on the root: %v", InfoXattr, err)
	}
	var got Info
	if err := json.Unmarshal(buf[:n], &got); err != nil {
		t.Fatalf("%s: %q: %v", InfoXattr, buf[:n], err)
	}
	stats, err := ReadInfo(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Pid: stats.Pid, Mountpoint: stats.Mountpoint, Source: stats.Source, Kind: stats.Kind, ReadOnly: stats.ReadOnly, Virtual: stats.Virtual}
	if got != want || got.Pid != os.Getpid() || got.Kind != "cache" || !got.Virtual {
		t.Errorf("%s = %+v; the stats file says %+v", InfoXattr, got, want)
	}
	if size, err := syscall.Getxattr(m.mp, InfoXattr, nil); err != nil || size != n {
		t.Errorf("size query: %d, %v; want %d", size, err, n)
	}
	for _, p := range []string{m.path("d"), m.path("f"), m.path(VirtualDirName)} {
		if _, err := syscall.Getxattr(p, InfoXattr, buf); !errors.Is(err, syscall.ENODATA) {
			t.Errorf("getxattr %s on %s: %v, want ENODATA", InfoXattr, p, err)
		}
	}
	for _, p := range []string{m.mp, m.path("f")} {
		for _, name := range []string{InfoXattr, UpdateXattr + "x"} {
			if err := syscall.Setxattr(p, name, []byte("{}"), 0); !errors.Is(err, syscall.EPERM) {
				t.Errorf("setxattr %s on %s: %v, want EPERM", name, p, err)
			}
		}
	}
	n, err = syscall.Listxattr(m.mp, buf)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf[:n], []byte(InfoXattr)) {
		t.Errorf("listxattr of the root lists %s: %q", InfoXattr, buf[:n])
	}
}
