package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestChangegroupOverSSH clones without --stream and pulls over ssh, with
// hg 6.3 and hg 7 as the remote, from a repository with bookmarks and
// from one without. Without bookmarks the getbundle reply has no
// bookmarks part and the bookmarks are asked for with listkeys on the
// same connection, which the reply kept claimed while it was open ("ssh
// peer is busy with a stream response"). Output and result must be hg's
// doing the same.
func TestChangegroupOverSSH(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	books := cloneFixture(t, dir)
	noBooks := filepath.Join(dir, "nobooks")
	testenv.Hg(t, dir, "clone", "-q", "-U", books, noBooks)
	testenv.Hg(t, noBooks, "bookmark", "-d", "feature", "main")
	if err := os.WriteFile(filepath.Join(noBooks, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ssh := fakeSSHScript(t, dir, "")

	for _, remote := range hgs {
		for _, src := range []struct{ name, path string }{{"bookmarks", books}, {"no-bookmarks", noBooks}} {
			url := "ssh://user@host/" + src.path
			t.Run(remote.Name+"/"+src.name+"/clone", func(t *testing.T) {
				hgDest := filepath.Join(dir, remote.Name+"-"+src.name+"-clone-hg")
				hgfsDest := filepath.Join(dir, remote.Name+"-"+src.name+"-clone-hgfs")
				want := string(testenv.Hg(t, dir, "clone", "-U", "--ssh", ssh, "--remotecmd", remote.Path, url, hgDest))
				got, stderr, code := hgfsClone(t, dir, "-U", "-e", ssh, "--remotecmd", remote.Path, url, hgfsDest)
				if code != 0 {
					t.Fatalf("hgfs clone: exit %d\n%s%s", code, got, stderr)
				}
				if got != want {
					t.Errorf("output differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
				}
				if w, g := repoState(t, hgDest, false), repoState(t, hgfsDest, true); w != g {
					t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
				}
			})
			t.Run(remote.Name+"/"+src.name+"/pull", func(t *testing.T) {
				hgRepo := filepath.Join(dir, remote.Name+"-"+src.name+"-pull-hg")
				hgfsRepo := filepath.Join(dir, remote.Name+"-"+src.name+"-pull-hgfs")
				for _, r := range []string{hgRepo, hgfsRepo} {
					testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src.path, r)
				}
				want := string(testenv.Hg(t, hgRepo, "pull", "--ssh", ssh, "--remotecmd", remote.Path, url))
				got, stderr, code := hgfsIn(hgfsRepo, "pull", "-e", ssh, "--remotecmd", remote.Path, url)
				if code != 0 {
					t.Fatalf("hgfs pull: exit %d\n%s%s", code, got, stderr)
				}
				if got != want {
					t.Errorf("output differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
				}
				if w, g := repoState(t, hgRepo, false), repoState(t, hgfsRepo, true); w != g {
					t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
				}
			})
		}
	}
}
