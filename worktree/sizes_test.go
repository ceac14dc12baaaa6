package worktree

import (
	"crypto/sha1"
	"hash/maphash"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hgfs/hgfs/revlog"
)

// filelogIndex writes an inline filelog of texts (a linear history)
// with revlog.Writer and returns its .i bytes.
func filelogIndex(t *testing.T, name string, texts ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	w, err := revlog.OpenWriter(dir, name+".i", revlog.WriterOptions{Compression: "zstd", GeneralDelta: true})
	if err != nil {
		t.Fatal(err)
	}
	p1 := revlog.NullNode
	for i, text := range texts {
		rev, _, err := w.AddRevision([]byte(text), p1, revlog.NullNode, i, 0)
		if err != nil {
			t.Fatal(err)
		}
		p1 = w.Node(rev)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".i"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSizes: a snapshot's content length (a metadata header left out),
// by its node; a delta, a name outside data/ and a damaged index are
// not learnt; a filelog claiming another's node with other content
// does not change that node's size, in either order.
func TestSizes(t *testing.T) {
	plain := filelogIndex(t, "plain", "twelve bytes")
	escaped := filelogIndex(t, "escaped", "\x01\n\x01\n\x01\nbody")
	delta := filelogIndex(t, "delta", "a line that the next revision keeps\n", "a line that the next revision keeps\nand one more\n")
	nodeOf := func(index []byte) revlog.Node {
		fl, err := revlog.FromBytes("f.i", index, nil)
		if err != nil {
			t.Fatal(err)
		}
		return fl.Node(fl.Len() - 1)
	}
	// forged: another text under plain's node (its hash fails).
	forged := filelogIndex(t, "forged", "other content, not twelve")
	n := nodeOf(plain)
	copy(forged[32:52], n[:])
	for _, order := range [][]string{{"plain", "forged"}, {"forged", "plain"}} {
		s := NewSizes()
		files := map[string][]byte{"plain": plain, "forged": forged}
		for _, name := range order {
			s.Observe("data/"+name+".i", files[name])
		}
		s.Observe("data/escaped.i", escaped)
		s.Observe("data/delta.i", delta)
		s.Observe("meta/plain.i", filelogIndex(t, "meta", "not a file"))
		s.Observe("data/short.i", plain[:40])
		s.Wait()
		if got, ok := s.Size(n); !ok || got != 12 {
			t.Errorf("%v: plain: %d, %v; want 12", order, got, ok)
		}
		if got, ok := s.Size(nodeOf(escaped)); !ok || got != 6 {
			t.Errorf("escaped: %d, %v; want 6", got, ok)
		}
		if _, ok := s.Size(nodeOf(delta)); ok {
			t.Error("a delta was sized")
		}
		if s.Len() != 2 {
			t.Errorf("%d sizes learnt, want 2", s.Len())
		}
	}
	var none *Sizes
	none.Wait()
	if _, ok := none.Size(n); ok || none.Len() != 0 {
		t.Error("a nil Sizes knows a size")
	}
}

// TestSizeTable checks the table against a map through its growth:
// every node put is found with its last size, others are not.
func TestSizeTable(t *testing.T) {
	tb := sizeTable{seed: maphash.MakeSeed()}
	want := map[revlog.Node]uint32{}
	node := func(i int) revlog.Node {
		return revlog.Node(sha1.Sum([]byte(strconv.Itoa(i))))
	}
	for i := range 100000 {
		n := node(i % 70000) // the last 30,000 set again
		tb.put(n, uint32(i))
		want[n] = uint32(i)
	}
	tb.put(node(-1), math.MaxUint32-1)
	want[node(-1)] = math.MaxUint32 - 1
	if tb.n != len(want) {
		t.Fatalf("%d nodes, want %d", tb.n, len(want))
	}
	for n, size := range want {
		if got, ok := tb.get(n); !ok || got != size {
			t.Fatalf("%s: %d, %v; want %d", n, got, ok, size)
		}
	}
	for i := 70000; i < 80000; i++ {
		if got, ok := tb.get(node(i)); ok {
			t.Fatalf("%s never put: %d", node(i), got)
		}
	}
	if load := float64(tb.n) / float64(len(tb.slots)); load > 0.8 || load < 0.5 {
		t.Errorf("load %.2f", load)
	}
	var empty sizeTable
	if _, ok := empty.get(node(0)); ok {
		t.Error("an empty table has a node")
	}
}
