package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// TestUnbundleWaitsForLock holds the repository lock from a live process
// and compares what hg and hgfs print while waiting and when the wait
// (ui.timeout=1) runs out.
func TestUnbundleWaitsForLock(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	bundle := filepath.Join(dir, "b.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2", bundle)
	holder := exec.Command("sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	lockTarget := store.LockPrefix() + ":" + strconv.Itoa(holder.Process.Pid)

	stderrOf := func(repo string, hgfs bool) string {
		testenv.Hg(t, dir, "init", repo)
		if err := os.Symlink(lockTarget, filepath.Join(repo, ".hg", "store", "lock")); err != nil {
			t.Fatal(err)
		}
		if hgfs {
			_, stderr, code := hgfsIn(repo, "--config", "ui.timeout=1", "unbundle", bundle)
			if code != 255 {
				t.Errorf("hgfs exit %d", code)
			}
			return stderr
		}
		_, stderr, err := testenv.HgResult(t, repo, "--config", "ui.timeout=1", "unbundle", bundle)
		if err == nil {
			t.Errorf("hg unbundle succeeded under a held lock")
		}
		return string(stderr)
	}
	want := stderrOf(filepath.Join(dir, "hg"), false)
	got := stderrOf(filepath.Join(dir, "hgfs"), true)
	want = strings.ReplaceAll(want, filepath.Join(dir, "hg"), "REPO")
	got = strings.ReplaceAll(got, filepath.Join(dir, "hgfs"), "REPO")
	if got != want {
		t.Errorf("stderr differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
}
