//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestUnbundleIntoHardlinkedClone unbundles into a local hg clone, whose
// revlogs are hard links to its source's, changesets (and an
// obsolescence marker) that touch those revlogs: the source must be
// left byte for byte as it was, as hg's vfs leaves it (it copies a
// linked file before writing to it), and the clone must hold what hg's
// unbundle into a clone of its own does.
func TestUnbundleIntoHardlinkedClone(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	evolve := []string{"--config", "experimental.evolution=all"}
	// More history, made in a copy: a bundle of it against src.
	more := filepath.Join(dir, "more")
	testenv.Hg(t, dir, "clone", "-q", src, more)
	os.WriteFile(filepath.Join(more, "README"), []byte("hello\nagain\n"), 0o644)
	testenv.Hg(t, more, "commit", "-q", "-m", "third", "-u", "t")
	testenv.Hg(t, more, append(evolve, "debugobsolete", strings.Repeat("ab", 20))...)
	bundle := filepath.Join(dir, "more.hg")
	testenv.Hg(t, more, "bundle", "-q", "-t", "zstd-v2;obsolescence=yes", "--base", "1", "-r", "tip", bundle)

	srcBefore := storeSnapshot(t, src)
	hgRepo, hgfsRepo := filepath.Join(dir, "hg"), filepath.Join(dir, "hgfs")
	for _, r := range []string{hgRepo, hgfsRepo} {
		testenv.Hg(t, dir, "clone", "-q", "-U", src, r)
	}
	if n := nlink(t, filepath.Join(hgfsRepo, ".hg", "store", "00changelog.i")); n < 2 {
		t.Fatalf("hg clone made no hard link (nlink %d): nothing to test", n)
	}
	testenv.Hg(t, hgRepo, append(evolve, "unbundle", "-q", bundle)...)
	if out, errOut, code := hgfsIn(hgfsRepo, append(evolve, "unbundle", "-q", bundle)...); code != 0 {
		t.Fatalf("hgfs unbundle: exit %d\n%s%s", code, out, errOut)
	}
	sameSnapshot(t, "the clone's source", srcBefore, storeSnapshot(t, src))
	if w, g := repoState(t, hgRepo, false), repoState(t, hgfsRepo, true); w != g {
		t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
	if w, g := testenv.Hg(t, hgRepo, append(evolve, "debugobsolete")...), testenv.Hg(t, hgfsRepo, append(evolve, "debugobsolete")...); string(w) != string(g) {
		t.Errorf("markers differ:\n%s", testenv.Diff("hg", string(w), "hgfs", string(g)))
	}
}

func nlink(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Nlink)
}
