//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestMountCompactStress is a long-lived mount's life in small: large
// files written, overwritten in place, truncated and deleted, and hg
// update between distant revisions of real history in a working copy on
// the mount, while the daemon compacts in the background, and is killed
// (SIGKILL) in the middle of a compaction at several points. After each
// kill the cache must fsck clean, hold every byte fsynced before it and
// the working copy must be as hg left it; at the end, once compaction
// has run, the cache must take no more than 1.2x its live data plus 64
// MiB on disk.
//
// HGFS_COMPACT_STRESS_MIB sets how much the churn writes (default 160;
// make stress writes 4096) and HGFS_COMPACT_STRESS_KILLS how often the
// daemon is killed (default 2; make stress 12).
func TestMountCompactStress(t *testing.T) {
	total := int64(envInt(t, "HGFS_COMPACT_STRESS_MIB", 160)) << 20
	kills := envInt(t, "HGFS_COMPACT_STRESS_KILLS", 2)
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	cache := filepath.Join(t.TempDir(), "cache")
	// Quick to start and fast to run, so that kills meet compactions;
	// a small slack so that the churn makes it due often.
	mountArgs := []string{"--config", "hgfs.compact-idle=100ms", "--config", "hgfs.compact-rate=67108864",
		"--config", "hgfs.compact-slack=8388608"}
	mp := testenv.MountCache(t, cache, mountArgs...)

	testenv.Hg(t, mp, "clone", "-q", "-U", src, "wc")
	revs := []string{"200", "tip", "1000", "50", "tip"}
	update := func(i int) {
		testenv.Hg(t, filepath.Join(mp, "wc"), "update", "-q", "-C", revs[i%len(revs)])
	}
	update(0)

	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string][]byte{} // churn/NAME -> contents, each fsynced
	if err := os.Mkdir(filepath.Join(mp, "churn"), 0o755); err != nil {
		t.Fatal(err)
	}
	var written int64
	next := 0
	step := func() {
		name := fmt.Sprintf("f%d", next)
		var names []string
		for n := range model {
			names = append(names, n)
		}
		switch op := rng.IntN(10); {
		case len(model) < 3 || op < 4 && len(model) < 6:
			data := make([]byte, 1<<20+rng.IntN(7<<20))
			fillRandom(rng, data)
			writeSynced(t, mp, name, 0, data, true)
			model[name] = data
			next++
			written += int64(len(data))
		case op < 7:
			n := names[rng.IntN(len(names))]
			data := model[n]
			off := rng.IntN(len(data))
			patch := make([]byte, min(len(data)-off, 1+rng.IntN(2<<20)))
			fillRandom(rng, patch)
			writeSynced(t, mp, n, int64(off), patch, false)
			copy(data[off:], patch)
			written += int64(len(patch))
		case op < 8:
			n := names[rng.IntN(len(names))]
			size := rng.IntN(len(model[n]) + 1)
			p := filepath.Join(mp, "churn", n)
			if err := os.Truncate(p, int64(size)); err != nil {
				t.Fatal(err)
			}
			syncPath(t, p)
			model[n] = model[n][:size]
		default:
			n := names[rng.IntN(len(names))]
			if err := os.Remove(filepath.Join(mp, "churn", n)); err != nil {
				t.Fatal(err)
			}
			syncPath(t, filepath.Join(mp, "churn"))
			delete(model, n)
		}
	}
	check := func(when string) {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(mp, "churn"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != len(model) {
			t.Errorf("%s: %d files in churn/, the model has %d", when, len(ents), len(model))
		}
		for n, want := range model {
			got, err := os.ReadFile(filepath.Join(mp, "churn", n))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: churn/%s: %d bytes (want %d), equal %v, %v", when, n, len(got), len(want), bytes.Equal(got, want), err)
			}
		}
		wc := filepath.Join(mp, "wc")
		if out := testenv.Hg(t, wc, "status", "-mardu"); len(out) != 0 {
			t.Errorf("%s: hg status in the working copy:\n%s", when, out)
		}
		testenv.Hg(t, wc, "verify", "-q")
	}

	killed := 0
	for round := 0; written < total; round++ {
		step()
		if round%25 == 24 {
			update(round / 25)
		}
		// Kill k of kills at k/(kills+1) of the way.
		if killed < kills && written >= total*int64(killed+1)/int64(kills+1) {
			killed++
			mp = killDuringCompaction(t, cache, mp, mountArgs)
			check(fmt.Sprintf("after a kill at %d MiB written", written>>20))
		}
	}
	check("after the churn")

	// Once idle, compaction brings the cache within bounds.
	var live int64
	err := filepath.WalkDir(mp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == filepath.Join(mp, ".hgfs") {
			if err == nil {
				return fs.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			live += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(1.2*float64(live)) + 64<<20
	deadline := time.Now().Add(2 * time.Minute)
	size := diskUsage(t, cache)
	for size > limit && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		size = diskUsage(t, cache)
	}
	st := mountStats(t, mp)
	t.Logf("%d MiB written: cache %d bytes on disk for %d live (%d live, %d dead in data files; %d runs copied %d, reclaimed %d)",
		written>>20, size, live, st.LiveBytes, st.DeadBytes, st.Compactions, st.CompactedBytes, st.ReclaimedBytes)
	if size > limit {
		t.Errorf("cache takes %d bytes for %d live (limit %d)", size, live, limit)
	}
	if out, code := hgfsCmd(t, "unmount", mp); code != 0 {
		t.Fatalf("hgfs unmount: exit %d\n%s", code, out)
	}
	fsckClean(t, cache)
}

// killDuringCompaction makes a compaction due, waits for the mount's
// compactor to make progress (up to 10 s), kills the daemon with SIGKILL, unmounts what is left,
// checks the cache with fsck and mounts it again.
func killDuringCompaction(t *testing.T, cache, mp string, mountArgs []string) string {
	t.Helper()
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	// Garbage enough to make a compaction due: 24 MiB written and
	// deleted, the current data file's then mostly dead.
	garbage := make([]byte, 24<<20)
	fillRandom(rand.New(rand.NewPCG(3, 4)), garbage)
	p := filepath.Join(mp, "garbage")
	if err := os.WriteFile(p, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	syncPath(t, p)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	syncPath(t, mp)
	before := mountStats(t, mp)
	moving := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		st := mountStats(t, mp)
		if st.CompactedBytes != before.CompactedBytes || st.ReclaimedBytes != before.ReclaimedBytes || st.Compactions != before.Compactions {
			moving = true
			break
		}
	}
	if err := syscall.Kill(info.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for !mount.ProcessExited(info.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if out, err := exec.Command("fusermount3", "-u", "-z", mp).CombinedOutput(); err != nil {
		t.Fatalf("fusermount3 -u -z: %v\n%s", err, out)
	}
	t.Logf("killed the daemon %s compaction", map[bool]string{true: "during", false: "without waiting for"}[moving])
	fsckClean(t, cache)
	return testenv.MountCache(t, cache, mountArgs...)
}

// writeSynced writes data at off of churn/name (created when create)
// and fsyncs it, and the directory for a new file.
func writeSynced(t *testing.T, mp, name string, off int64, data []byte, create bool) {
	t.Helper()
	flags := os.O_WRONLY
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	p := filepath.Join(mp, "churn", name)
	f, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, off); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if create {
		syncPath(t, filepath.Dir(p))
	}
}

func syncPath(t *testing.T, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// fillRandom fills p with incompressible bytes.
func fillRandom(rng *rand.Rand, p []byte) {
	for i := 0; i+8 <= len(p); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(p) &^ 7; i < len(p); i++ {
		p[i] = byte(rng.Uint32())
	}
}

// envInt reads a positive integer setting of a test from the environment.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}
