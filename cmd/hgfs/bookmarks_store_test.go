package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
)

// bookmarksInStore makes repositories keep their bookmarks in the store
// (requirement bookmarksinstore).
var bookmarksInStore = []string{"--config", "format.bookmarks-in-store=true"}

// storeBookmarksFixture is a repository with bookmarksinstore: three
// changesets, bookmarks on each (one with a space in its name) and a
// malformed line and a bookmark on an unknown node, which hg skips.
func storeBookmarksFixture(t *testing.T, hg testenv.Mercurial, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	hg.Run(t, dir, append([]string{"init"}, append(bookmarksInStore, src)...)...)
	for i, content := range []string{"one\n", "two\n", "three\n"} {
		if err := os.WriteFile(filepath.Join(src, "f"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		hg.Run(t, src, "commit", "-qAm", "c"+content)
		if i == 1 {
			hg.Run(t, src, "bookmark", "main")
		}
	}
	hg.Run(t, src, "bookmark", "-r", "0", "feature")
	hg.Run(t, src, "bookmark", "-r", "2", "with space")
	f, err := os.OpenFile(filepath.Join(src, ".hg", "store", "bookmarks"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("nonsense\n" + strings.Repeat("ab", 20) + " unknown\n")
	f.Close()
	if _, err := os.Stat(filepath.Join(src, ".hg", "store", "bookmarks")); err != nil {
		t.Fatalf("fixture: no store bookmarks: %v", err)
	}
	if _, err := os.Stat(filepath.Join(src, ".hg", "bookmarks")); err == nil {
		t.Fatal("fixture: .hg/bookmarks exists")
	}
	return src
}

// bookmarksState is what a test compares between hg's result and hgfs's:
// hg bookmarks, the requirements, and which bookmarks files exist.
func bookmarksState(t *testing.T, hg testenv.Mercurial, r string) string {
	t.Helper()
	var b strings.Builder
	b.Write(hg.Run(t, r, "bookmarks"))
	b.Write(hg.Run(t, r, "debugrequirements"))
	for _, f := range []string{".hg/bookmarks", ".hg/store/bookmarks"} {
		if _, err := os.Stat(filepath.Join(r, filepath.FromSlash(f))); err == nil {
			b.WriteString(f + " exists\n")
		}
	}
	return b.String()
}

// TestBookmarksInStore reads and writes the bookmarks of
// bookmarksinstore repositories (made by hg 6.3 and hg 7) everywhere
// hgfs touches bookmarks: log -r BOOKMARK, hgfs serve's listkeys, every
// kind of clone, unbundle of a bookmarks part and pull, each compared
// with what hg itself gives.
func TestBookmarksInStore(t *testing.T) {
	t.Parallel()
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			dir := t.TempDir()
			src := storeBookmarksFixture(t, hg, dir)
			for _, sym := range []string{"main", "feature", "with space"} {
				want := string(hg.Run(t, src, "log", "-r", sym))
				got, stderr, code := hgfsIn(src, "log", "-r", sym)
				if code != 0 || got != want {
					t.Errorf("log -r %q: exit %d %s\n%s", sym, code, stderr, testenv.Diff("hg", want, "hgfs", got))
				}
			}
			want := bookmarksState(t, hg, src)

			// hg clone --stream from hgfs serve: the bookmarks come from
			// the getbundle reply (v2) or listkeys (v1).
			url, _, _ := startServeBinary(t, src)
			srcMarks := string(hg.Run(t, src, "bookmarks", "-T", "{bookmark} {node}\n"))
			for _, args := range [][]string{nil, {"--config", "devel.legacy.exchange=bundle1"}} {
				dest := filepath.Join(t.TempDir(), "clone")
				hg.Run(t, "", append(append([]string{"clone", "-U", "--stream"}, args...), url, dest)...)
				if got := string(hg.Run(t, dest, "bookmarks", "-T", "{bookmark} {node}\n")); got != srcMarks {
					t.Errorf("hg clone --stream %v from hgfs serve: bookmarks\n%s", args, testenv.Diff("source", srcMarks, "clone", got))
				}
			}

			// hgfs clone of every kind, against hg clone of the same.
			served := hg.Serve(t, src)
			servedV1 := hg.Serve(t, src, "--config", "server.bundle2.stream=false")
			bundle := filepath.Join(dir, "all.hg")
			hg.Run(t, src, "bundle", "-q", "-a", bundle)
			for _, tc := range []struct {
				name   string
				source string
				args   []string
			}{
				{"stream", served, []string{"--stream"}},
				{"stream-v1", servedV1, []string{"--stream"}},
				{"changegroup", served, nil},
				{"local", src, nil},
				{"bundle", bundle, nil},
			} {
				hgDest := filepath.Join(dir, tc.name+"-hg")
				hgfsDest := filepath.Join(dir, tc.name+"-hgfs")
				hg.Run(t, dir, append(append([]string{"clone", "-q", "-U"}, tc.args...), tc.source, hgDest)...)
				if out, stderr, code := hgfsClone(t, dir, append(append([]string{"-q", "-U"}, tc.args...), tc.source, hgfsDest)...); code != 0 {
					t.Fatalf("hgfs clone %s: exit %d\n%s%s", tc.name, code, out, stderr)
				}
				if w, g := bookmarksState(t, hg, hgDest), bookmarksState(t, hg, hgfsDest); w != g {
					t.Errorf("clone %s:\n%s", tc.name, testenv.Diff("hg", w, "hgfs", g))
				}
			}

			// Unbundle of a bundle with a bookmarks part, into
			// repositories that have bookmarks of their own in the store.
			bmBundle := filepath.Join(dir, "bookmarks.hg")
			writeBookmarksBundle(t, src, bmBundle)
			for _, side := range []string{"hg", "hgfs"} {
				r := filepath.Join(dir, "unbundle-"+side)
				hg.Run(t, dir, append([]string{"init"}, append(bookmarksInStore, r)...)...)
				hg.Run(t, r, "unbundle", "-q", bundle)
				hg.Run(t, r, "bookmark", "-r", "0", "local")
				hg.Run(t, r, "bookmark", "-r", "1", "feature")
				if side == "hg" {
					hg.Run(t, r, "unbundle", bmBundle)
				} else if out, stderr, code := hgfsIn(r, "unbundle", bmBundle); code != 0 {
					t.Fatalf("hgfs unbundle: exit %d\n%s%s", code, out, stderr)
				}
			}
			if w, g := bookmarksState(t, hg, filepath.Join(dir, "unbundle-hg")), bookmarksState(t, hg, filepath.Join(dir, "unbundle-hgfs")); w != g {
				t.Errorf("unbundle:\n%s", testenv.Diff("hg", w, "hgfs", g))
			}

			// Pull into a repository with bookmarks in its store.
			for _, side := range []string{"hg", "hgfs"} {
				r := filepath.Join(dir, "pull-"+side)
				hg.Run(t, dir, append([]string{"clone", "-q", "-U", "-r", "0"}, append(bookmarksInStore, src, r)...)...)
				hg.Run(t, r, "bookmark", "-r", "0", "mine")
				if side == "hg" {
					hg.Run(t, r, "pull", "-q", served)
				} else if out, stderr, code := hgfsIn(r, "pull", "-q", served); code != 0 {
					t.Fatalf("hgfs pull: exit %d\n%s%s", code, out, stderr)
				}
			}
			if w, g := bookmarksState(t, hg, filepath.Join(dir, "pull-hg")), bookmarksState(t, hg, filepath.Join(dir, "pull-hgfs")); w != g {
				t.Errorf("pull:\n%s", testenv.Diff("hg", w, "hgfs", g))
			}
			if want != bookmarksState(t, hg, src) {
				t.Error("the source changed")
			}
		})
	}
}

// writeBookmarksBundle writes an HG20 bundle of src with a bookmarks part
// (what hg's bundle command never writes, but a server's reply carries):
// main, feature moved to the tip, and a new bookmark.
func writeBookmarksBundle(t *testing.T, src, file string) {
	t.Helper()
	r, err := repo.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tip := [20]byte(r.Node(2))
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := changegroup.NewBundleWriter(f, changegroup.BundleOptions{
		Bookmarks: map[string][20]byte{"main": [20]byte(r.Node(1)), "feature": tip, "from-bundle": tip},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := changegroup.Generate(t.Context(), r, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
