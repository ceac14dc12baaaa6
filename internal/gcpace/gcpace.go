// Package gcpace paces the garbage collector of a command whose live
// heap is small at first and may grow large: each collection's headroom
// (the heap it lets grow before the next) is a share of the live heap,
// but never less than a floor.
//
// # Why
//
// GOGC sets the headroom as a share of the live heap, and the runtime's
// smallest heap target is 4 MB scaled by GOGC/100. A command that keeps
// its peak memory near its live heap (GOGC=30: hgfs verify, whose peak
// RSS is held against hg verify's) therefore collects every 1.2 MB of
// allocation while its live heap is small, and a command that allocates
// a rebuilt text per revision spends most of its time there. On the
// real-history corpus (2,971 changesets) hgfs verify took 0.36-0.51 s at
// GOGC=30 and 0.20-0.23 s at GOGC=100, which raised its peak RSS from
// 26-28 to 34-36 MB (hg verify's: 36 MB). A floor on the headroom
// keeps the few MB a small heap needs to collect rarely, and the share
// keeps a large heap's peak near its live size.
//
// # How
//
// A sentinel object's finalizer runs once per collection (each run sets
// a new sentinel); it reads the live heap (runtime/metrics) and sets
// GOGC so that the next target is live + max(floor, share x live), the
// runtime's own minimum target (4 MB scaled by GOGC) included.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Pace keeps each collection's headroom at max(floor, percent% of the
// live heap) until the returned function is called, which restores the
// GOGC that was in effect.
//
// Paces nest: the one started last sets GOGC, and the one under it
// takes over when it stops (a mount daemon's pace, for the process's
// life, under a command's). Before, each pacer set GOGC after every
// collection, and two at once undid each other's.
func Pace(percent int, floor uint64) (stop func()) {
	p := &pacer{percent: percent, floor: floor}
	p.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	mu.Lock()
	p.under = top
	top = p
	p.old = debug.SetGCPercent(p.gogc(0))
	mu.Unlock()
	p.arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if p.stopped {
			return
		}
		p.stopped = true
		if top == p {
			top = p.under
			debug.SetGCPercent(p.old)
			return
		}
		// Stopped under a later pace: that one restores what p had
		// found, and p leaves the chain.
		for q := top; q != nil; q = q.under {
			if q.under == p {
				q.under, q.old = p.under, p.old
				break
			}
		}
	}
}

// mu guards top, every pacer's under, old and stopped, and setting GOGC.
var (
	mu  sync.Mutex
	top *pacer // the pace started last, nil when none runs
)

type pacer struct {
	percent int
	floor   uint64
	sample  []metrics.Sample
	under   *pacer // the pace that was top when this one started
	old     int    // GOGC when this one started, restored when it stops
	stopped bool
}

// minHeap is the runtime's smallest heap target at GOGC=100; at another
// GOGC it is scaled by GOGC/100 (runtime/mgcpacer.go, heapMinimum).
const minHeap = 4 << 20

// gogc is the GOGC that gives a live heap of live bytes its headroom:
// head*100/live rounded up, but no more than keeps the runtime's own
// smallest target (minHeap x GOGC/100) within live + head, which a
// large GOGC on a small live heap would otherwise raise far past it.
func (p *pacer) gogc(live uint64) int {
	if live == 0 {
		live = minHeap
	}
	head := max(p.floor, live*uint64(p.percent)/100)
	g := (head*100 + live - 1) / live
	g = min(g, (live+head)*100/minHeap)
	return int(max(g, 1))
}

type sentinel struct{ _ [16]byte }

func (p *pacer) arm() {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) { p.collected() })
}

// collected runs on the finalizer goroutine after a collection: the top
// pace sets GOGC for the live heap, one under it only re-arms.
func (p *pacer) collected() {
	mu.Lock()
	defer mu.Unlock()
	if p.stopped {
		return
	}
	if top == p {
		metrics.Read(p.sample)
		if v := p.sample[0].Value; v.Kind() == metrics.KindUint64 {
			debug.SetGCPercent(p.gogc(v.Uint64()))
		}
	}
	p.arm()
}
