package profiling

import (
	"bytes"
	"io"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
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

	// The collection counts the watcher saw last (all, and those forced
	// by runtime.GC) and the live heap measured then; the watcher's own.
	cycle, forced, cycleLive uint64

	mu   sync.Mutex
	live uint64       // the live heap prof describes
	prof bytes.Buffer // the heap profile at the peak
	err  error
}

var peakMetrics = []string{"/gc/heap/live:bytes", "/gc/cycles/total:gc-cycles", "/gc/cycles/forced:gc-cycles"}

func watchPeak() *peakHeap {
	p := &peakHeap{quit: make(chan struct{}), done: make(chan struct{})}
	if live, cycle, forced, ok := p.read(p.samples()); ok {
		p.cycle, p.forced, p.cycleLive = cycle, forced, live
	}
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

// read returns the live heap and the collection counts, or ok false
// where the runtime does not measure them (the final profile only,
// then).
func (p *peakHeap) read(s []metrics.Sample) (live, cycle, forced uint64, ok bool) {
	metrics.Read(s)
	for _, m := range s {
		if m.Value.Kind() != metrics.KindUint64 {
			return 0, 0, 0, false
		}
	}
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), true
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
// and the heap it describes is the largest yet by peakStep. A forced
// collection (runtime.GC, which hgfs calls here and there) publishes
// its own cycle's profile as it returns, so a poll across one cannot
// tell which cycle the profile describes and takes none: a peak there
// is missed, as is one in the last cycle before Stop.
func (p *peakHeap) check(s []metrics.Sample) {
	live, cycle, forced, ok := p.read(s)
	if !ok || cycle == p.cycle {
		return
	}
	described := p.cycleLive
	take := cycle == p.cycle+1 && forced == p.forced
	p.cycle, p.forced, p.cycleLive = cycle, forced, live
	p.mu.Lock()
	defer p.mu.Unlock()
	if !take || p.err != nil || (p.prof.Len() > 0 && described < p.live+peakStep(p.live)) {
		return
	}
	var prof bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&prof, 0); err != nil {
		p.err = err
		return
	}
	// A collection that ended meanwhile may have published its own.
	if _, again, _, ok := p.read(s); !ok || again != cycle {
		return
	}
	p.prof, p.live = prof, described
}

// stop ends the watch and writes the heap profile at the peak to w, or
// the heap's profile after a collection if the watcher took none.
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
		runtime.GC()
		return pprof.Lookup("heap").WriteTo(w, 0)
	}
	return dropWatcher(w, p.prof.Bytes())
}

// dropWatcher writes the heap profile prof less the samples the
// watcher's own profile writing allocated (about 2 MB of compressor
// state, live when a collection met a profile being written), which on
// a small heap were most of what the profile showed.
func dropWatcher(w io.Writer, prof []byte) error {
	pr, err := parsePprof(prof)
	if err != nil {
		return err
	}
	return pr.write(w, func(s pprofSample) bool {
		own := false
		pr.lines(s, func(fn *pprofFunction, _, _ int) {
			own = own || strings.HasPrefix(fn.name, watcherFuncs)
		})
		return own
	})
}

// watcherFuncs prefixes the names of the watcher's functions.
const watcherFuncs = "github.com/hgfs/hgfs/profiling.(*peakHeap)."
