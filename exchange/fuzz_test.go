package exchange

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/streamclone"
)

// tinyChangegroup encodes a valid two-changeset history (a file added,
// then changed) as a cg2 stream, the fuzz seed.
func tinyChangegroup(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := changegroup.NewWriter(&buf, "02")
	if err != nil {
		t.Fatal(err)
	}
	var null revlog.Node
	f1 := []byte("hello\n")
	f2 := []byte("hello\nworld\n")
	fn1 := revlog.HashRevision(f1, null, null)
	fn2 := revlog.HashRevision(f2, fn1, null)
	m1 := []byte(fmt.Sprintf("a.txt\x00%s\n", fn1))
	m2 := []byte(fmt.Sprintf("a.txt\x00%s\n", fn2))
	mn1 := revlog.HashRevision(m1, null, null)
	mn2 := revlog.HashRevision(m2, mn1, null)
	c1 := []byte(fmt.Sprintf("%s\ntest\n0 0\na.txt\n\nfirst", mn1))
	c2 := []byte(fmt.Sprintf("%s\ntest\n1 0\na.txt\n\nsecond", mn2))
	cn1 := revlog.HashRevision(c1, null, null)
	cn2 := revlog.HashRevision(c2, cn1, null)
	groups := []struct {
		kind  changegroup.GroupKind
		name  string
		texts [][]byte
		nodes []revlog.Node
		links []revlog.Node
	}{
		{changegroup.Changelog, "", [][]byte{c1, c2}, []revlog.Node{cn1, cn2}, []revlog.Node{cn1, cn2}},
		{changegroup.Manifest, "", [][]byte{m1, m2}, []revlog.Node{mn1, mn2}, []revlog.Node{cn1, cn2}},
		{changegroup.File, "a.txt", [][]byte{f1, f2}, []revlog.Node{fn1, fn2}, []revlog.Node{cn1, cn2}},
	}
	for _, g := range groups {
		if err := w.StartGroup(g.kind, g.name); err != nil {
			t.Fatal(err)
		}
		for i := range g.texts {
			d := changegroup.Delta{Node: g.nodes[i], LinkNode: g.links[i], Data: changegroup.FullDelta(g.texts[i])}
			if i > 0 {
				d.P1 = g.nodes[i-1]
			}
			if err := w.WriteDelta(&d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzApplyChangegroup applies arbitrary cg2 bytes to a new repository:
// never a panic; a failure rolls back to the empty store.
func FuzzApplyChangegroup(f *testing.F) {
	seed := tinyChangegroup(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	mutated := bytes.Clone(seed)
	mutated[len(mutated)/3] ^= 0x40
	f.Add(mutated)
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		if err := Init(root, streamclone.DefaultRequirements(), ""); err != nil {
			t.Fatal(err)
		}
		s, err := Begin(context.Background(), root, "fuzz", Options{})
		if err != nil {
			t.Fatal(err)
		}
		cg, err := changegroup.NewReader(bytes.NewReader(data), "02")
		if err != nil {
			s.Abort()
			return
		}
		if _, err := s.ApplyChangegroup(context.Background(), cg, Draft); err != nil {
			// Rolled back: no revlog may remain.
			filepath.Walk(filepath.Join(root, ".hg", "store"), func(p string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() && (filepath.Ext(p) == ".i" || filepath.Ext(p) == ".d") {
					t.Errorf("%s left after a failed apply: %v", p, err)
				}
				return nil
			})
			return
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestApplyTiny applies the fuzz seed and reads it back.
func TestApplyTiny(t *testing.T) {
	root := t.TempDir()
	if err := Init(root, streamclone.DefaultRequirements(), ""); err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	s, err := Begin(context.Background(), root, "unbundle", Options{Status: func(m string) { status.WriteString(m) }})
	if err != nil {
		t.Fatal(err)
	}
	cg, err := changegroup.NewReader(bytes.NewReader(tinyChangegroup(t)), "02")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ApplyChangegroup(context.Background(), cg, Draft)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changesets != 2 || res.Revisions != 2 || res.Files != 1 {
		t.Errorf("result %+v", res)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	want := "adding changesets\nadding manifests\nadding file changes\nadded 2 changesets with 2 changes to 1 files\n"
	if got := status.String(); got[:len(want)] != want {
		t.Errorf("status %q", got)
	}
	phaseroots, err := os.ReadFile(filepath.Join(root, ".hg", "store", "phaseroots"))
	if err != nil || !bytes.HasPrefix(phaseroots, []byte("1 ")) {
		t.Errorf("phaseroots %q %v", phaseroots, err)
	}
}
