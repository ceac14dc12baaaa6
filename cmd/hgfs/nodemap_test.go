package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// slowNodemap lets hg without Rust open persistent-nodemap repositories.
var slowNodemap = []string{"--config", "storage.revlog.persistent-nodemap.slow-path=allow"}

// nodemapState is what hg reports of a repository's persistent nodemaps:
// debugnodemap --check and --metadata (without the random uid) and a hash
// of --dump-disk, for the changelog (and, with hg 7, the manifest), and
// the nodemap files of the store.
func nodemapState(t *testing.T, hg testenv.Mercurial, r string) string {
	t.Helper()
	var b strings.Builder
	kinds := [][]string{nil}
	if hg.Major() >= 7 {
		kinds = [][]string{{"-c"}, {"-m"}}
	}
	for _, k := range kinds {
		for _, op := range []string{"--check", "--metadata", "--dump-disk"} {
			out, errOut, err := hg.Result(t, r, append(append([]string{"debugnodemap", op}, k...), slowNodemap...)...)
			if err != nil {
				t.Fatalf("%s debugnodemap %s %v: %v\n%s", hg.Name, op, k, err, errOut)
			}
			if len(errOut) > 0 {
				fmt.Fprintf(&b, "debugnodemap %s %v stderr:\n%s", op, k, errOut)
			}
			switch op {
			case "--dump-disk":
				fmt.Fprintf(&b, "dump-disk %v: %d bytes, sha256 %x\n", k, len(out), sha256.Sum256(out))
			case "--metadata":
				b.WriteString(regexp.MustCompile(`(?m)^uid: [0-9a-f]+\n`).ReplaceAllString(string(out), "uid: *\n"))
			default:
				b.Write(out)
			}
		}
	}
	ents, _ := os.ReadDir(filepath.Join(r, ".hg", "store"))
	var files []string
	for _, e := range ents {
		// Not the undo files, which hg 7 names differently.
		if n := e.Name(); !strings.HasPrefix(n, "undo.") && (strings.HasSuffix(n, ".n") || strings.HasSuffix(n, ".nd")) {
			files = append(files, regexp.MustCompile(`-[0-9a-f]+\.nd$`).ReplaceAllString(n, "-*.nd"))
		}
	}
	sort.Strings(files)
	fmt.Fprintf(&b, "files: %s\n", strings.Join(files, " "))
	return b.String()
}

// TestPersistentNodemap unbundles and pulls Mercurial's real history into
// persistent-nodemap repositories, empty (the changelog becomes too big
// to stay inline during the transaction) and holding its first half, and
// checks with hg 6.3 and hg 7 that the nodemaps hgfs writes are those hg
// writes: debugnodemap --check clean, the same metadata and the same
// trie on disk, one data file per revlog. A failed unbundle leaves them
// as they were.
func TestPersistentNodemap(t *testing.T) {
	t.Parallel()
	corpus := testenv.Corpus(t, testenv.CorpusHistory)
	// The sources, made once with hg 6.3: the first 1,200 changesets (a
	// changelog of some 200 KB, past the 128 KiB an inline revlog may
	// hold), as a repository and a bundle, and a repository of the
	// first 700 (already past it).
	hg6 := testenv.Default(t)
	dir := t.TempDir()
	initArgs := append([]string{"--config", "format.use-persistent-nodemap=true"}, slowNodemap...)
	all := filepath.Join(dir, "all")
	hg6.Run(t, dir, append([]string{"init", all}, initArgs...)...)
	hg6.Run(t, all, append([]string{"unbundle", "-q", corpus}, slowNodemap...)...)
	full := filepath.Join(dir, "full")
	hg6.Run(t, dir, append([]string{"clone", "-q", "-U", "-r", "1199", all, full}, initArgs...)...)
	bundle := filepath.Join(dir, "full.hg")
	hg6.Run(t, full, append([]string{"bundle", "-q", "-a", bundle}, slowNodemap...)...)
	base := filepath.Join(dir, "base")
	hg6.Run(t, dir, append([]string{"clone", "-q", "-U", "-r", "699", full, base}, initArgs...)...)
	if st := nodemapState(t, hg6, base); !strings.Contains(st, "tip-rev: 699\n") {
		t.Fatalf("the base repository has no nodemap:\n%s", st)
	}
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			dir := t.TempDir()
			url := hg.Serve(t, full, slowNodemap...)
			for _, tc := range []struct {
				name, start string
				args        []string
			}{
				{"unbundle-empty", "", []string{"unbundle", "-q", bundle}},
				{"unbundle-partial", base, []string{"unbundle", "-q", bundle}},
				{"pull-partial", base, []string{"pull", "-q", url}},
			} {
				repos := map[string]string{}
				for _, side := range []string{"hg", "hgfs"} {
					if tc.start == "" {
						repos[side] = filepath.Join(dir, tc.name+"-"+side)
						hg.Run(t, dir, append([]string{"init", repos[side]}, initArgs...)...)
					} else {
						repos[side] = testenv.CopyRepo(t, tc.start)
					}
				}
				hg.Run(t, repos["hg"], append(tc.args, slowNodemap...)...)
				if out, stderr, code := hgfsIn(repos["hgfs"], tc.args...); code != 0 {
					t.Fatalf("hgfs %s: exit %d\n%s%s", tc.name, code, out, stderr)
				}
				w, g := nodemapState(t, hg, repos["hg"]), nodemapState(t, hg, repos["hgfs"])
				if !strings.Contains(w, "tip-rev: 1199\n") {
					t.Fatalf("%s: hg's result has no nodemap of the whole history:\n%s", tc.name, w)
				}
				if w != g {
					t.Errorf("%s: nodemaps differ:\n%s", tc.name, testenv.Diff("hg", w, "hgfs", g))
				}
			}

			// A failed unbundle leaves the nodemaps as they were.
			data, err := os.ReadFile(bundle)
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(dir, "cut.hg")
			os.WriteFile(cut, data[:len(data)*3/4], 0o644)
			r := testenv.CopyRepo(t, base)
			before := nodemapState(t, hg, r)
			docket, _ := os.ReadFile(filepath.Join(r, ".hg", "store", "00changelog.n"))
			if _, _, code := hgfsIn(r, "unbundle", cut); code == 0 {
				t.Fatal("hgfs unbundle of a truncated bundle succeeded")
			}
			if after := nodemapState(t, hg, r); after != before {
				t.Errorf("failed unbundle:\n%s", testenv.Diff("before", before, "after", after))
			}
			if after, _ := os.ReadFile(filepath.Join(r, ".hg", "store", "00changelog.n")); string(after) != string(docket) {
				t.Error("failed unbundle changed the docket")
			}
		})
	}
}
