package changegroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

// TestWriterUnbundle: bundles written here, in each type and changegroup
// version, are accepted by hg unbundle into an empty repository, pass hg
// verify and give the source's history; the phase-heads and bookmarks
// parts take effect.
func TestWriterUnbundle(t *testing.T) {
	root := testenv.Generate(t, testenv.Small)
	src := readBundleFile(t, hgBundle(t, root, "none-v2"))
	logT := "{rev}:{node} {p1node} {p2node} {manifest} {branch} [{files}] {extras}\n{desc}\n"
	wantLog := string(testenv.Hg(t, root, "log", "--debug", "-r", "all()", "-T", logT))
	wantPublic := string(testenv.Hg(t, root, "log", "-r", "public()", "-T", "{node}\n"))
	wantBooks := string(testenv.Hg(t, root, "bookmarks", "-T", "{bookmark} {node}\n"))

	var publicHeads []PhaseHead
	for _, h := range hgLines(t, root, "log", "-r", "heads(public())", "-T", "{node}\n") {
		n, err := revlog.ParseNode(h)
		if err != nil {
			t.Fatal(err)
		}
		publicHeads = append(publicHeads, PhaseHead{Phase: PhasePublic, Node: n})
	}
	books := map[string][20]byte{}
	for _, l := range hgLines(t, root, "bookmarks", "-T", "{bookmark} {node}\n") {
		name, node, _ := strings.Cut(l, " ")
		n, err := revlog.ParseNode(node)
		if err != nil {
			t.Fatal(err)
		}
		books[name] = n
	}
	if len(publicHeads) == 0 || len(books) == 0 {
		t.Fatalf("the Small repository has no public heads or no bookmarks")
	}

	// HG10UN is covered by TestWriterIdentity (hg's own bytes).
	cases := []BundleOptions{
		{Type: "HG10GZ"},
		{Type: "HG20", Version: Version2, NbChanges: len(src.groups[0].deltas), PhaseHeads: publicHeads, Bookmarks: books},
		{Type: "HG20", Version: Version3},
	}
	for _, opt := range cases {
		name := opt.Type + "-" + opt.Version
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "b.hg")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewBundleWriter(f, opt)
			if err != nil {
				t.Fatal(err)
			}
			transcode(t, src.groups, w)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			// Decoding our own bundle gives the groups back.
			back := readBundleFile(t, path)
			if len(back.groups) != len(src.groups) {
				t.Fatalf("read back %d groups, wrote %d", len(back.groups), len(src.groups))
			}

			dst := filepath.Join(dir, "repo")
			testenv.Hg(t, dir, "init", dst)
			testenv.Hg(t, dst, "unbundle", "-q", "--config", "experimental.changegroup3=true", path)
			testenv.Hg(t, dst, "verify", "-q")
			if got := string(testenv.Hg(t, dst, "log", "--debug", "-r", "all()", "-T", logT)); got != wantLog {
				t.Errorf("hg log after unbundle differs:\n%s", testenv.Diff("source", wantLog, "unbundled", got))
			}
			if len(opt.PhaseHeads) > 0 {
				if got := string(testenv.Hg(t, dst, "log", "-r", "public()", "-T", "{node}\n")); got != wantPublic {
					t.Errorf("public changesets after unbundle:\n%s\nwant:\n%s", got, wantPublic)
				}
			}
			if len(opt.Bookmarks) > 0 {
				if got := string(testenv.Hg(t, dst, "bookmarks", "-T", "{bookmark} {node}\n")); got != wantBooks {
					t.Errorf("bookmarks after unbundle:\n%s\nwant:\n%s", got, wantBooks)
				}
			}
		})
	}
}
