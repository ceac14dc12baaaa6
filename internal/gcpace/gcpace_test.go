package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGOGC(t *testing.T) {
	p := &pacer{percent: 30, floor: 4 << 20}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},        // no live heap known: the floor over the runtime's 4 MB
		{1 << 20, 125},  // the floor, as the runtime's minimum allows: 4 MiB x 1.25 = 1 + 4 MiB
		{1 << 10, 100},  // the same: the runtime's 4 MiB minimum is the floor
		{8 << 20, 50},   // the floor
		{100 << 20, 30}, // a large heap gets the share
	} {
		if got := p.gogc(c.live); got != c.want {
			t.Errorf("gogc(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// gcPercent reads GOGC without changing it.
func gcPercent() int {
	old := debug.SetGCPercent(100)
	debug.SetGCPercent(old)
	return old
}

// TestPace checks that a collection sets GOGC from the live heap, and
// that stop restores what was there before.
func TestPace(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	live := make([][]byte, 0, 64)
	stop := Pace(30, 8<<20)
	// About 64 MiB live: the share (30%) is over the 8 MiB floor.
	for range 64 {
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	share := func() bool { g := gcPercent(); return g >= 30 && g <= 31 } // 30 and the rounding
	for !share() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !share() {
		t.Errorf("GOGC with 64 MiB live = %d, want 30", gcPercent())
	}
	runtime.KeepAlive(live)
	live = nil
	// A small live heap: the floor (8 MiB) is over 30% of it.
	deadline = time.Now().Add(10 * time.Second)
	for gcPercent() <= 31 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := gcPercent(); got <= 31 {
		t.Errorf("GOGC with a small live heap = %d, want over 30", got)
	}
	stop()
	restored(t, "after stop", 77)
}

// restored checks that GOGC is want, and still is after a collection
// (no pace sets it any more).
func restored(t *testing.T, when string, want int) {
	t.Helper()
	if got := gcPercent(); got != want {
		t.Errorf("GOGC %s = %d, want %d", when, got, want)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gcPercent(); got != want {
		t.Errorf("GOGC %s and a collection = %d, want %d", when, got, want)
	}
}

// TestPaceNested: the pace started last sets GOGC; the one under it
// takes over when it stops, and stopping them out of order restores
// what was there before both.
func TestPaceNested(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20))
	}
	// settle collects until GOGC is within [lo, hi].
	settle := func(what string, lo, hi int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if g := gcPercent(); g >= lo && g <= hi {
				return
			}
		}
		t.Errorf("%s: GOGC %d, want %d-%d", what, gcPercent(), lo, hi)
	}
	outer := Pace(30, 1<<20)
	settle("outer alone", 30, 31)
	inner := Pace(60, 1<<20)
	settle("inner over outer", 60, 61)
	inner()
	settle("outer after inner stopped", 30, 31)
	inner() // a second stop changes nothing
	settle("outer after a second stop of inner", 30, 31)

	// Out of order: a, then b; a stops first.
	a := Pace(40, 1<<20)
	b := Pace(50, 1<<20)
	settle("b over a", 50, 51)
	a()
	settle("b after a stopped under it", 50, 51)
	b()
	settle("outer after b", 30, 31)
	outer()
	restored(t, "after every pace stopped", 77)
	runtime.KeepAlive(live)
}
