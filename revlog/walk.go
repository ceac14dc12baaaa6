package revlog

import (
	"errors"
	"sync"
)

// EachRevision calls fn with every revision's text in order, 0 to
// Len()-1, checked as Revision checks it, or with the error Revision
// would give for it (text nil). A text is valid only until fn returns:
// EachRevision builds each one into a buffer it recycles once the text
// is no longer the base of a delta it may meet (and hands its buffers
// to the next walk when it ends), and adds none to the revlog's text
// cache. A non-nil error from fn stops the walk and is returned; so is
// the revlog's closing.
//
// It is for readers that look at every revision once (hgfs verify's
// changelog and filelog passes): Revision allocates a text per
// revision, which a long history turns into hundreds of MB of garbage
// (on the generated 30,000-changeset history, 601 of verify's 820 MB
// allocated).
func (r *Revlog) EachRevision(fn func(rev int, text []byte, err error) error) error {
	w := newWalker(&r.inner)
	defer w.release()
	for rev := 0; rev < r.Len(); rev++ {
		text, err := w.rebuild(rev)
		if err == errWalkClosed {
			return r.errClosed()
		}
		if ferr := fn(rev, text, err); ferr != nil {
			return ferr
		}
		if err == nil {
			w.kept.add(rev, text)
		}
	}
	return nil
}

// walker is EachRevision's state: the texts it keeps as delta bases
// (a text cache of its own, bounded as the revlog's), and the buffers of
// the texts the cache dropped.
type walker struct {
	in   *inner
	kept textCache
	free [][]byte
	set  *walkSet // where the buffers go when the walk ends
}

// walkFree bounds the dropped buffers a walker keeps while it walks (it
// may start with more: those of the walk before it, walkSets).
const walkFree = 4

// walkSets carry a finished walk's buffers to the next walk: hgfs verify
// walks every filelog in turn, and a walker starting empty for each made
// 110 of the about 250 MB that verify of the 30,000-changeset history
// allocated (851 filelogs), which the collector paid for at verify's low
// GOGC. A
// set holds at most walkFree+defaultCacheItems buffers, each at most
// maxPooledChainBuffer; the pool lets them go at collections, as any
// sync.Pool does.
var walkSets = sync.Pool{New: func() any { return new(walkSet) }}

type walkSet struct{ bufs [][]byte }

var errWalkClosed = errors.New("revlog closed")

func newWalker(in *inner) *walker {
	w := &walker{in: in}
	w.kept = textCache{maxItems: defaultCacheItems, maxBytes: defaultCacheBytes, dropped: w.drop}
	if !noPools.Load() {
		w.set = walkSets.Get().(*walkSet)
		w.free, w.set.bufs = w.set.bufs, nil
	}
	return w
}

// release hands the walk's buffers, kept texts included (no text
// outlives the walk), to the next walk.
func (w *walker) release() {
	if w.set == nil {
		return
	}
	bufs := w.free[:0]
	for _, b := range w.free {
		if cap(b) <= maxPooledChainBuffer {
			bufs = append(bufs, b)
		}
	}
	for _, e := range w.kept.entries {
		if cap(e.text) > 0 && cap(e.text) <= maxPooledChainBuffer && len(bufs) < walkFree+defaultCacheItems {
			bufs = append(bufs, e.text[:0])
		}
	}
	w.kept.clear()
	w.free, w.set.bufs = nil, bufs
	walkSets.Put(w.set)
	w.set = nil
}

// rebuild is inner.revisionChunk with check, for the walk: the chain
// stops at a kept text instead of a cached one, and the text is built in
// a recycled buffer. Its errors are revisionChunk's.
func (w *walker) rebuild(rev int) ([]byte, error) {
	in := w.in
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil, errWalkClosed
	}
	chain, base, haveBase := in.chain(rev, &w.kept)
	in.mu.Unlock()
	stored, _, err := in.src.readChunks(chain)
	if err != nil {
		return nil, err
	}
	scratch := getChainBuffer()
	defer putChainBuffer(scratch)
	base, deltas, _, err := in.unpack(chain, stored, scratch, base, haveBase)
	if err != nil {
		return nil, err
	}
	var text []byte
	if len(deltas) == 0 {
		// A snapshot: the scratch buffer (or the read buffer it aliases)
		// is reused, so the text is a copy.
		text = append(w.buffer(len(base)), base...)
	} else {
		// The index's length sizes the buffer, but it is untrusted: no
		// chain yields more than its base and every delta's bytes.
		most := len(base)
		for _, d := range deltas {
			most += len(d)
		}
		buf := w.buffer(min(max(int(in.entries[rev].rawLen), 0), most))
		text, err = patchChainInto(buf, base, deltas)
		if err != nil || cap(buf) > 0 && (cap(text) == 0 || &buf[:1][0] != &text[:1][0]) {
			w.drop(buf) // not used: the text did not fit, or there is none
		}
		if err != nil {
			return nil, in.corrupt(rev, -1, "applying delta chain %v: %w", chain, err)
		}
	}
	if err := in.checkText(rev, text); err != nil {
		w.drop(text)
		return nil, err
	}
	return text, nil
}

// buffer returns an empty buffer for a text of n bytes (n bounded by
// bytes in memory): a dropped one that holds it, or a new one with a
// quarter more room (at most 1 MiB more), since a file's texts tend to
// grow along its history and one of exactly n bytes would fit none of
// the revisions after it.
func (w *walker) buffer(n int) []byte {
	n = max(n, 0)
	// The smallest that fits: the buffers of an earlier walk may be far
	// larger than this one's texts.
	best := -1
	for i, b := range w.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(w.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := w.free[best]
		w.free = append(w.free[:best], w.free[best+1:]...)
		return b[:0]
	}
	return make([]byte, 0, n+min(n/4, 1<<20)+64)
}

// drop takes back a text no longer kept, as a buffer to build in. The
// smallest of a full list of buffers is let go.
func (w *walker) drop(text []byte) {
	if cap(text) == 0 || noPools.Load() {
		return
	}
	if len(w.free) < walkFree {
		w.free = append(w.free, text)
		return
	}
	small := 0
	for i, b := range w.free {
		if cap(b) < cap(w.free[small]) {
			small = i
		}
	}
	if cap(text) > cap(w.free[small]) {
		w.free[small] = text
	}
}
