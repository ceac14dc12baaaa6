package profiling

import (
	"bytes"
	"io"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// A heap profile taken when a command ends shows almost nothing: by then
// what the command held is freed. What a user asks a heap profile (why
// is peak memory what it is?) is answered by the heap at its largest, so
// the heap kind watches the live heap the runtime measures at each
// collection's mark termination (/gc/heap/live:bytes) and keeps a heap
// profile of the largest.
//
// The runtime publishes a collection's heap profile only at the next
// collection's mark termination, once the first one's sweep has counted
// its frees (runtime/mprof.go: "up to two garbage collection cycles
// old"). So when the cycle count moves on by one, the profile now
// readable is that of the heap measured at the cycle before; the watcher
// takes it if that heap is the largest so far by peakStep. A profile
// costs about a millisecond per thousand sampled allocation sites, and
// growth by peakStep bounds a command to a few dozen. Between two polls
// more than one collection may pass (small heaps collect often); those
// cycles' profiles are missed, which only matters for heaps too small
// to ask about. The profile's sample types are the runtime's own:
// inuse_space is the peak's, alloc_space counts up to the peak.

// peakPoll is how often the live heap is read. Reading it is a few
// hundred nanoseconds; collections in a large command come every few
// milliseconds to seconds.
const peakPoll = 2 * time.Millisecond

// peakStep is the growth of the live heap, over the last profile's, that
// takes a new profile: 1/16 of it, at least 256 KiB.
func peakStep(live uint64) uint64 { return max(live/16, 256<<10) }

type peakHeap struct {
	quit chan struct{}
	done chan struct{}

	// The cycle the watcher saw last and the live heap measured then.
	cycle, cycleLive uint64

	mu   sync.Mutex
	live uint64       // the live heap prof describes
	prof bytes.Buffer // the heap profile at the peak
	err  error
}

var peakMetrics = []string{"/gc/heap/live:bytes", "/gc/cycles/total:gc-cycles"}

func watchPeak() *peakHeap {
	p := &peakHeap{quit: make(chan struct{}), done: make(chan struct{})}
	p.read(p.samples())
	go p.run()
	return p
}

func (p *peakHeap) samples() []metrics.Sample {
	s := make([]metrics.Sample, len(peakMetrics))
	for i, name := range peakMetrics {
		s[i].Name = name
	}
	return s
}

// read returns the live heap and the collection count, or ok false where
// the runtime does not measure them (the final profile only, then).
func (p *peakHeap) read(s []metrics.Sample) (live, cycle uint64, ok bool) {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0, 0, false
	}
	return s[0].Value.Uint64(), s[1].Value.Uint64(), true
}

func (p *peakHeap) run() {
	defer close(p.done)
	s := p.samples()
	t := time.NewTicker(peakPoll)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
		}
		p.check(s)
	}
}

// check takes the published profile if the cycle count moved on by one
// and the heap it describes is the largest yet by peakStep.
func (p *peakHeap) check(s []metrics.Sample) {
	live, cycle, ok := p.read(s)
	if !ok || cycle == p.cycle {
		return
	}
	described := p.cycleLive
	next := cycle == p.cycle+1
	p.cycle, p.cycleLive = cycle, live
	if !next {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || (p.prof.Len() > 0 && described < p.live+peakStep(p.live)) {
		return
	}
	p.prof.Reset()
	p.err = pprof.Lookup("heap").WriteTo(&p.prof, 0)
	p.live = described
}

// stop ends the watch and writes the heap profile at the peak to w, or
// the heap's profile now if the watcher took none.
func (p *peakHeap) stop(w io.Writer) error {
	close(p.quit)
	<-p.done
	p.check(p.samples())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.prof.Len() == 0 {
		return pprof.Lookup("heap").WriteTo(w, 0)
	}
	_, err := w.Write(p.prof.Bytes())
	return err
}
