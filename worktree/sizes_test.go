package worktree

import (
	"os"
	"path/filepath"
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
