//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestMountTuneDaemon mounts a cache with the real binary with the
// default tricks, with schedbatch (off by default) turned on, and with
// the mount daemon's ones off (HGFS_TUNE=-schedbatch,-procs,-yield,
// -uring): all serve files alike; the daemon's threads are in
// SCHED_BATCH with the trick and not without it.
func TestMountTuneDaemon(t *testing.T) {
	for _, value := range []string{"", "+schedbatch", "-schedbatch,-procs,-yield,-uring"} {
		t.Run("HGFS_TUNE="+value, func(t *testing.T) {
			settings, err := tune.Parse(value)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(tune.EnvVar, value) // the mount runs the binary with this process's environment
			cache := filepath.Join(t.TempDir(), "cache")
			mp := testenv.MountCache(t, cache)
			if err := os.MkdirAll(filepath.Join(mp, "d", "e"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				name := filepath.Join(mp, "d", "e", fmt.Sprintf("f%02d", i))
				if err := os.WriteFile(name, []byte(name), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 50 {
				name := filepath.Join(mp, "d", "e", fmt.Sprintf("f%02d", i))
				if b, err := os.ReadFile(name); err != nil || string(b) != name {
					t.Fatalf("%s: %q, %v", name, b, err)
				}
			}
			if ents, err := os.ReadDir(filepath.Join(mp, "d", "e")); err != nil || len(ents) != 50 {
				t.Fatalf("listing: %d entries, %v", len(ents), err)
			}
			info, err := mount.ReadInfo(mp)
			if err != nil {
				t.Fatal(err)
			}
			batch, all := testenv.BatchThreads(t, info.Pid)
			switch {
			case settings.Enabled(tune.SchedBatch) && batch != all:
				t.Errorf("schedbatch on: %d of the daemon's %d threads in SCHED_BATCH", batch, all)
			case !settings.Enabled(tune.SchedBatch) && batch != 0:
				t.Errorf("schedbatch off: %d of the daemon's %d threads in SCHED_BATCH", batch, all)
			}
		})
	}
}
