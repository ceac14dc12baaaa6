package fsnode

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// scanLive counts each data file's live bytes from the committed extents
// (a full scan of the index, what the accounting avoids).
func scanLive(t *testing.T, f *FS) map[uint32]int64 {
	t.Helper()
	live := map[uint32]int64{}
	err := f.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExtents).ForEach(func(k, v []byte) error {
			exts, err := decodeExtents(v)
			if err != nil {
				return err
			}
			for _, e := range exts {
				live[e.File] += e.Len
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// checkAccounting compares the live counters with a full scan; every
// change must be committed (Sync) first.
func checkAccounting(t *testing.T, f *FS, when string) {
	t.Helper()
	want := scanLive(t, f)
	lengths := f.data.lengths()
	var total, sumLive int64
	for id, n := range lengths {
		df := f.data.get(id)
		if got := df.live.Load(); got != want[id] {
			t.Errorf("%s: data file %d: %d live bytes counted, the index refers to %d", when, id, got, want[id])
		}
		total += n
		sumLive += want[id]
		delete(want, id)
	}
	for id, n := range want {
		t.Errorf("%s: the index refers to %d bytes of data file %d, which is not open", when, n, id)
	}
	st := f.Stats()
	if st.LiveBytes != sumLive || st.LiveBytes+st.DeadBytes != total {
		t.Errorf("%s: stats say %d live + %d dead, want %d live of %d", when, st.LiveBytes, st.DeadBytes, sumLive, total)
	}
}

// TestSpaceAccounting runs random operations (writes, overwrites,
// truncations, deletes, orphans, sink ingests, compactions) and checks
// the in-memory live counts against a full scan after each step, and
// after reopening.
func TestSpaceAccounting(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{InlineMax: 64, DataFileMax: 64 << 10, CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 1))
	var orphans []Handle
	for step := range 400 {
		name := fmt.Sprintf("f%d", rng.IntN(12))
		switch op := rng.IntN(10); {
		case op < 4: // write somewhere, maybe past the end
			a, h, err := f.Create(bg, RootIno, name, 0o644, syscall.O_RDWR|syscall.O_CREAT)
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat([]byte{byte(step)}, 1+rng.IntN(20000))
			if _, err := f.Write(bg, h, int64(rng.IntN(30000)), data); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) == 0 { // appends
				for range 5 {
					if _, err := f.Write(bg, h, int64(f.attrOf(t, a.Ino).Size), data[:1+rng.IntN(len(data))]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if rng.IntN(8) == 0 { // an orphan, released later
				f.Unlink(bg, RootIno, name)
				orphans = append(orphans, h)
			} else {
				f.Release(h)
			}
			f.Forget(a.Ino, 1)
		case op < 6: // truncate, sometimes back inline; or fallocate
			if a, err := f.LookupPath(bg, name); err == nil && rng.IntN(4) == 0 {
				modes := []uint32{0, FallocKeepSize, FallocPunchHole | FallocKeepSize, FallocZeroRange, FallocZeroRange | FallocKeepSize}
				if err := f.Fallocate(bg, a.Ino, int64(rng.IntN(30000)), int64(1+rng.IntN(20000)), modes[rng.IntN(len(modes))]); err != nil {
					t.Fatal(err)
				}
			} else if err == nil {
				sz := uint64(rng.IntN(40000))
				if rng.IntN(3) == 0 {
					sz = uint64(rng.IntN(64))
				}
				must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Size: &sz}))
			}
		case op < 7:
			f.Unlink(bg, RootIno, name)
		case op < 8: // a sink file, replacing one
			s := f.NewSink(bg)
			data := bytes.Repeat([]byte{'s'}, 100+rng.IntN(30000))
			w := must[io.WriteCloser](t)(s.Create(name, int64(len(data))))
			w.Write(data)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
		case op < 9:
			if len(orphans) > 0 {
				f.Release(orphans[0])
				orphans = orphans[1:]
			}
		default:
			var err error
			if rng.IntN(2) == 0 {
				_, err = f.Compact(bg)
			} else {
				_, err = f.CompactAll(bg)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
		checkAccounting(t, f, fmt.Sprintf("step %d", step))
		if t.Failed() {
			return
		}
	}
	before := f.Stats()
	for _, h := range orphans {
		f.Release(h)
	}
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	checkAccounting(t, f, "reopened")
	if after := f.Stats(); after.LiveBytes > before.LiveBytes {
		t.Errorf("reopened: %d live bytes, had %d", after.LiveBytes, before.LiveBytes)
	}
}

func (f *FS) attrOf(t *testing.T, ino Ino) Attr {
	return must[Attr](t)(f.GetAttr(bg, ino))
}

// cacheSize is the length of the cache's data files.
func cacheSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name(), "data-") {
			n += fi.Size()
		}
	}
	return n
}

// waitFor polls cond until it holds. No deadline of its own: the test's
// timeout is the bound, and a log says what it waits for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i%1000 == 999 {
			t.Logf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAutoCompact: the workload, scaled down: a large file written
// and deleted five times (all in the current data file) and a small one
// rewritten twenty times. The background compactor must give the space
// back by itself, the current data file included.
func TestAutoCompact(t *testing.T) {
	const slack = 256 << 10
	opt := Options{AutoCompact: true, CompactIdle: 20 * time.Millisecond, CompactSlack: slack,
		CompactRate: 1 << 30, InlineMax: 64}
	f := newTestFS(t, opt)
	big := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	for i := range 5 {
		name := fmt.Sprintf("big%d", i)
		if err := f.WriteFile(bg, name, big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlink(bg, RootIno, name); err != nil {
			t.Fatal(err)
		}
	}
	small := make([]byte, 200<<10)
	for i := range 20 {
		for j := range small {
			small[j] = byte(i + j)
		}
		if err := f.WriteFile(bg, "small", small, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	t.Logf("before: %d live, %d dead bytes in %d data files, %d on disk", st.LiveBytes, st.DeadBytes, st.DataFiles, cacheSize(t, f.dir))
	// The compactor may have run already, in a pause of the writes on a
	// busy machine: what it reclaimed was dead too.
	if st.DeadBytes+int64(st.ReclaimedBytes) < 20<<20 {
		t.Fatalf("only %d dead bytes before compaction (%d reclaimed)", st.DeadBytes, st.ReclaimedBytes)
	}
	waitFor(t, "the compactor", func() bool { return f.Stats().Compactions > 0 && !f.due() })
	st = f.Stats()
	size := cacheSize(t, f.dir)
	t.Logf("after: %d live, %d dead bytes in %d data files, %d on disk; %d runs copied %d, reclaimed %d",
		st.LiveBytes, st.DeadBytes, st.DataFiles, size, st.Compactions, st.CompactedBytes, st.ReclaimedBytes)
	if limit := int64(1.2*float64(len(small))) + 2*slack; size > limit {
		t.Errorf("cache holds %d bytes for %d live (limit %d)", size, len(small), limit)
	}
	if got, err := f.ReadFile(bg, "small"); err != nil || !bytes.Equal(got, small) {
		t.Errorf("small after compaction: %d bytes, %v", len(got), err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, f, "after compaction")
	f.compactor.mu.Lock()
	defer f.compactor.mu.Unlock()
	if f.compactor.lastErr != nil {
		t.Errorf("compactor: %v", f.compactor.lastErr)
	}
}

// TestAutoCompactOff: without AutoCompact nothing is compacted, and a
// cache below the threshold is left alone even with it.
func TestAutoCompactOff(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64, CompactIdle: time.Millisecond})
	data := bytes.Repeat([]byte{1}, 1<<20)
	for range 3 {
		if err := f.WriteFile(bg, "x", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if f.compactor != nil {
		t.Fatal("a compactor without AutoCompact")
	}
	if st := f.Stats(); st.DeadBytes < 2<<20 || f.due() {
		t.Errorf("due %v with %d dead bytes (the slack is 32 MiB)", f.due(), st.DeadBytes)
	}
	st, err := f.CompactIfDue(bg, -1)
	if err != nil || st.FilesRemoved != 0 || st.BytesCopied != 0 {
		t.Errorf("CompactIfDue below the threshold: %+v, %v", st, err)
	}
}

// TestCompactDropsDeadFile: a non-current data file with no live bytes is
// dropped without copying anything.
func TestCompactDropsDeadFile(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64, DataFileMax: 1 << 20})
	data := bytes.Repeat([]byte{7}, 900<<10)
	createFile(t, f, RootIno, "a", data)
	createFile(t, f, RootIno, "b", data) // a second data file
	if n := f.Stats().DataFiles; n != 2 {
		t.Fatalf("%d data files", n)
	}
	f.Unlink(bg, RootIno, "a")
	st, err := f.CompactIfDue(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.FilesRemoved != 1 || st.BytesCopied != 0 {
		t.Errorf("compact: %+v", st)
	}
	if got, _ := f.ReadFile(bg, "b"); !bytes.Equal(got, data) {
		t.Error("b changed")
	}
}

// TestCompactENOSPC: on a full file system (a 32 MiB tmpfs), deleting
// every file makes room for a new write: the failed write compacts and is
// retried.
func TestCompactENOSPC(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	cache := filepath.Join(dir, "cache")
	f, err := Create(cache, Options{InlineMax: 64, CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{'z'}, 256<<10)
	var files []string
	full := false
	for i := 0; !full; i++ {
		name := fmt.Sprintf("f%d", i)
		a, h, err := f.Create(bg, RootIno, name, 0o644, syscall.O_WRONLY|syscall.O_CREAT)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		files = append(files, name)
		for off := int64(0); off < 4<<20; off += int64(len(chunk)) {
			if _, err := f.Write(bg, h, off, chunk); err != nil {
				if ToErrno(err) != syscall.ENOSPC {
					t.Fatalf("write %s: %v", name, err)
				}
				full = true
				break
			}
		}
		f.Release(h)
		f.Forget(a.Ino, 1)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatalf("sync on a full file system: %v", err)
	}
	t.Logf("full after %d files: %d live, %d dead", len(files), f.Stats().LiveBytes, f.Stats().DeadBytes)
	for _, name := range files {
		if err := f.Unlink(bg, RootIno, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{'n'}, 1<<20)
	if err := f.WriteFile(bg, "new", data, 0o644); err != nil {
		t.Fatalf("1 MiB write after deleting everything: %v", err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadFile(bg, "new"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	if st := f.Stats(); st.Compactions == 0 || st.ReclaimedBytes == 0 {
		t.Errorf("the write succeeded without a compaction: %+v", st)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, cache)
}

const compactCrashEnv = "FSNODE_COMPACT_CRASH"

// TestCompactCrash kills (SIGKILL) a process compacting a cache at each
// step a crash could follow: after copying, after the commit of the
// copies, after detaching the old files, and after the commit that
// unlists them but before their deletion. The cache must then open and
// pass Fsck with every file intact, and the next compaction must finish
// the job.
func TestCompactCrash(t *testing.T) {
	if os.Getenv(compactCrashEnv) != "" {
		t.Skip("in the child")
	}
	for _, point := range []string{"copied", "committed", "detached", "unlisted"} {
		t.Run(point, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			f, err := Create(cache, Options{InlineMax: 64, DataFileMax: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{}
			for i := range 60 {
				name := fmt.Sprintf("f%d", i)
				data := bytes.Repeat([]byte{byte('a' + i%26)}, 5000+97*i)
				createFile(t, f, RootIno, name, data)
				want[name] = data
			}
			for i := range 60 {
				if i%3 != 0 {
					name := fmt.Sprintf("f%d", i)
					f.Unlink(bg, RootIno, name)
					delete(want, name)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestCompactCrashChild$", "-test.v")
			cmd.Env = append(os.Environ(), compactCrashEnv+"="+point+":"+cache)
			out, err := cmd.CombinedOutput()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("child was not killed at %s (%v):\n%s", point, err, out)
			}
			checkFsck(t, cache)
			f, err = Open(cache, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			check := func(when string) {
				for name, data := range want {
					if got, err := f.ReadFile(bg, name); err != nil || !bytes.Equal(got, data) {
						t.Errorf("%s: %s: %d bytes, %v", when, name, len(got), err)
					}
				}
				checkAccounting(t, f, when)
			}
			check("after the crash")
			if _, err := f.CompactAll(bg); err != nil {
				t.Fatal(err)
			}
			check("compacted again")
			var live int64
			for _, d := range want {
				live += int64(len(d))
			}
			if st := f.Stats(); st.DeadBytes > live/2+64<<10 {
				t.Errorf("after compacting again: %d dead bytes for %d live", st.DeadBytes, live)
			}
		})
	}
}

// TestCompactCrashChild compacts and kills itself at the point named.
func TestCompactCrashChild(t *testing.T) {
	env := os.Getenv(compactCrashEnv)
	if env == "" {
		t.Skip("only run by TestCompactCrash")
	}
	point, cache, _ := strings.Cut(env, ":")
	f, err := Open(cache, Options{InlineMax: 64, DataFileMax: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	compactCrashHook = func(p string) {
		if p == point {
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Kill()
			}
			select {}
		}
	}
	st, err := f.CompactAll(bg)
	t.Fatalf("compaction ended without reaching %s: %+v, %v", point, st, err)
}
