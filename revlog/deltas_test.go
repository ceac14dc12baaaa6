package revlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestWriterDeltaPolicy checks the stored delta choices that matter:
// an incoming delta reused as is (lazydeltabase), legacy revlogs always
// delta against the previous revision, chain length bounded.
func TestWriterDeltaPolicy(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %d\n", i))
	}
	textAt := func(i int) []byte {
		l := slices.Clone(lines)
		l[i%len(l)] = fmt.Sprintf("changed %d\n", i)
		return []byte(strings.Join(l, ""))
	}
	t.Run("lazydeltabase", func(t *testing.T) {
		w, err := OpenWriter(dir, "a.i", WriterOptions{Compression: CompressionNone, GeneralDelta: true, SparseRevlog: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		t0, t1, t2 := textAt(0), textAt(1), textAt(2)
		n0, _, _ := w.AddRevision(t0, NullNode, NullNode, 0, 0)
		n1, _, _ := w.AddRevision(t1, w.Node(n0), NullNode, 1, 0)
		// rev 2's parent is rev 1, but the sender deltas against rev 0.
		d := Diff(t0, t2)
		node := HashRevision(t2, w.Node(n1), NullNode)
		rev, _, err := w.AddDelta(node, w.Node(n1), NullNode, w.Node(n0), d, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e := w.Entry(rev); e.BaseRev != n0 || e.CompressedLen != int64(len(d)) { // a delta starts with \0: stored raw
			t.Errorf("incoming delta not kept: base %d len %d (delta %d bytes)", e.BaseRev, e.CompressedLen, len(d))
		}
	})
	t.Run("legacy", func(t *testing.T) {
		w, err := OpenWriter(dir, "b.i", WriterOptions{Compression: CompressionZlib, MaxChainLen: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		n0, _, _ := w.AddRevision(textAt(0), NullNode, NullNode, 0, 0)
		prev := n0
		for i := 1; i < 9; i++ {
			t2 := textAt(i)
			// Always against rev 0: must be recomputed against i-1.
			node := HashRevision(t2, w.Node(prev), NullNode)
			rev, _, err := w.AddDelta(node, w.Node(prev), NullNode, w.Node(n0), Diff(textAt(0), t2), i, 0)
			if err != nil {
				t.Fatal(err)
			}
			prev = rev
		}
		for rev := range w.Len() {
			e := w.Entry(rev)
			chain := rev - e.BaseRev
			if chain > 3 || chain < 0 {
				t.Errorf("rev %d: chain base %d (max chain 3)", rev, e.BaseRev)
			}
			if b, err := w.Revision(rev); err != nil || !bytes.Equal(b, textAt(rev)) {
				t.Errorf("rev %d: %v", rev, err)
			}
		}
		if w.Entry(4).BaseRev != 4 || w.Entry(5).BaseRev != 4 {
			t.Errorf("snapshots not where the chain bound puts them: bases %d %d", w.Entry(4).BaseRev, w.Entry(5).BaseRev)
		}
	})
}

// TestDeltaBookkeepingMatchesHg compares the writer's per-revision delta
// bookkeeping (issnapshot, _chaininfo, chainbase) with Mercurial's own
// on revlogs hg wrote: the sparse long-chain filelog, the manifest, and
// the legacy (non-generaldelta) variant.
func TestDeltaBookkeepingMatchesHg(t *testing.T) {
	python := hgPython(t)
	script := `
import json, sys
from mercurial import hg, ui as uimod
repo = hg.repository(uimod.ui.load(), sys.argv[1].encode())
out = {}
for name, rl in (("data/mf.i", repo.file(b"mf")._revlog), ("00manifest.i", repo.manifestlog.getstorage(b"")._revlog)):
    out[name] = [[bool(rl.issnapshot(r)), rl._chaininfo(r)[0], rl._chaininfo(r)[1], rl.chainbase(r)] for r in rl]
json.dump(out, sys.stdout)
`
	for _, v := range []string{"zstd", "nogd"} {
		dir := fixtures(t)[v]
		cmd := exec.Command(python, "-c", script, dir)
		cmd.Env = testenv.HgEnv()
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("%v\n%s", err, ee.Stderr)
			}
			t.Fatalf("%s: %v", v, err)
		}
		var want map[string][][4]any
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatal(err)
		}
		opt := writerOptions(v)
		for name, revs := range want {
			w, err := OpenWriter(filepath.Join(dir, ".hg", "store"), name, opt)
			if err != nil {
				t.Fatal(err)
			}
			if w.Len() != len(revs) {
				t.Fatalf("%s %s: %d revisions, hg %d", v, name, w.Len(), len(revs))
			}
			snaps := 0
			for rev, h := range revs {
				got := [4]any{w.isSnapshot(rev), float64(w.chainLen[rev]), float64(w.chainSize[rev]), float64(w.chainBase(rev))}
				if got != h {
					t.Errorf("%s %s rev %d: snapshot, chainlen, chainsize, chainbase %v; hg %v", v, name, rev, got, h)
				}
				if h[0].(bool) {
					snaps++
				}
			}
			if snaps == 0 || snaps == len(revs) {
				t.Errorf("%s %s: %d snapshots in %d revisions: fixture does not exercise chains", v, name, snaps, len(revs))
			}
			w.Close()
		}
	}
}
