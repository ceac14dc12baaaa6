//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/internal/hggen"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

// TestCheckoutFloorSizes checks the floor's shortcut against the
// content as a checkout reads it, for every revision of every filelog:
// on real history (copies and renames carry metadata) and on generated
// repositories of each compression, with files that start with the
// metadata marker, empty files and long delta chains.
func TestCheckoutFloorSizes(t *testing.T) {
	roots := map[string]string{"corpus": testenv.CorpusRepo(t, testenv.CorpusHistory)}
	// Rich's history without its obsolescence markers, which hg sends
	// in no stream bundle.
	rich := hggen.Rich
	rich.Obsolete, rich.History = false, true
	for name, spec := range map[string]hggen.Spec{"rich": rich, "zlib": hggen.Zlib, "none": hggen.NoCompression, "nogd": hggen.NoGeneralDelta} {
		roots[name] = testenv.Generate(t, spec)
	}
	for name, root := range roots {
		t.Run(name, func(t *testing.T) {
			r, err := repo.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			entries, err := r.Store.Fncache()
			if err != nil {
				t.Fatal(err)
			}
			revs, marked := 0, 0
			var lastFiles, lastBytes int64 // each filelog's last revision
			for _, e := range entries {
				path, data := strings.CutPrefix(e, "data/")
				path, index := strings.CutSuffix(path, ".i")
				if !data || !index {
					continue
				}
				fl, err := r.File(path)
				if err != nil {
					t.Fatal(err)
				}
				for rev := range fl.Len() {
					me := revlog.ManifestEntry{Path: path, Node: fl.Node(rev)}
					data, err := repo.FileContent(fl, me)
					if err != nil {
						t.Fatal(err)
					}
					got, err := exactSize(r, me)
					if err != nil {
						t.Fatalf("%s rev %d: %v", path, rev, err)
					}
					if got != int64(len(data)) {
						t.Errorf("%s rev %d: size %d, content %d bytes", path, rev, got, len(data))
					}
					if rev == fl.Len()-1 {
						lastFiles++
						lastBytes += int64(len(data))
					}
					if fl.Entry(rev).RawLen != int64(len(data)) {
						marked++
					}
					revs++
				}
				fl.Close()
			}
			t.Logf("%d file revisions, %d with a metadata header", revs, marked)
			if revs == 0 {
				t.Fatal("no file revisions")
			}
			// The floor's own path: the repository's stream bundle
			// applied into memSink sizes each filelog's last revision.
			bundle := filepath.Join(t.TempDir(), "stream.hg")
			hg := exec.Command(testenv.HgPath(t), "-R", root, "--config", "server.uncompressedallowsecret=true", "bundle", "-q", "-a", "-t", "none-v2;stream=v2", bundle)
			hg.Env = testenv.HgEnv()
			if out, err := hg.CombinedOutput(); err != nil {
				t.Fatalf("hg bundle: %v\n%s", err, out)
			}
			f, err := os.Open(bundle)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sink := newMemSink()
			if _, err := streamclone.ApplyBundle(context.Background(), f, sink, streamclone.Options{}); err != nil {
				t.Fatal(err)
			}
			if sink.files.Load() != lastFiles || sink.bytes.Load() != lastBytes {
				t.Errorf("stream: %d filelogs, %d bytes; filelogs: %d, %d bytes", sink.files.Load(), sink.bytes.Load(), lastFiles, lastBytes)
			}
		})
	}
}

// exactSize is the length of e's content in the repository r, learnt
// the cheapest way (exactSizeRev).
func exactSize(r *repo.Repo, e revlog.ManifestEntry) (int64, error) {
	fl, err := r.File(e.Path)
	if err != nil {
		return 0, err
	}
	defer fl.Close()
	rev, ok := fl.Rev(e.Node)
	if !ok {
		return 0, fmt.Errorf("%s@%s: %w", e.Path, e.Node.Short(), revlog.ErrNotFound)
	}
	return exactSizeRev(fl, rev)
}
