//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// diskUsage is the space the files of dir take.
func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, e.Name()), &st); err != nil {
			t.Fatal(err)
		}
		n += st.Blocks * 512
	}
	return n
}

func mountStats(t *testing.T, mp string) fsnode.Stats {
	t.Helper()
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	if info.Stats == nil {
		t.Fatalf("%s: a mount without a cache's figures", mp)
	}
	return *info.Stats
}

// TestMountCompacts: write and delete cycles through a real mount (the
// issue's workload, scaled down: a 32 MiB file written and deleted five
// times, a 2 MiB file rewritten twenty times) leave the cache, once the
// daemon's background compaction has run, within 1.2 times the live data
// plus 64 MiB. hgfs stats shows the live and dead bytes; hgfs cache gc
// refuses the mounted cache and compacts it once unmounted.
func TestMountCompacts(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	mp := testenv.MountCache(t, cache, "--config", "hgfs.compact-idle=200ms", "--config", "hgfs.compact-rate=1073741824")
	big := bytes.Repeat([]byte("0123456789abcdef"), 32<<20/16)
	for i := range 5 {
		p := filepath.Join(mp, fmt.Sprintf("big%d", i))
		if err := os.WriteFile(p, big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	small := make([]byte, 2<<20)
	for i := range 20 {
		for j := range small {
			small[j] = byte(i * j)
		}
		if err := os.WriteFile(filepath.Join(mp, "small"), small, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code := hgfsCmd(t, "stats", mp)
	if code != 0 || !strings.Contains(out, "\nlive data: ") || !strings.Contains(out, "\ndead data: ") || !strings.Contains(out, "\ndata files: ") {
		t.Fatalf("hgfs stats: exit %d\n%s", code, out)
	}
	if out, code := hgfsCmd(t, "cache", "gc", cache); code != 255 || !strings.Contains(out, "in use") {
		t.Errorf("hgfs cache gc of a mounted cache: exit %d\n%s", code, out)
	}
	// No deadline but the test's: the daemon compacts once idle.
	var st fsnode.Stats
	for i := 0; ; i++ {
		st = mountStats(t, mp)
		if st.Compactions > 0 && st.DeadBytes <= 32<<20 {
			break
		}
		if i%100 == 99 {
			t.Logf("waiting for compaction: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	live := int64(len(small))
	size := diskUsage(t, cache)
	t.Logf("after compaction: cache %d bytes on disk for %d live (%d live, %d dead in %d data files; %d runs copied %d, reclaimed %d)",
		size, live, st.LiveBytes, st.DeadBytes, st.DataFiles, st.Compactions, st.CompactedBytes, st.ReclaimedBytes)
	if limit := int64(1.2*float64(live)) + 64<<20; size > limit {
		t.Errorf("cache takes %d bytes for %d live (limit %d)", size, live, limit)
	}
	if got, err := os.ReadFile(filepath.Join(mp, "small")); err != nil || !bytes.Equal(got, small) {
		t.Errorf("small after compaction: %d bytes, %v", len(got), err)
	}
	if out, code := hgfsCmd(t, "unmount", mp); code != 0 {
		t.Fatalf("hgfs unmount: exit %d\n%s", code, out)
	}
	fsckClean(t, cache)
	out, code = hgfsCmd(t, "cache", "gc", cache)
	if code != 0 || !strings.Contains(out, "after: ") {
		t.Fatalf("hgfs cache gc: exit %d\n%s", code, out)
	}
	fsckClean(t, cache)
	if out, code := hgfsCmd(t, "cache", "gc", t.TempDir()); code != 255 || !strings.Contains(out, "not an hgfs cache") {
		t.Errorf("hgfs cache gc of a plain directory: exit %d\n%s", code, out)
	}
}
