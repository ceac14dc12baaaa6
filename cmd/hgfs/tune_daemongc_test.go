package main

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/hgfs/hgfs/internal/tune"
)

// TestDaemonHeap: a mount daemon paces its collector at daemonShare of
// the live heap, unless HGFS_TUNE switches daemongc off or GOGC is set
// in the environment.
func TestDaemonHeap(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	live := make([][]byte, 0, 32)
	for range 32 {
		live = append(live, make([]byte, 1<<20)) // half of it is over daemonHeadroom
	}
	for _, c := range []struct {
		tune, gogc string
		paced      bool
	}{{"", "", true}, {"-daemongc", "", false}, {"", "100", false}} {
		settings, err := tune.Parse(c.tune)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOGC", c.gogc)
		stop := daemonHeap(&ui{tune: settings})
		if (stop != nil) != c.paced {
			t.Errorf("HGFS_TUNE=%q GOGC=%q: paced %v, want %v", c.tune, c.gogc, stop != nil, c.paced)
		}
		if stop == nil {
			if g := debug.SetGCPercent(100); g != 100 {
				t.Errorf("HGFS_TUNE=%q GOGC=%q: GOGC %d without a pace", c.tune, c.gogc, g)
			}
			continue
		}
		runtime.GC()
		runtime.GC()
		g := debug.SetGCPercent(-1)
		debug.SetGCPercent(g)
		if g < daemonShare || g > daemonShare+1 {
			t.Errorf("paced with 32 MiB live: GOGC %d, want %d", g, daemonShare)
		}
		stop()
	}
	runtime.KeepAlive(live)
}
