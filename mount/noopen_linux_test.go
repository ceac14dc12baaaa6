//go:build linux

package mount

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// TestNoOpen checks that the cache mount runs without OPEN and RELEASE
// (no_open, noopen_linux.go): opening or creating a file leaves no fsnode
// handle, while reads, appends, writes at offsets, fsync, O_TRUNC and an
// unlinked open file behave as through a handle.
func TestNoOpen(t *testing.T) {
	m := newMount(t)
	name := m.path("f")
	writeFile(t, name, "hello\n")
	waitHandles(t, m, 0) // the CREATE's handle, released asynchronously

	r, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := m.fsys.Stats().OpenHandles; got != 0 {
		t.Fatalf("opening an existing file left %d fsnode handles: the kernel sent OPEN", got)
	}

	if _, err := a.WriteString("appended\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString("again\n"); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(); err != nil {
		t.Fatalf("fsync without a handle: %v", err)
	}
	w, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("J"), 0); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want := "Jello\nappended\nagain\n"
	buf := make([]byte, 64)
	n, err := r.ReadAt(buf, 0)
	if string(buf[:n]) != want {
		t.Fatalf("read through the mount: %q (%v), want %q", buf[:n], err, want)
	}

	// Unlinked while open: still readable and writable until closed.
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString("after unlink\n"); err != nil {
		t.Fatalf("write to an unlinked open file: %v", err)
	}
	n, err = r.ReadAt(buf, 0)
	if want += "after unlink\n"; string(buf[:n]) != want {
		t.Fatalf("read of an unlinked open file: %q (%v), want %q", buf[:n], err, want)
	}

	// O_TRUNC on open reaches the cache as a SETATTR.
	writeFile(t, m.path("g"), "some content\n")
	g, err := os.OpenFile(m.path("g"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if st := stat(t, m.path("g")); st.Size != 0 {
		t.Errorf("size after O_TRUNC: %d", st.Size)
	}

	// A created file is used without a handle too: once OPEN is
	// declined the kernel sends no RELEASE for it.
	c, err := os.Create(m.path("h"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteString("created\n"); err != nil {
		t.Fatal(err)
	}
	if got := m.fsys.Stats().OpenHandles; got != 0 {
		t.Errorf("created file open: %d handles, want 0", got)
	}
	c.Close()
	if got := readFile(t, m.path("h")); got != "created\n" {
		t.Errorf("created file: %q", got)
	}
}

// waitHandles waits for the cache's open handles to reach n (RELEASE is
// asynchronous).
func waitHandles(t *testing.T, m *testMount, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for m.fsys.Stats().OpenHandles != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d open handles, want %d", m.fsys.Stats().OpenHandles, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMovingContent checks the files whose content changes while their
// name stays (stats, the text views): with no_open they are read through
// the page cache, so each change must show in full, even at the same
// size (a new mtime drops the old pages), and never cut at a stale size.
func TestMovingContent(t *testing.T) {
	testenv.HgPath(t)
	m := newMount(t)
	testenv.Hg(t, "", "init", m.mp)
	// Each commit replaces the one head by its child: hg heads prints
	// as many bytes each time (one-digit revisions, fixed messages).
	commit := func(msg string) string {
		writeFile(t, m.path("a.txt"), msg+"\n")
		testenv.Hg(t, m.mp, "commit", "-q", "-A", "-d", "1700000000 0", "-m", msg)
		return string(testenv.Hg(t, m.mp, "heads"))
	}
	heads := filepath.Join(m.mp, VirtualDirName, "heads")
	first := commit("c1")
	if got := readFile(t, heads); got != first {
		t.Fatalf(".hgfs/heads: %q, want %q", got, first)
	}
	// The same size, other bytes: one head replaced by its child.
	second := commit("c2")
	if got := readFile(t, heads); got != second {
		t.Errorf(".hgfs/heads after a commit: %q, want %q", got, second)
	}
	// Held open across the change: a read(2) refreshes the attributes.
	f, err := os.Open(heads)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	third := commit("c3")
	if len(first) != len(second) || len(second) != len(third) {
		t.Fatalf("hg heads sizes differ: %d, %d, %d", len(first), len(second), len(third))
	}
	buf := make([]byte, 2*len(third))
	n, _ := f.ReadAt(buf, 0)
	if string(buf[:n]) != third {
		t.Errorf(".hgfs/heads held open across a commit: %q, want %q", buf[:n], third)
	}

	// stats: its size is its content's, and it follows the committer.
	info, err := ReadInfo(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pid != os.Getpid() || info.Stats == nil {
		t.Fatalf("stats: %+v", info)
	}
	before := info.Stats.Commits
	writeFile(t, m.path("b.txt"), "more\n")
	d, err := os.Open(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil { // drains the committer
		t.Fatal(err)
	}
	d.Close()
	info, err = ReadInfo(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if info.Stats.Commits <= before {
		t.Errorf("stats after a write and a sync: %d commits, before %d", info.Stats.Commits, before)
	}
	if st := stat(t, StatsPath(m.mp)); st.Size == 0 {
		t.Error("stats reports size 0")
	}
}

// TestMovingReadWhole reads a moving file that changes at every look,
// growing each time: a reader that reads it to the end and then finds
// its end (os.ReadFile, cat) gets one generation whole. Each read(2)
// refreshes the attributes, and the one that finds the end used to
// report a longer generation, whose tail the reader got after the
// previous one (torn JSON from .hgfs/stats during a clone).
func TestMovingReadWhole(t *testing.T) {
	testenv.RequireFUSE(t)
	fsys, err := fsnode.Create(t.TempDir(), fsnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	var looks atomic.Int64
	raw := newRawFS(fsys, func() any {
		return map[string]string{"pad": strings.Repeat("x", int(looks.Add(1)))}
	})
	mp := t.TempDir()
	srv, err := NewCacheServer(raw, mp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	if !raw.kernel.noOpen() {
		t.Skip("the kernel opens every file (no CAP_NO_OPEN_SUPPORT): each open has its own generation")
	}
	for i := 0; i < 50; i++ {
		// os.ReadFile, but bounded: a reader that is shown a longer
		// generation at each read(2) never finds the end.
		f, err := os.Open(StatsPath(mp))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(io.LimitReader(f, 1<<16))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 1<<16 {
			t.Fatalf("read %d: no end in sight after %d bytes:\n%.200s", i, len(data), data)
		}
		var v struct{ Pad string }
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("read %d: %v:\n%s", i, err, data)
		}
	}
}
