package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/internal/fuseuring"
	"github.com/hgfs/hgfs/testenv"
)

// TestDaemonURing: the mount daemon serves its requests over io_uring
// where the kernel offers it, and over /dev/fuse alone with
// HGFS_TUNE=-fuseuring; files written and read back through hg's own
// commands, the same either way, and hgfs stats says which it was.
func TestDaemonURing(t *testing.T) {
	testenv.RequireFUSE(t)
	testenv.HgPath(t)
	if !fuseuring.Available() {
		testenv.Missing(t, "FUSE over io_uring ("+fuseuring.ParamPath+" set to Y, Linux 6.14+)")
	}
	for _, tune := range []string{"", "-fuseuring"} {
		t.Run("tune="+tune, func(t *testing.T) {
			t.Setenv("HGFS_TUNE", tune)
			cache := filepath.Join(t.TempDir(), "cache")
			mp := testenv.MountCache(t, cache)
			testenv.Hg(t, mp, "init", "r")
			repo := filepath.Join(mp, "r")
			for i := range 50 {
				if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%02d", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			testenv.Hg(t, repo, "commit", "-A", "-q", "-m", "files", "-u", "t")
			if out := string(testenv.Hg(t, repo, "status")); out != "" {
				t.Errorf("hg status after the commit: %q", out)
			}
			if out := string(testenv.Hg(t, repo, "cat", "-r", "0", "f07")); out != "file 7\n" {
				t.Errorf("hg cat: %q", out)
			}
			out, code := hgfsCmd(t, "stats", "-T", "json", mp)
			var info struct {
				URing uint64 `json:"uring_requests"`
			}
			if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil {
				t.Fatalf("stats -T json: %d %v\n%s", code, err, out)
			}
			if tune == "" && info.URing == 0 {
				t.Errorf("no request came over io_uring:\n%s", out)
			}
			if tune != "" && info.URing != 0 {
				t.Errorf("%d requests came over io_uring with HGFS_TUNE=%s", info.URing, tune)
			}
			testenv.UnmountCache(t, mp)
			fsckClean(t, cache)
		})
	}
}
