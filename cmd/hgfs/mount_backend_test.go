//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestMountBackendCommand: --backend reaches the adapter choice, and its
// aborts keep their hints, in this process (--foreground) and through the
// daemon's ready pipe (the binary testenv builds has no cgofuse tag).
func TestMountBackendCommand(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	dir := t.TempDir()
	cache, mp := filepath.Join(dir, "cache"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mp, 0o755); err != nil {
		t.Fatal(err)
	}

	_, stderr, code := dispatchRun(t, "mount", "--create", "--foreground", "--backend", "nfs", cache, mp)
	if code != 255 || !strings.Contains(stderr, `abort: unknown mount backend "nfs"`) || !strings.Contains(stderr, "(choose one of: gofuse, cgofuse)") {
		t.Errorf("--backend nfs: %d %q", code, stderr)
	}
	if !mount.CgofuseAvailable {
		_, stderr, code = dispatchRun(t, "mount", "--create", "--foreground", "--backend", "cgofuse", cache, mp)
		if code != 255 || !strings.Contains(stderr, "abort: this hgfs build has no cgofuse backend\n(rebuild with 'go build -tags cgofuse,fuse3'") {
			t.Errorf("--backend cgofuse in a build without it: %d %q", code, stderr)
		}
	}

	// The daemonized child gets --backend and its abort's hint comes back.
	out, code := hgfsCmd(t, "mount", "--create", "--backend", "cgofuse", cache, mp)
	if code != 255 || !strings.Contains(out, "abort: this hgfs build has no cgofuse backend\n(rebuild with 'go build -tags cgofuse,fuse3'") {
		t.Errorf("daemonized --backend cgofuse: %d %q", code, out)
	}
	if testenv.IsMounted(mp) {
		t.Fatalf("%s mounted after a failed mount", mp)
	}

	// A repository's read-only view exists for go-fuse only.
	repo := filepath.Join(dir, "repo")
	testenv.Hg(t, "", "init", repo)
	_, stderr, code = dispatchRun(t, "mount", "--foreground", "--backend", "cgofuse", repo, mp)
	if code != 255 || !strings.Contains(stderr, "abort: mounting a repository needs the gofuse backend") {
		t.Errorf("repository with --backend cgofuse: %d %q", code, stderr)
	}
}
