package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/testenv"
)

// TestServeWebConf serves three repositories of a --web-conf file (one
// by name, two found by a glob, one of them nested) and a path that is
// no repository: real hg stream-clones each through its /NAME, a real
// browser shows the listing and a repository's page, an unknown name is
// a 404.
func TestServeWebConf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := cloneFixture(t, dir)
	testenv.Hg(t, one, "bookmark", "-r", "0", "<script>alert(1)</script>")
	for _, r := range []string{"repos/x", "repos/sub/y"} {
		root := filepath.Join(dir, filepath.FromSlash(r))
		os.MkdirAll(root, 0o755)
		testenv.Hg(t, root, "init")
		os.WriteFile(filepath.Join(root, "f"), []byte(r+"\n"), 0o644)
		testenv.Hg(t, root, "commit", "-qAm", "in "+r)
		testenv.Hg(t, root, "phase", "--public", "-r", ".") // as a clone of a publishing repository has it
	}
	// z lets only alice read it: hgfs serve, which knows no users, refuses it.
	z := filepath.Join(dir, "repos", "z")
	testenv.Hg(t, dir, "init", z)
	os.WriteFile(filepath.Join(z, ".hg", "hgrc"), []byte("[web]\nallow_read = alice\n"), 0o644)
	// y is hidden from the listing, and describes itself.
	os.WriteFile(filepath.Join(dir, "repos", "sub", "y", ".hg", "hgrc"), []byte("[web]\nhidden = true\ndescription = why\n"), 0o644)
	conf := filepath.Join(dir, "web.conf")
	os.WriteFile(conf, []byte("[paths]\n/one = "+one+"\ngrp = "+filepath.Join(dir, "repos", "*")+
		"\nbad = "+filepath.Join(dir, "nope")+"\n[web]\ndescription = from the web-conf\n"), 0o644)

	// -R names a repository hgfs serve ignores with --web-conf, as hg.
	u, _, _ := startServeBinary(t, one, "--web-conf", conf)
	repos := map[string]string{"one": one, "grp/x": filepath.Join(dir, "repos", "x"), "grp/sub/y": filepath.Join(dir, "repos", "sub", "y")}
	for name, root := range repos {
		dest := filepath.Join(t.TempDir(), "clone")
		out := string(testenv.Hg(t, "", "clone", "-U", "--stream", u+name, dest))
		if !strings.Contains(out, "streaming all changes") {
			t.Errorf("hg clone --stream %s:\n%s", name, out)
		}
		if got, want := repoState(t, dest, true), repoState(t, root, false); got != want {
			t.Errorf("clone of %s differs:\n%s", name, testenv.Diff("source", want, "clone", got))
		}
	}
	for path, want := range map[string]int{"": 200, "one": 200, "grp/": 200, "grp/sub/y/": 200, "bad": 404, "nope/": 404, "grp/w": 404, "grp/z": 401} {
		resp, err := http.Get(u + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || !strings.HasPrefix(string(body), "<!DOCTYPE html>") {
			t.Errorf("GET /%s: %s, want %d\n%s", path, resp.Status, want, body)
		}
	}

	listing := testenv.BrowserDOM(t, u)
	for _, w := range []string{`<a href="/one/">one</a>`, `<a href="/grp/x/">grp/x</a>`, "from the web-conf"} {
		if !strings.Contains(listing, w) {
			t.Errorf("listing lacks %s:\n%s", w, listing)
		}
	}
	if strings.Contains(listing, "grp/sub/y") || strings.Contains(listing, "bad") || strings.Contains(listing, "grp/z") {
		t.Errorf("listing shows a hidden or missing repository:\n%s", listing)
	}
	page := testenv.BrowserDOM(t, u+"one/")
	tip := string(testenv.Hg(t, one, "log", "-r", "tip", "-T", "{rev}:{node|short}"))
	for _, w := range []string{
		`<code id="hg-clone">hg clone ` + u + `one</code>`,
		`<code id="hgfs-clone">hgfs clone --mount ` + u + `one one</code>`,
		`>` + tip + `</span>`,
		`<dd id="tip-summary">draft work</dd>`,
		`<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>`,
		`<td>feature</td>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s:\n%s", w, page)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("the page's DOM has a script:\n%s", page)
	}
	if y := testenv.BrowserDOM(t, u+"grp/sub/y"); !strings.Contains(y, `<p class="desc">why</p>`) {
		t.Errorf("y's page:\n%s", y)
	}
}

func TestServeWebConfErrors(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := hgfsIn(dir, "serve", "--web-conf", "missing.conf")
	if code != 255 || !strings.Contains(stderr, "abort: config file "+filepath.Join(dir, "missing.conf")+" not found!") {
		t.Errorf("missing file: %d %q", code, stderr)
	}
}

// TestWebConfPaths: the repositories a web-conf's [paths] names, against
// hgwebdir's own findrepos on the same tree: plain names, "*" (not into
// repositories, but .hg/patches), "**" (into them), a symbolic link
// looping back, names with leading and trailing slashes.
func TestWebConfPaths(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"top/r1/.hg", "top/r1/sub/.hg", "top/r1/sub/deeper/.hg", "top/r2/.hg/patches/.hg",
		"top/plain/r3/.hg", "top/empty", "other/.hg"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "top"), filepath.Join(dir, "top", "plain", "loop")); err != nil {
		t.Fatal(err)
	}
	entries := [][2]string{{"/one/", "other"}, {"all", "top/*"}, {"/", "top/**"}, {"deep/x", "top/r1/**"}}
	var conf strings.Builder
	conf.WriteString("[paths]\n")
	for _, e := range entries {
		conf.WriteString(e[0] + " = " + filepath.Join(dir, filepath.FromSlash(e[1])) + "\n")
	}
	paths := config.New()
	if err := paths.Parse("web.conf", []byte(conf.String())); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, r := range webConfPaths(&cmdContext{cwd: dir}, paths) {
		fmt.Fprintf(&got, "%s %s\n", r.name, r.root)
	}
	const script = `
import sys
from mercurial.hgweb.hgwebdir_mod import findrepos
paths = [(a.encode(), b.encode()) for a, b in zip(sys.argv[1::2], sys.argv[2::2])]
for name, root in findrepos(paths):
    print(name.decode(), root.decode())
`
	var args []string
	for _, e := range entries {
		args = append(args, e[0], filepath.Join(dir, filepath.FromSlash(e[1])))
	}
	want, err := testenv.HgPython(t, script, args...).Output()
	if err != nil {
		t.Fatalf("findrepos: %v", err)
	}
	if got.String() != string(want) {
		t.Errorf("repositories differ:\n%s", testenv.Diff("hgwebdir", string(want), "hgfs", got.String()))
	}
}
