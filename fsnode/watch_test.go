package fsnode

import (
	"slices"
	"strconv"
	"testing"
)

// A Watch reports the watched inodes whose contents, attributes or (for
// a directory) entries changed since the last Take, nothing else; in All
// mode it keeps every inode's change, for the set watched when Take
// comes; past maxWatchHits it says only that it overflowed.
func TestWatch(t *testing.T) {
	f := newTestFS(t, Options{})
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	a := createFile(t, f, d.Ino, "a", []byte("a\n"))
	b := createFile(t, f, d.Ino, "b", []byte("b\n"))
	other := createFile(t, f, RootIno, "other", []byte("o\n"))
	w := NewWatch()
	f.SetWatch(w)
	w.Reset(map[Ino]string{d.Ino: "d/", a.Ino: "d/a", b.Ino: "d/b"})
	take := func(want ...string) {
		t.Helper()
		got, overflow := w.Take()
		slices.Sort(got)
		if overflow || !slices.Equal(got, want) {
			t.Fatalf("Take: %q (overflow %t), want %q", got, overflow, want)
		}
	}
	take()
	if err := f.WriteFile(bg, "other", []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	take()
	if err := f.WriteFile(bg, "d/a", []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	take("d/a")
	mode := uint32(0o755)
	must[Attr](t)(f.SetAttr(bg, b.Ino, SetAttr{Mode: &mode}))
	take("d/b")
	if err := f.Rename(bg, d.Ino, "b", RootIno, "b2", 0); err != nil {
		t.Fatal(err)
	}
	take("d/", "d/b")
	if err := f.Unlink(bg, RootIno, "b2"); err != nil {
		t.Fatal(err)
	}
	take("d/b")
	createFile(t, f, RootIno, "new", []byte("n\n"))
	take()

	// All: what changes before an inode is watched is reported once it is.
	w.All(true)
	n := createFile(t, f, d.Ino, "n", []byte("n\n"))
	if err := f.WriteFile(bg, "other", []byte("again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Set(n.Ino, "d/n")
	w.All(false)
	take("d/", "d/n")
	w.All(true)
	if err := f.WriteFile(bg, "d/n", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.All(false)
	w.Set(other.Ino, "other")
	take("d/n")

	// Overflow.
	w.All(true)
	for i := range maxWatchHits + 1 {
		must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Mode: &mode}))
		createFile(t, f, RootIno, "f"+strconv.Itoa(i), nil)
	}
	w.All(false)
	if got, overflow := w.Take(); !overflow || got != nil {
		t.Fatalf("Take after %d changes: %q, overflow %t; want overflow", maxWatchHits+1, got, overflow)
	}
	take()
	f.SetWatch(nil)
	if err := f.WriteFile(bg, "d/a", []byte("unwatched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	take()
}
