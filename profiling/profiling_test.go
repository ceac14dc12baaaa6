package profiling

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestCPUSilenceStderr takes a CPU profile at a rate other than 100 Hz
// with fd 2 silenced (what hgfs asks by default) and without it
// (HGFS_TUNE=-silencestderr): both give a profile that parses, and
// stderr is the same file afterwards.
func TestCPUSilenceStderr(t *testing.T) {
	before, err := os.Stderr.Stat()
	if err != nil {
		t.Fatal(err)
	}
	for _, silence := range []bool{true, false} {
		s, err := Start(Options{Kind: "cpu", Format: "pprof", Freq: 250, SilenceStderr: silence})
		if err != nil {
			t.Fatalf("SilenceStderr=%v: %v", silence, err)
		}
		sum := 0
		for i := range 1_000_000 {
			sum += i % 7
		}
		var out bytes.Buffer
		if err := s.Stop(&out); err != nil {
			t.Fatalf("SilenceStderr=%v: stop: %v", silence, err)
		}
		if _, err := profile.Parse(&out); err != nil {
			t.Errorf("SilenceStderr=%v: the profile does not parse: %v (%d)", silence, err, sum)
		}
		after, err := os.Stderr.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) {
			t.Errorf("SilenceStderr=%v: fd 2 is another file after the profile started", silence)
		}
	}
}

// TestHeapPeak holds a large allocation for a while, frees it, and then
// stops a heap profile: the profile is the heap at its peak, so it shows
// the allocation, which a profile of the heap at the end would not.
func TestHeapPeak(t *testing.T) {
	s, err := Start(Options{Kind: "heap", Format: "pprof"})
	if err != nil {
		t.Fatal(err)
	}
	const size = 48 << 20
	held := holdPeak(size)
	// The watcher takes a profile one collection after the one that
	// measured the peak, and none across a forced collection: make
	// garbage until the runtime's own collections have come twice with
	// the block held and the watcher has taken its profile.
	deadline := time.Now().Add(20 * time.Second)
	var sink []byte
	for {
		s.peak.mu.Lock()
		live := s.peak.live
		s.peak.mu.Unlock()
		if live >= size || time.Now().After(deadline) {
			break
		}
		for range 64 {
			sink = make([]byte, 1<<20)
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(held)
	runtime.KeepAlive(sink)
	held = nil
	// What Stop must not take for the peak: the end's heap, published
	// by a forced collection.
	runtime.GC()
	var out bytes.Buffer
	if err := s.Stop(&out); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	inuse := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			inuse = i
		}
	}
	if inuse < 0 {
		t.Fatalf("no inuse_space in %v", p.SampleType)
	}
	var inHold int64
	for _, smp := range p.Sample {
		for _, loc := range smp.Location {
			for _, l := range loc.Line {
				if strings.HasSuffix(l.Function.Name, ".holdPeak") {
					inHold += smp.Value[inuse]
				}
				if strings.HasPrefix(l.Function.Name, watcherFuncs) {
					t.Errorf("the profile shows the watcher's own allocation: %v", smp.Location)
				}
			}
		}
	}
	if inHold < size/2 {
		t.Errorf("the profile shows %d bytes in use from holdPeak, want about %d: not the heap at its peak", inHold, size)
	}
}

//go:noinline
func holdPeak(n int) []byte {
	b := make([]byte, n)
	b[n-1] = 1
	return b
}

// TestDropWatcher: the peak profile leaves out the samples whose stack
// passes through the watcher, and keeps the rest as they were.
func TestDropWatcher(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	app, own, rt := fn(1, "main.work"), fn(2, watcherFuncs+"check"), fn(3, "runtime.mallocgc")
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	la, lo, lr := loc(1, app), loc(2, own), loc(3, rt)
	in := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		Function:   []*profile.Function{app, own, rt},
		Location:   []*profile.Location{la, lo, lr},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lr, la}, Value: []int64{100}},
			{Location: []*profile.Location{lr, lo}, Value: []int64{2000}},
		},
	}
	var raw, out bytes.Buffer
	if err := in.Write(&raw); err != nil {
		t.Fatal(err)
	}
	if err := dropWatcher(&out, raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sample) != 1 || got.Sample[0].Value[0] != 100 {
		t.Errorf("samples after the filter: %v", got.Sample)
	}
}
