package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/testenv"
)

// cgGroup is one decoded group of a changegroup.
type cgGroup struct {
	kind   changegroup.GroupKind
	name   string
	deltas []changegroup.Delta
}

// readGroups decodes the changegroup of an HG20 bundle file.
func readGroups(t *testing.T, path string) []cgGroup {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := changegroup.OpenBundle(f)
	if err != nil {
		t.Fatal(err)
	}
	var groups []cgGroup
	for {
		p, err := b.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Type != "changegroup" {
			continue
		}
		for {
			kind, name, err := p.Changegroup.NextGroup()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			g := cgGroup{kind: kind, name: name}
			for {
				var d changegroup.Delta
				ok, err := p.Changegroup.NextDelta(&d)
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
	}
	return groups
}

// writeGroups encodes groups as an HG20 cg2 bundle.
func writeGroups(t *testing.T, path string, groups []cgGroup) {
	t.Helper()
	var buf bytes.Buffer
	w, err := changegroup.NewBundleWriter(&buf, changegroup.BundleOptions{Type: "HG20", Version: "02"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
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
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cloneGroups(gs []cgGroup) []cgGroup {
	out := make([]cgGroup, len(gs))
	for i, g := range gs {
		out[i] = cgGroup{kind: g.kind, name: g.name, deltas: append([]changegroup.Delta(nil), g.deltas...)}
	}
	return out
}

// TestUnbundleBadChangegroups applies changegroups that lie: each must
// abort with a message naming the problem, roll back, and leave the
// repository byte for byte as it was (and hg verify happy).
func TestUnbundleBadChangegroups(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	base := filepath.Join(dir, "base.hg")
	more := filepath.Join(dir, "more.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "null", "-r", "0", "-t", "none-v2", base)
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-a", "-t", "none-v2", more)
	good := readGroups(t, more)
	fileGroup := -1
	for i, g := range good {
		if g.kind == changegroup.File && len(g.deltas) > 0 {
			fileGroup = i
			break
		}
	}
	if fileGroup < 0 || good[1].kind != changegroup.Manifest {
		t.Fatalf("unexpected fixture groups")
	}
	var bogus [20]byte
	copy(bogus[:], "not a node of anyone")

	cases := []struct {
		name, want string
		edit       func(g []cgGroup) []cgGroup
	}{
		{"wrong-node", "integrity check failed", func(g []cgGroup) []cgGroup {
			g[fileGroup].deltas[0].Node[0] ^= 1
			return g
		}},
		{"missing-base", "unknown delta base", func(g []cgGroup) []cgGroup {
			g[fileGroup].deltas[0].Base = bogus
			return g
		}},
		{"missing-parent", "unknown delta base", func(g []cgGroup) []cgGroup {
			g[fileGroup].deltas[0].P1 = bogus
			return g
		}},
		{"linkrev-nowhere", "unknown changeset", func(g []cgGroup) []cgGroup {
			g[1].deltas[0].LinkNode = bogus
			return g
		}},
		{"empty-file-group", "received file revlog group is empty", func(g []cgGroup) []cgGroup {
			g[fileGroup].deltas = nil
			return g
		}},
		{"bad-delta", "", func(g []cgGroup) []cgGroup {
			g[fileGroup].deltas[0].Data = []byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 'x'}
			return g
		}},
	}
	repo := filepath.Join(dir, "repo")
	testenv.Hg(t, dir, "init", repo)
	if _, stderr, code := hgfsIn(repo, "unbundle", base); code != 0 {
		t.Fatalf("unbundle base: %s", stderr)
	}
	before := storeSnapshot(t, repo)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, tc.name+".hg")
			writeGroups(t, bad, tc.edit(cloneGroups(good)))
			stdout, stderr, code := hgfsIn(repo, "unbundle", bad)
			if code != 255 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "rollback completed") || !strings.Contains(lastLine(stderr), "abort: ") ||
				!strings.Contains(lastLine(stderr), tc.want) {
				t.Errorf("stderr %q, want an abort mentioning %q", stderr, tc.want)
			}
			sameSnapshot(t, tc.name, before, storeSnapshot(t, repo))
			testenv.Hg(t, repo, "verify", "-q")
		})
	}
	// The unmodified re-encoding applies.
	ok := filepath.Join(dir, "ok.hg")
	writeGroups(t, ok, cloneGroups(good))
	if _, stderr, code := hgfsIn(repo, "unbundle", ok); code != 0 {
		t.Fatalf("good bundle: %s", stderr)
	}
	testenv.Hg(t, repo, "verify", "-q")
}
