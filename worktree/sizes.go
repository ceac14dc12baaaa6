package worktree

// Working files' sizes learnt while a clone's store streams in: a
// virtual checkout (CheckoutSink with Options.Virtual) writes no bytes,
// but each file's size is its content's length, which the index's raw
// length gives only without a metadata header. Asked at checkout time,
// that meant opening every filelog back from the new store and
// decompressing its revision: on the bench's 20,000-file store, 53-79
// ms of the clone's 250 (2026-12-05). The stream had each small
// filelog whole in memory a moment before; Sizes takes it from there.

import (
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/revlog"
)

// Sizes maps file nodes to their contents' lengths: for each inline
// filelog the stream carries whole (streamclone.Options.Whole), the
// last revision's, when it is a snapshot, its text checked against its
// node as any read checks it. A node names one text, so the map needs
// no path. Anything it cannot learn cheaply (a delta, a split or large
// filelog, an index it cannot parse, a text its node does not name) it
// leaves out, and the checkout reads that file's filelog as before,
// with the errors that gives.
type Sizes struct {
	jobs chan []byte
	wg   sync.WaitGroup
	mu   sync.Mutex
	m    sizeTable
}

// NewSizes starts the workers that parse what Observe hands them, on
// GOMAXPROCS goroutines; Wait stops them.
func NewSizes() *Sizes {
	s := &Sizes{jobs: make(chan []byte, 64), m: sizeTable{seed: maphash.MakeSeed()}}
	jobs := s.jobs
	for range runtime.GOMAXPROCS(0) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for index := range jobs {
				s.learn(index)
			}
		}()
	}
	return s
}

// Observe is a streamclone.Options.Whole: it queues a copy of each
// inline filelog index for the workers. It must not be called after
// Wait.
func (s *Sizes) Observe(name string, data []byte) {
	if !strings.HasPrefix(name, "data/") || !strings.HasSuffix(name, ".i") {
		return
	}
	// A split filelog's chunks are in the .d, another file.
	if len(data) < revlog.EntrySize || !revlog.IndexInline(data) {
		return
	}
	s.jobs <- append([]byte(nil), data...)
}

func (s *Sizes) learn(index []byte) {
	fl, err := revlog.FromBytes("sizes.i", index, nil)
	if err != nil || fl.Len() == 0 {
		return // the checkout reads this filelog and reports what it finds
	}
	rev := fl.Len() - 1
	if fl.DeltaParent(rev) != revlog.NullRev || fl.Entry(rev).BaseRev != rev {
		return // a delta: its chain is the checkout's to rebuild
	}
	// Revision checks the text against its node (and its flags), so
	// that a size is kept only for the text its node names: a stream
	// whose filelog claims another file's node with other content
	// changes nothing.
	text, err := fl.Revision(rev)
	if err != nil {
		return
	}
	_, body, err := revlog.ParseFileMeta(text)
	if err != nil {
		return
	}
	if uint64(len(body)) >= math.MaxUint32 {
		return // more than a slot holds (revlog v1's raw lengths are 31 bits)
	}
	s.mu.Lock()
	s.m.put(fl.Node(rev), uint32(len(body)))
	s.mu.Unlock()
}

// Wait waits for the workers to finish what Observe queued. A nil
// Sizes has none.
func (s *Sizes) Wait() {
	if s != nil && s.jobs != nil {
		close(s.jobs)
		s.jobs = nil
		s.wg.Wait()
	}
}

// Size is the length of node's content, if it was learnt. Call it
// after Wait.
func (s *Sizes) Size(node revlog.Node) (int64, bool) {
	if s == nil {
		return 0, false
	}
	n, ok := s.m.get(node)
	return int64(n), ok
}

// release drops what was learnt, once the checkout has sized its
// files, before it builds its lists of virtual files. Size answers
// nothing after it, and Len 0.
func (s *Sizes) release() {
	if s != nil {
		s.m = sizeTable{}
	}
}

// Len is how many sizes were learnt.
func (s *Sizes) Len() int {
	if s == nil {
		return 0
	}
	return s.m.n
}

// sizeTable is the sizes by node, an open-addressed table of 24-byte
// slots probed linearly, 30 to 45 bytes a size as its load goes from
// 4/5 to just after a growth. A Go map of the 250,000-file bench
// store's sizes held 21 MB (42 MB allocated as it grew) through the
// clone's ingest and checkout; this table holds them in 10.8 MB. The
// place of a node is a seeded hash of it, so that a stream's chosen
// nodes cannot crowd one run of slots.
type sizeTable struct {
	seed  maphash.Seed
	slots []sizeSlot
	n     int
}

// sizeSlot is a node and its size plus one; 0 is an empty slot.
type sizeSlot struct {
	node revlog.Node
	size uint32
}

// sizeTableMin is the slots of a table's first allocation.
const sizeTableMin = 1024

// home is node's first slot in a table of n slots.
func (t *sizeTable) home(node *revlog.Node, n int) int {
	hi, _ := bits.Mul64(maphash.Comparable(t.seed, *node), uint64(n))
	return int(hi)
}

// put sets node's size, growing the table by half past a load of 4/5
// (by half, not double: a table just grown is then at least 53% full,
// not 40%).
func (t *sizeTable) put(node revlog.Node, size uint32) {
	if 5*(t.n+1) > 4*len(t.slots) {
		t.grow()
	}
	i := t.home(&node, len(t.slots))
	for t.slots[i].size != 0 && t.slots[i].node != node {
		if i++; i == len(t.slots) {
			i = 0
		}
	}
	if t.slots[i].size == 0 {
		t.n++
	}
	t.slots[i] = sizeSlot{node: node, size: size + 1}
}

func (t *sizeTable) grow() {
	old := t.slots
	t.slots = make([]sizeSlot, max(sizeTableMin, len(old)+len(old)/2))
	for _, sl := range old {
		if sl.size == 0 {
			continue
		}
		i := t.home(&sl.node, len(t.slots))
		for t.slots[i].size != 0 {
			if i++; i == len(t.slots) {
				i = 0
			}
		}
		t.slots[i] = sl
	}
}

func (t *sizeTable) get(node revlog.Node) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	i := t.home(&node, len(t.slots))
	for t.slots[i].size != 0 {
		if t.slots[i].node == node {
			return t.slots[i].size - 1, true
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
	return 0, false
}
