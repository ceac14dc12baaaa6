package hgview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// TestPrefetch: a request reconstructs the files one directory below the
// one named, in the background; neither the directory's own files nor
// deeper ones; and Close ends the goroutine.
func TestPrefetch(t *testing.T) {
	dir := testRepo(t)
	v, err := OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := mustWalk(t, v, "rev/0")
	d := mustWalk(t, v, "rev/0/dir")
	a := mustWalk(t, v, "rev/0/a.txt")
	c := mustWalk(t, v, "rev/0/dir/sub/c.txt")
	if _, ok := v.Cached(c); ok {
		t.Fatal("dir/sub/c.txt cached before any read")
	}
	v.Prefetch(root) // one level below the root: nothing at rev 0 (dir/sub/c.txt is two down)
	v.Prefetch(d)    // one level below dir: dir/sub/c.txt
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, ok := v.Cached(c); ok {
			if string(b) != "charlie\n" {
				t.Fatalf("prefetched dir/sub/c.txt: %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dir/sub/c.txt not prefetched")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Both requests are done (the queue is in order): the root's own
	// files were not taken.
	if _, ok := v.Cached(a); ok {
		t.Error("a.txt (in the directory itself) was prefetched")
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v.Prefetch(d) // after Close: dropped, no goroutine
	select {
	case <-v.prefetch.done:
	default:
		t.Error("prefetch goroutine still running after Close")
	}
}

// TestConcurrentReconstruct: goroutines asking for the same files at once
// (a listing and the prefetcher do) all get the content, one
// reconstruction serving each file.
func TestConcurrentReconstruct(t *testing.T) {
	v := openView(t, testRepo(t))
	paths := []string{"rev/1/a.txt", "rev/1/dir/moved.txt", "rev/0/dir/sub/c.txt"}
	want := []string{"alpha\nbeta\n", "charlie\n", "charlie\n"}
	var nodes []*Node
	for _, p := range paths {
		nodes = append(nodes, mustWalk(t, v, p))
	}
	errs := make(chan error, 8*len(nodes))
	for range 8 {
		for i, n := range nodes {
			go func() {
				b, err := v.Content(n)
				if err == nil && string(b) != want[i] {
					err = fmt.Errorf("%s: %q, want %q", paths[i], b, want[i])
				}
				errs <- err
			}()
		}
	}
	for range 8 * len(nodes) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	v.flightMu.Lock()
	defer v.flightMu.Unlock()
	if len(v.flight) != 0 {
		t.Errorf("%d reconstructions left in flight", len(v.flight))
	}
}

// TestPrefetchBatched: a level of more files than one batch of indexes,
// among them a filelog whose index is larger than a batch slot and a
// split one (.i and .d), all prefetched through the batched reads where
// the kernel has io_uring, and each equal to hg cat's output.
func TestPrefetchBatched(t *testing.T) {
	testenv.HgPath(t)
	dir := filepath.Join(t.TempDir(), "repo")
	testenv.Hg(t, "", "init", dir)
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for i := range indexChunk + 30 {
		name := fmt.Sprintf("d/sub/f%03d.txt", i)
		names = append(names, name)
		write(name, fmt.Appendf(nil, "file %d\n", i))
	}
	// Incompressible: an inline index over indexSlot, and a filelog
	// over hg's inline limit (128 KiB), which is split.
	noise := func(n int, seed uint64) []byte {
		b := make([]byte, n)
		x := seed
		for i := range b {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b[i] = byte(x)
		}
		return b
	}
	write("d/sub/big-inline.bin", noise(2*indexSlot, 1))
	write("d/sub/split.bin", noise(200<<10, 2))
	names = append(names, "d/sub/big-inline.bin", "d/sub/split.bin")
	testenv.Hg(t, dir, "commit", "-A", "-q", "-d", "1700000000 0", "-m", "many")
	if _, err := os.Stat(filepath.Join(dir, ".hg/store/data/d/sub/split.bin.d")); err != nil {
		t.Fatalf("split.bin's filelog is not split: %v", err)
	}

	v, err := OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if ir := newIndexReader(v.storeDir); ir == nil {
		t.Logf("no batched index reads here (no io_uring): the plain path is tested")
	} else {
		ir.close()
	}
	var nodes []*Node
	for _, n := range names {
		nodes = append(nodes, mustWalk(t, v, "rev/0/"+n))
	}
	catDir := t.TempDir()
	testenv.Hg(t, dir, "cat", "-r", "0", "-o", filepath.Join(catDir, "%p"), "d")
	v.Prefetch(mustWalk(t, v, "rev/0/d"))
	deadline := time.Now().Add(20 * time.Second)
	for i, n := range nodes {
		for {
			if b, ok := v.Cached(n); ok {
				want, err := os.ReadFile(filepath.Join(catDir, names[i]))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, want) {
					t.Errorf("prefetched %s: %d bytes, hg cat %d", names[i], len(b), len(want))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not prefetched", names[i])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
