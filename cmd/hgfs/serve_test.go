package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

func TestServeClone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	logFile := filepath.Join(dir, "access.log")
	url, cmd, result := startServeBinary(t, src, "--accesslog", logFile)
	want := repoState(t, src, false)
	for _, mode := range [][]string{nil, {"--config", "devel.legacy.exchange=bundle1"}} {
		dest := filepath.Join(t.TempDir(), "clone")
		testenv.Hg(t, "", append(append([]string{"clone", "-U", "--stream"}, mode...), url, dest)...)
		got := repoState(t, dest, true)
		if mode == nil && got != want {
			t.Errorf("clone differs:\n%s", testenv.Diff("source", want, "clone", got))
		}
		books := testenv.Hg(t, dest, "bookmarks")
		if !bytes.Contains(books, []byte("feature")) || !bytes.Contains(books, []byte("main")) {
			t.Errorf("bookmarks:\n%s", books)
		}
		if out := testenv.Hg(t, dest, "pull", url); !bytes.Contains(out, []byte("no changes found")) {
			t.Errorf("pull:\n%s", out)
		}
	}
	// The .hg/hgrc of the source (publish = false) is honoured: the
	// draft changeset stayed draft in the v2 clone (checked by repoState's
	// log --debug). SIGTERM stops the server cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("no exit 10s after SIGTERM")
	}
	log, _ := os.ReadFile(logFile)
	if !regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[[^]]+\] "GET /\?cmd=getbundle HTTP/1\.1" 200 -`).Match(log) {
		t.Errorf("access log:\n%s", log)
	}
}

func TestServeErrors(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := hgfsIn(dir, "serve", "-R", filepath.Join(dir, "nope"))
	if code != 255 || !strings.Contains(stderr, "abort: repository") {
		t.Errorf("missing repository: %d %q", code, stderr)
	}
	cache := filepath.Join(dir, "cache")
	os.MkdirAll(cache, 0o755)
	os.WriteFile(filepath.Join(cache, "index.db"), nil, 0o644)
	_, stderr, code = hgfsIn(dir, "serve", "-R", cache)
	if code != 255 || !strings.Contains(stderr, "is an hgfs cache") || !strings.Contains(stderr, "(mount it") {
		t.Errorf("cache: %d %q", code, stderr)
	}
	src := cloneFixture(t, dir)
	_, stderr, code = hgfsIn(dir, "serve", "-R", src, "-p", "70000")
	if code != 255 || !strings.Contains(stderr, "invalid port") {
		t.Errorf("bad port: %d %q", code, stderr)
	}
}

func TestBundleCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	// Stream bundles carry no bookmarks (hg's neither).
	noBookmarks := regexp.MustCompile(`(?m)^bookmark: .*\n`)
	want := noBookmarks.ReplaceAllString(repoState(t, src, false), "")
	for _, typ := range []string{"packed1", "none-packed1", "v2", "none-v2;stream=v2"} {
		file := filepath.Join(dir, "b-"+strings.NewReplacer(";", "_", "=", "_").Replace(typ)+".hg")
		if _, stderr, code := hgfsIn(dir, "bundle", "-R", src, "-t", typ, file); code != 0 {
			t.Fatalf("hgfs bundle -t %s: %d %s", typ, code, stderr)
		}
		dest := filepath.Join(dir, "dest-"+filepath.Base(file))
		testenv.Hg(t, "", "init", dest)
		if strings.Contains(typ, "packed1") {
			testenv.Hg(t, dest, "debugapplystreamclonebundle", file)
		} else {
			testenv.Hg(t, dest, "unbundle", file)
		}
		got := noBookmarks.ReplaceAllString(repoState(t, dest, true), "")
		if strings.Contains(typ, "v2") && got != want {
			t.Errorf("%s: applied bundle differs:\n%s", typ, testenv.Diff("source", want, "bundle", got))
		}
		if strings.Contains(typ, "v2") {
			// Byte-identical to hg's own stream bundle.
			ref := filepath.Join(dir, "ref.hg")
			testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", ref)
			a, _ := os.ReadFile(ref)
			b, _ := os.ReadFile(file)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: differs from hg bundle's (%d vs %d bytes)", typ, len(b), len(a))
			}
		}
	}
	_, stderr, code := hgfsIn(dir, "bundle", "-R", src, "-t", "gzip-v2", filepath.Join(dir, "x.hg"))
	if code != 255 || !strings.Contains(stderr, "unsupported bundle type: gzip-v2") {
		t.Errorf("bad type: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.hg")); !os.IsNotExist(err) {
		t.Errorf("refused bundle left a file: %v", err)
	}
}
