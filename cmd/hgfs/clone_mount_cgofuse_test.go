//go:build linux && cgofuse

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestCloneMountCgofuse clones from a real hg serve into a cache mounted
// through the cgofuse adapter (libfuse3 here, WinFsp on Windows), in this
// process (--foreground: the binary testenv builds has no cgofuse tag),
// and compares real hg's view of the mount with hg's own stream clone.
func TestCloneMountCgofuse(t *testing.T) {
	testenv.RequireFUSE(t)
	t.Setenv("HGRCPATH", "")
	// libfuse's fuse_main changes the process's working directory to "/";
	// MountCgofuse puts it back, and t.Chdir guards the tests that follow.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	src := filepath.Join(t.TempDir(), "src")
	testenv.Hg(t, "", "init", src)
	for i, name := range []string{"README", "dir/sub/file.c"} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755)
		os.WriteFile(filepath.Join(src, name), bytes.Repeat([]byte(name+"\n"), 10*(i+1)), 0o644)
	}
	testenv.Hg(t, src, "commit", "-qAm", "one")
	url := testenv.Serve(t, src)

	dir := t.TempDir()
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := dispatchRun(t, "clone", "--mount", "--foreground", "--backend", "cgofuse", "--cache", cache, url, mp)
		done <- result{o, e, c}
	}()
	// The clone and the mount take a second or two; a bound turns a
	// clone stuck before mounting into a failure that says so.
	const wait = 2 * time.Minute
	deadline := time.Now().Add(wait)
	for !testenv.IsMounted(mp) {
		if time.Now().After(deadline) {
			// The clone goes on in this process; nothing is mounted.
			t.Fatalf("clone --mount --backend cgofuse: %s not mounted after %v", mp, wait)
		}
		select {
		case r := <-done:
			t.Fatalf("clone --mount --backend cgofuse ended before mounting: %d\n%s%s", r.code, r.stdout, r.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	unmounted := false
	t.Cleanup(func() {
		if !unmounted {
			mount.UnmountPath(mp, true)
			select {
			case <-done:
			case <-time.After(wait):
				t.Errorf("clone --mount --foreground still serving %v after a lazy unmount of %s", wait, mp)
			}
		}
	})

	ref := filepath.Join(dir, "ref")
	testenv.Hg(t, "", "clone", "-q", "--stream", "-U", url, ref)
	testenv.Hg(t, mp, "verify", "-q")
	if got, want := testenv.Hg(t, mp, "log", "--debug"), testenv.Hg(t, ref, "log", "--debug"); !bytes.Equal(got, want) {
		t.Errorf("hg log --debug differs:\nmount:\n%s\nhg's clone:\n%s", got, want)
	}

	// Unmounting from outside ends the foreground clone, successfully.
	for delay := 10 * time.Millisecond; delay < 3*time.Second; delay *= 2 {
		if err = mount.UnmountPath(mp, false); err == nil {
			break
		}
		time.Sleep(delay)
	}
	if err != nil {
		t.Fatal(err)
	}
	unmounted = true
	var r result
	select {
	case r = <-done:
	case <-time.After(wait):
		t.Fatalf("clone --mount --foreground still serving %v after %s was unmounted", wait, mp)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "mounting "+mp) {
		t.Fatalf("clone --mount --backend cgofuse: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep, err := fsnode.Fsck(cache, false); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("fsck after unmount: %v %+v", err, rep)
	}
}
