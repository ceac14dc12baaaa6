package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/testenv"
)

// fileTwiceFixture is a repository with two heads over a root that has
// files a and b: changeset 1 changes a; 2, a sibling of 1, changes a too;
// 3, on 2, changes b; 4 changes a again. a's revisions of 1 and 2 both
// have the root's as parent, so a bundle may carry them in separate
// groups that each apply on their own; 4's needs 2's.
func fileTwiceFixture(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", src)
	for i, c := range []struct {
		parent string
		files  map[string]string
	}{
		{"", map[string]string{"a": "1\n", "b": "x\n"}},
		{"", map[string]string{"a": "1\n2\n"}},
		{"0", map[string]string{"a": "1\n3\n"}},
		{"", map[string]string{"b": "y\n"}},
		{"", map[string]string{"a": "1\n3\n4\n"}},
	} {
		if c.parent != "" {
			testenv.Hg(t, src, "update", "-q", c.parent)
		}
		for name, content := range c.files {
			if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Hg(t, src, "commit", "-qAm", string(rune('0'+i)))
	}
	return src
}

// splitFileGroup rewrites the single-changegroup bundle in as an HG20
// bundle whose changegroup carries file's group twice: its first delta,
// then the other files' groups, then its remaining deltas.
func splitFileGroup(t *testing.T, in, out, file string) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := changegroup.OpenBundle(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.NextPart()
	if err != nil || p.Changegroup == nil {
		t.Fatalf("first part: %v %+v", err, p)
	}
	type group struct {
		kind   changegroup.GroupKind
		name   string
		deltas []changegroup.Delta
	}
	var groups []group
	cg := p.Changegroup
	for {
		kind, name, err := cg.NextGroup()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		g := group{kind: kind, name: name}
		for {
			var d changegroup.Delta
			ok, err := cg.NextDelta(&d)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			d.Data = bytes.Clone(d.Data)
			g.deltas = append(g.deltas, d)
		}
		groups = append(groups, g)
	}
	var split []group
	var rest *group
	for _, g := range groups {
		if g.kind == changegroup.File && g.name == file {
			if len(g.deltas) < 2 {
				t.Fatalf("%s has %d revisions in the bundle", file, len(g.deltas))
			}
			split = append(split, group{g.kind, g.name, g.deltas[:1]})
			rest = &group{g.kind, g.name, g.deltas[1:]}
			continue
		}
		split = append(split, g)
	}
	if rest == nil {
		t.Fatalf("no group for %s", file)
	}
	split = append(split, *rest)

	var buf bytes.Buffer
	w, err := changegroup.NewBundleWriter(&buf, changegroup.BundleOptions{Type: "HG20", Version: cg.Version()})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range split {
		if err := w.StartGroup(g.kind, g.name); err != nil {
			t.Fatal(err)
		}
		for i := range g.deltas {
			if err := w.WriteDelta(&g.deltas[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// partsScript writes, with Mercurial's own bundle2 and changegroup
// code, an HG20 bundle of one changegroup part per (base, head) pair of
// revision numbers: argv is the repository, the output file, then the
// pairs.
const partsScript = `
import os, sys
from mercurial import bundle2, changegroup, discovery, hg, ui as uimod
u = uimod.ui.load()
u.setconfig(b'ui', b'quiet', b'true')
repo = hg.repository(u, os.fsencode(sys.argv[1]))
bundler = bundle2.bundle20(u)
for base, head in zip(sys.argv[3::2], sys.argv[4::2]):
    out = discovery.outgoing(repo, commonheads=[repo[int(base)].node()], ancestorsof=[repo[int(head)].node()])
    part = bundler.newpart(b'changegroup', data=changegroup.makestream(repo, out, b'02', b'bundle'))
    part.addparam(b'version', b'02')
with open(sys.argv[2], 'wb') as f:
    for chunk in bundler.getchunks():
        f.write(chunk)
`

// TestUnbundleFileInSeveralGroups applies bundles that bring one
// filelog's revisions in several groups, to a repository that already
// has the file: a changegroup with the file's group twice, and a bundle2
// with three changegroup parts that all touch the file (made by
// Mercurial).
// Each filelog must get one writer per transaction: a second one opened
// while the first's revisions waited unflushed wrote over them and left
// the revisions already in the repository unreadable. The result must be
// what hg 6.3 and hg 7 make of the same bundle: same output, hg verify
// clean (by both), hg log --debug equal.
func TestUnbundleFileInSeveralGroups(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	src := fileTwiceFixture(t, dir)

	whole := filepath.Join(dir, "whole.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-r", "1", "-r", "4", "-t", "none-v2", whole)
	twice := filepath.Join(dir, "twice.hg")
	splitFileGroup(t, whole, twice, "a")
	// Parts of 1, of 2 and 3, and of 4: a is in every one, and the
	// third's revision of a has the second's as parent.
	parts := filepath.Join(dir, "parts.hg")
	if out, err := testenv.HgPython(t, partsScript, src, parts, "0", "1", "1", "3", "3", "4").CombinedOutput(); err != nil {
		t.Fatalf("writing the bundle of three parts: %v\n%s", err, out)
	}

	for _, tc := range []struct{ name, bundle string }{{"group-twice", twice}, {"three-parts", parts}} {
		t.Run(tc.name, func(t *testing.T) {
			hgfsRepo := filepath.Join(dir, tc.name+"-hgfs")
			testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src, hgfsRepo)
			got, stderr, code := hgfsIn(hgfsRepo, "unbundle", tc.bundle)
			if code != 0 {
				t.Fatalf("hgfs unbundle: exit %d\n%s%s", code, got, stderr)
			}
			for _, hg := range hgs {
				hg.Run(t, hgfsRepo, "verify", "-q")
				hgRepo := filepath.Join(dir, tc.name+"-"+hg.Name)
				testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src, hgRepo)
				want := string(hg.Run(t, hgRepo, "unbundle", tc.bundle))
				if got != want {
					t.Errorf("output differs from %s's:\n%s", hg.Name, testenv.Diff(hg.Name, want, "hgfs", got))
				}
				if w, g := repoState(t, hgRepo, true), repoState(t, hgfsRepo, true); w != g {
					t.Errorf("repository differs from %s's:\n%s", hg.Name, testenv.Diff(hg.Name, w, "hgfs", g))
				}
			}
		})
	}
}
