package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestTuneUnmapIndex: a mount's daemon takes its cache index's pages
// out of its mapping after commits (fsnode.Options.UnmapIndex) by
// default, and keeps them mapped with -unmapindex. Small files are
// written and read back through the mount (their bytes inline in the
// index, which the daemon reads through its mapping), then, after the
// committer's pause, one more is written and committed.
func TestTuneUnmapIndex(t *testing.T) {
	testenv.RequireFUSE(t)
	for _, value := range []string{"", "-unmapindex"} {
		t.Run("tune="+value, func(t *testing.T) {
			dir := t.TempDir()
			cache, mp := filepath.Join(dir, "cache"), filepath.Join(dir, "mnt")
			os.Mkdir(mp, 0o755)
			mountCache := func(args ...string) string {
				t.Helper()
				if _, stderr, code := hgfsTuned(t, value, dir, append([]string{"mount"}, append(args, cache, mp)...)...); code != 0 {
					t.Fatalf("HGFS_TUNE=%s hgfs mount: exit %d\n%s", value, code, stderr)
				}
				info, err := mount.ReadInfo(mp)
				if err != nil {
					t.Fatal(err)
				}
				return strconv.Itoa(info.Pid)
			}
			mountCache("--create")
			want := map[string][]byte{}
			for i := range 3000 {
				name := filepath.Join(mp, fmt.Sprintf("f%04d", i))
				want[name] = bytes.Repeat([]byte{byte(i)}, 1000+i%2000)
				if err := os.WriteFile(name, want[name], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			testenv.UnmountCache(t, mp)
			// A new daemon reads every file from the index.
			pid := mountCache()
			t.Cleanup(func() { testenv.UnmountCache(t, mp) })
			index := filepath.Join(cache, "index.db")
			for name, data := range want {
				if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: %v, or contents differ", name, err)
				}
			}
			time.Sleep(1500 * time.Millisecond)
			before := testenv.MappedRss(t, pid, index)
			fh, err := os.Create(filepath.Join(mp, "last"))
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteString("last")
			// fsync returns once the commit is through, and the committer
			// unmaps before it tells its waiters.
			if err := fh.Sync(); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			after := testenv.MappedRss(t, pid, index)
			t.Logf("index mapped: %d before the last commit, %d after", before, after)
			if value == "" && after > 1<<20 || value != "" && after < 1<<20 {
				t.Errorf("HGFS_TUNE=%q: %d bytes of the index mapped before the last commit, %d after", value, before, after)
			}
		})
	}
}
