package fsnode

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// TestReadsSweepTable: reads alone (no commit) that load more inodes
// than the table's bound get a sweep from the committer, so a mount
// reading a whole store it did not write keeps a bounded table, and
// every file still reads what was written. Before, only commits swept.
func TestReadsSweepTable(t *testing.T) {
	f := newTestFS(t, Options{})
	dir := f.Dir()
	want := map[string][]byte{}
	for d := range 30 {
		a := must[Attr](t)(f.Mkdir(bg, RootIno, fmt.Sprintf("d%02d", d), 0o755))
		for i := range 100 {
			name := fmt.Sprintf("f%03d", i)
			want[fmt.Sprintf("d%02d/%s", d, name)] = []byte(name + fmt.Sprint(d))
			createFile(t, f, a.Ino, name, want[fmt.Sprintf("d%02d/%s", d, name)])
		}
	}
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	const bound = 200
	f.tree.Lock()
	f.c.evictBase, f.c.evictAt = bound, bound
	f.tree.Unlock()
	readAll := func() {
		t.Helper()
		for p, data := range want {
			if got := must[[]byte](t)(f.ReadFile(bg, p)); !bytes.Equal(got, data) {
				t.Fatalf("%s: contents differ", p)
			}
		}
	}
	readAll()
	loaded := func() int {
		f.imu.Lock()
		defer f.imu.Unlock()
		return len(f.inodes)
	}
	// The sweeps are the committer's, each after a load that asked, and
	// loads go on meanwhile: how far past the bound the table gets
	// depends on how soon the committer runs. Without the sweeps it
	// would hold every file's inode.
	for deadline := time.Now().Add(5 * time.Second); loaded() > len(want)/3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d inodes loaded after reading %d files (bound %d)", loaded(), len(want), bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	readAll()
}

// TestSweepSecondChance: a sweep spares an inode used since the last one
// (looked up, read or loaded) once, and evicts it at the next if it has
// not been used again; an unused clean inode goes at the first.
func TestSweepSecondChance(t *testing.T) {
	f := newTestFS(t, Options{})
	defer f.Close()
	a := createFile(t, f, RootIno, "a", []byte("a"))
	b := createFile(t, f, RootIno, "b", []byte("b"))
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	sweep := func() {
		f.tree.Lock()
		f.c.evictAt = 0
		f.tree.Unlock()
		f.afterCommit(nil)
	}
	inTable := func(ino Ino) bool {
		f.imu.Lock()
		defer f.imu.Unlock()
		return f.inodes[ino] != nil
	}
	sweep() // whatever creating them marked
	sweep()
	if inTable(a.Ino) || inTable(b.Ino) {
		t.Fatal("clean, unused inodes stayed through two sweeps")
	}
	must[Attr](t)(f.GetAttr(bg, a.Ino)) // loads a (used)
	must[Attr](t)(f.GetAttr(bg, b.Ino))
	must[Attr](t)(f.GetAttr(bg, b.Ino))
	sweep()
	if !inTable(a.Ino) || !inTable(b.Ino) {
		t.Fatal("a sweep evicted inodes used since the last one")
	}
	must[Attr](t)(f.GetAttr(bg, b.Ino)) // b used again, a not
	sweep()
	if inTable(a.Ino) || !inTable(b.Ino) {
		t.Fatalf("after the second sweep: a loaded %v (want false), b loaded %v (want true)", inTable(a.Ino), inTable(b.Ino))
	}
}
