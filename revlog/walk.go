package revlog

import "errors"

// EachRevision calls fn with every revision's text in order, 0 to
// Len()-1, checked as Revision checks it, or with the error Revision
// would give for it (text nil). A text is valid only until fn returns:
// EachRevision builds each one into a buffer it recycles once the text
// is no longer the base of a delta it may meet, and adds none to the
// revlog's text cache. A non-nil error from fn stops the walk and is
// returned; so is the revlog's closing.
//
// It is for readers that look at every revision once (hgfs verify's
// filelog pass): Revision allocates a text per revision, which a long
// history turns into hundreds of MB of garbage (on the generated
// 30,000-changeset history, 601 of verify's 820 MB allocated).
func (r *Revlog) EachRevision(fn func(rev int, text []byte, err error) error) error {
	w := walker{in: &r.inner}
	defer w.close()
	for rev := 0; rev < r.Len(); rev++ {
		text, err := w.rebuild(rev)
		if err == errWalkClosed {
			return r.errClosed()
		}
		if ferr := fn(rev, text, err); ferr != nil {
			return ferr
		}
		if err == nil {
			w.keep(rev, text)
		}
	}
	return nil
}

// walker is EachRevision's state: the texts it keeps as delta bases,
// most recently used last, and the buffers of texts it dropped.
type walker struct {
	in    *inner
	kept  []cachedText
	bytes int
	free  [][]byte
}

// Bounds on what a walker keeps: as the revlog's text cache, at most
// walkKeep texts and walkKeepBytes bytes as bases, and walkFree dropped
// buffers.
const (
	walkKeep      = defaultCacheItems
	walkKeepBytes = defaultCacheBytes
	walkFree      = 4
)

var errWalkClosed = errors.New("revlog closed")

// rebuild is inner.revisionChunk with check, for the walk: the chain
// stops at a kept text instead of a cached one, and the text is built in
// a recycled buffer. Its errors are revisionChunk's.
func (w *walker) rebuild(rev int) ([]byte, error) {
	in := w.in
	var base []byte
	haveBase := false
	var chain []int
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil, errWalkClosed
	}
	for cur := rev; ; {
		if cur != rev {
			if t, ok := w.get(cur); ok {
				base, haveBase = t, true
				break
			}
		}
		chain = append(chain, cur)
		dp := in.deltaParent(cur)
		if dp == NullRev {
			if int(in.entries[cur].base) != cur {
				base, haveBase = []byte{}, true // generaldelta delta against null
			}
			break
		}
		cur = dp
	}
	in.mu.Unlock()
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	stored, _, err := in.src.readChunks(chain)
	if err != nil {
		return nil, err
	}
	scratch := getChainBuffer()
	defer putChainBuffer(scratch)
	deltas := make([][]byte, 0, len(chain))
	for i, c := range chain {
		d, err := scratch.decompress(in, c, stored[i])
		if err != nil {
			return nil, err
		}
		if i == 0 && !haveBase {
			base = d
			continue
		}
		deltas = append(deltas, d)
	}
	var text []byte
	if len(deltas) == 0 {
		// A snapshot: the scratch buffer (or the read buffer it aliases)
		// is reused, so the text is a copy.
		text = append(w.buffer(len(base)), base...)
	} else if text, err = patchChainInto(w.buffer(int(in.entries[rev].rawLen)), base, deltas); err != nil {
		return nil, in.corrupt(rev, -1, "applying delta chain %v: %w", chain, err)
	}
	if err := in.checkText(rev, text); err != nil {
		w.drop(text)
		return nil, err
	}
	return text, nil
}

// get returns the kept text of rev, marking it most recently used.
func (w *walker) get(rev int) ([]byte, bool) {
	for i := len(w.kept) - 1; i >= 0; i-- {
		if w.kept[i].rev == rev {
			e := w.kept[i]
			copy(w.kept[i:], w.kept[i+1:])
			w.kept[len(w.kept)-1] = e
			return e.text, true
		}
	}
	return nil, false
}

// keep makes text rev's kept text, dropping the least recently used
// beyond the bounds; a text over them all is dropped at once.
func (w *walker) keep(rev int, text []byte) {
	if len(text) > walkKeepBytes {
		w.drop(text)
		return
	}
	for len(w.kept) > 0 && (len(w.kept) >= walkKeep || w.bytes+len(text) > walkKeepBytes) {
		old := w.kept[0]
		w.kept = w.kept[1:]
		w.bytes -= len(old.text)
		w.drop(old.text)
	}
	w.kept = append(w.kept, cachedText{rev, text})
	w.bytes += len(text)
}

// buffer returns an empty buffer for a text of n bytes: a dropped one
// that holds it, or a new one with a quarter more room, since a file's
// texts tend to grow along its history and one of exactly n bytes would
// fit none of the revisions after it.
func (w *walker) buffer(n int) []byte {
	n = max(n, 0)
	for i, b := range w.free {
		if cap(b) >= n {
			w.free = append(w.free[:i], w.free[i+1:]...)
			return b[:0]
		}
	}
	if n > MaxTextLen {
		return nil // apply refuses it
	}
	return make([]byte, 0, n+n/4+64)
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

func (w *walker) close() { w.kept, w.free = nil, nil }
