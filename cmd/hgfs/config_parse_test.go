package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// An hgrc whose lines sit on the edges of hg's line expressions
// (mercurial/config.py) reads as each Mercurial reads it: \v is a space
// to Python's \s, a section name runs to its last ']', an item's name
// ends at the first '=', an indented line continues the item above it
// unless it starts a comment at the very start of the line.
func TestConfigParseLikeHg(t *testing.T) {
	rc := "[foo]\n" +
		"bar =\vbaz\v\n" +
		"\vqux = 1\n" +
		"a==b\n" +
		"key with spaces  =   value  with spaces \t\n" +
		"multi = first\n" +
		"  second\n" +
		"  # not a comment\n" +
		";comment\n" +
		"  after the comment\n" +
		"empty =\n" +
		"gone = 1\n" +
		"%unset  gone trailing\n" +
		"crlf = v\r\n" +
		"[s]x] trailing\n" +
		"k\v= v\n" +
		"[u]v[w]\n" +
		"w = 1\n"
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	hgs[0].Run(t, dir, "init", repo)
	if err := os.WriteFile(filepath.Join(repo, ".hg", "hgrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HGRCPATH", "")
	for _, args := range [][]string{{"config", "foo", "s]x", "u"}, {"config", "foo.multi"}} {
		got, stderr, code := dispatchRun(t, append([]string{"-R", repo}, args...)...)
		if code != 0 {
			t.Fatalf("hgfs %v: %d %s", args, code, stderr)
		}
		for _, hg := range hgs {
			if want := string(hg.Run(t, repo, args...)); got != want {
				t.Errorf("hgfs %v:\n%q\n%s:\n%q", args, got, hg.Name, want)
			}
		}
	}
}
