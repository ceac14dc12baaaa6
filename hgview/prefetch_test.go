package hgview

import (
	"fmt"
	"testing"
	"time"
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
