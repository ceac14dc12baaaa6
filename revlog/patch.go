package revlog

// Binary deltas (mpatch format). A delta is a sequence of hunks:
//
//	offset  size  field
//	0       4     start: first byte of the old text replaced (big-endian int32)
//	4       4     end: one past the last byte replaced
//	8       4     length of the new data
//	12      len   new data
//
// Hunks are sorted and do not overlap: each start is at or after the
// previous hunk's end, and every end is within the text the delta applies
// to. Keep in sync with mercurial/mpatch.c and mercurial/pure/mpatch.py.
//
// A chain of deltas is not applied one after another (which costs the
// text's length per delta, quadratic on long chains): the hunk lists are
// first folded pairwise into one list over the base text, as mpatch.c's
// mpatch_fold does, and that list is applied once. Folding costs the
// total number of hunks times log(chain length).

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
)

// hunk replaces text[start:end] with data. In a folded list, start and end
// are positions in the base text of the chain.
type hunk struct {
	start, end int
	data       []byte
}

const hunkHeaderSize = 12

// decodeDelta appends delta's hunks to dst, checking them against a text
// of textLen bytes, and returns the length of the patched text.
func decodeDelta(dst []hunk, delta []byte, textLen int) ([]hunk, int, error) {
	newLen := textLen
	last := 0
	for pos := 0; pos < len(delta); {
		if len(delta)-pos < hunkHeaderSize {
			return dst, 0, fmt.Errorf("%w: truncated hunk header at delta offset %d", ErrBadDelta, pos)
		}
		start := int(int32(binary.BigEndian.Uint32(delta[pos:])))
		end := int(int32(binary.BigEndian.Uint32(delta[pos+4:])))
		n := int(int32(binary.BigEndian.Uint32(delta[pos+8:])))
		switch {
		case start < last:
			return dst, 0, fmt.Errorf("%w: hunk at delta offset %d starts at %d, before the previous hunk's end %d", ErrBadDelta, pos, start, last)
		case end < start:
			return dst, 0, fmt.Errorf("%w: hunk at delta offset %d ends at %d before its start %d", ErrBadDelta, pos, end, start)
		case end > textLen:
			return dst, 0, fmt.Errorf("%w: hunk at delta offset %d ends at %d, past the end of its %d-byte base", ErrBadDelta, pos, end, textLen)
		case n < 0 || n > len(delta)-pos-hunkHeaderSize:
			return dst, 0, fmt.Errorf("%w: hunk at delta offset %d claims %d data bytes, %d remain", ErrBadDelta, pos, n, len(delta)-pos-hunkHeaderSize)
		}
		pos += hunkHeaderSize
		dst = append(dst, hunk{start: start, end: end, data: delta[pos : pos+n : pos+n]})
		pos += n
		newLen += n - (end - start)
		if newLen > MaxTextLen {
			return dst, 0, fmt.Errorf("%w: patched text would exceed %d bytes", ErrBadDelta, MaxTextLen)
		}
		last = end
	}
	return dst, newLen, nil
}

// PatchedSize returns the length of the text delta produces from a text
// of baseLen bytes, validating the delta.
func PatchedSize(baseLen int, delta []byte) (int, error) {
	_, n, err := decodeDelta(nil, delta, baseLen)
	return n, err
}

// Patch applies one delta to base, returning a new slice.
func Patch(base, delta []byte) ([]byte, error) {
	return PatchChain(base, [][]byte{delta})
}

// PatchChain applies deltas in order to base: deltas[0] applies to base,
// deltas[1] to the result, and so on. The result never aliases base or the
// deltas, except that with no deltas base itself is returned.
func PatchChain(base []byte, deltas [][]byte) ([]byte, error) {
	if len(deltas) == 0 {
		return base, nil
	}
	return patchChainInto(nil, base, deltas)
}

// patchChainInto is PatchChain for at least one delta, building the text
// in dst's capacity where it fits (a new slice otherwise). dst must alias
// neither base nor the deltas.
func patchChainInto(dst, base []byte, deltas [][]byte) ([]byte, error) {
	p := getPatcher()
	defer p.put()
	lists := p.lists[:0]
	textLen := len(base)
	for i, d := range deltas {
		l, n, err := decodeDelta(p.take(), d, textLen)
		if err != nil {
			p.give(l)
			for _, l := range lists {
				p.give(l)
			}
			if len(deltas) > 1 {
				err = fmt.Errorf("delta %d of %d: %w", i+1, len(deltas), err)
			}
			return nil, err
		}
		lists, textLen = append(lists, l), n
	}
	p.lists = lists
	folded := p.fold(lists)
	out, err := apply(dst, base, folded, textLen)
	p.give(folded)
	return out, err
}

// patcher holds the hunk lists of folding delta chains, recycled through
// patchers (rebuilding a text allocated one list per delta and one per
// fold step), unless SetPooling turned the pools off. The lists hold
// slices of the deltas: they are cleared before they are kept.
type patcher struct {
	lists [][]hunk // the decoded deltas of the chain being folded
	free  [][]hunk // cleared lists, len 0
}

// Bounds on what a pooled patcher keeps: lists of at most
// maxPooledHunks hunks, at most maxPooledLists of them.
const (
	maxPooledHunks = 1 << 16
	maxPooledLists = 64
)

var patchers = sync.Pool{New: func() any { return new(patcher) }}

func getPatcher() *patcher {
	if noPools.Load() {
		return new(patcher)
	}
	return patchers.Get().(*patcher)
}

func (p *patcher) put() {
	clear(p.lists)
	p.lists = p.lists[:0]
	if noPools.Load() {
		return
	}
	patchers.Put(p)
}

// take returns an empty list, from the free ones if it can.
func (p *patcher) take() []hunk {
	if n := len(p.free); n > 0 {
		l := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return l
	}
	return nil
}

// give keeps l, cleared, for a later take.
func (p *patcher) give(l []hunk) {
	if cap(l) == 0 || cap(l) > maxPooledHunks || len(p.free) >= maxPooledLists || noPools.Load() {
		return
	}
	clear(l)
	p.free = append(p.free, l[:0])
}

// fold combines hunk lists into one equivalent list over the first base.
// The lists are consumed (given back to p); the result is p's to give.
func (p *patcher) fold(lists [][]hunk) []hunk {
	switch len(lists) {
	case 1:
		return lists[0]
	case 2:
		return p.combine(lists[0], lists[1])
	}
	mid := len(lists) / 2
	return p.combine(p.fold(lists[:mid]), p.fold(lists[mid:]))
}

// combine returns one hunk list, over the text a applies to, equivalent
// to applying a and then b. It consumes a (hunks may be split in place)
// and gives a and b back to p.
//
// offset tracks, for the part of a already walked, how far positions in
// a's output (which b's positions refer to) are from positions in a's
// input: outputPos = inputPos + offset.
func (p *patcher) combine(a, b []hunk) []hunk {
	c := slices.Grow(p.take(), len(a)+2*len(b))
	ai, offset := 0, 0
	for _, bh := range b {
		// Keep a's hunks that end before bh starts.
		c, ai, offset = cut(c, a, ai, bh.start, offset, true)
		start := bh.start - offset
		// Drop what bh replaces.
		var post int
		_, ai, post = cut(nil, a, ai, bh.end, offset, false)
		c = append(c, hunk{start: start, end: bh.end - post, data: bh.data})
		offset = post
	}
	c = append(c, a[ai:]...)
	p.give(a)
	p.give(b)
	return c
}

// cut walks a's hunks from ai that begin before output position at,
// appending them to c if keep is set. A hunk straddling at is split: the
// part before at is walked, the rest stays in a[ai], now starting exactly
// at output position at.
func cut(c, a []hunk, ai, at, offset int, keep bool) ([]hunk, int, int) {
	for ; ai < len(a); ai++ {
		h := &a[ai]
		if h.start+offset >= at {
			break
		}
		if h.start+offset+len(h.data) <= at {
			offset += len(h.data) - (h.end - h.start)
			if keep {
				c = append(c, *h)
			}
			continue
		}
		// at falls inside h's new data: split the data at l, and the
		// replaced input range at mid (the input position of at, if any
		// of h's range remains there).
		mid := min(at-offset, h.end)
		l := at - offset - h.start
		offset += h.start + l - mid
		if keep {
			c = append(c, hunk{start: h.start, end: mid, data: h.data[:l:l]})
		}
		h.start, h.data = mid, h.data[l:]
		break
	}
	return c, ai, offset
}

// apply patches base with a sorted hunk list producing outLen bytes.
func apply(dst, base []byte, hunks []hunk, outLen int) ([]byte, error) {
	if outLen < 0 {
		return nil, fmt.Errorf("%w: negative result length %d", ErrBadDelta, outLen)
	}
	out := dst[:0]
	if cap(out) < outLen {
		out = make([]byte, 0, outLen)
	}
	last := 0
	for _, h := range hunks {
		if h.start < last || h.end < h.start || h.end > len(base) {
			// Unreachable for lists built by decodeDelta and combine;
			// kept so a bug here is an error, not a panic or bad text.
			return nil, fmt.Errorf("%w: hunk [%d,%d) invalid after [%d) over %d bytes", ErrBadDelta, h.start, h.end, last, len(base))
		}
		out = append(out, base[last:h.start]...)
		out = append(out, h.data...)
		last = h.end
	}
	out = append(out, base[last:]...)
	if len(out) != outLen {
		return nil, fmt.Errorf("%w: patched text is %d bytes, hunks predict %d", ErrBadDelta, len(out), outLen)
	}
	return out, nil
}
