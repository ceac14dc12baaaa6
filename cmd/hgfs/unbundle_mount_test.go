//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestUnbundleIntoMount applies bundles to a repository whose .hg lives
// in a mounted hgfs cache (made by hg init in the mount), then remounts
// the cache: hg verify passes and the history equals hg unbundle's into a
// plain repository.
func TestUnbundleIntoMount(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := testenv.Generate(t, testenv.Encodings)
	first := filepath.Join(dir, "first.hg")
	rest := filepath.Join(dir, "rest.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "null", "-r", "0", "-t", "none-v2", first)
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-a", "-t", "zstd-v2", rest)

	plain := filepath.Join(dir, "plain")
	testenv.Hg(t, dir, "init", plain)
	testenv.Hg(t, plain, "unbundle", "-q", first)
	testenv.Hg(t, plain, "unbundle", "-q", rest)

	cache := filepath.Join(dir, "cache")
	mp := testenv.MountCache(t, cache)
	testenv.Hg(t, dir, "init", mp)
	for _, b := range []string{first, rest} {
		if stdout, stderr, code := hgfsIn(mp, "unbundle", b); code != 0 {
			t.Fatalf("hgfs unbundle %s into the mount: exit %d\n%s%s", b, code, stdout, stderr)
		}
	}
	want := repoState(t, plain, true)
	if got := repoState(t, mp, true); got != want {
		t.Errorf("mounted repository differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
	testenv.UnmountCache(t, mp)
	mp2 := testenv.MountCache(t, cache)
	if got := repoState(t, mp2, true); got != want {
		t.Errorf("after remount:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
}
