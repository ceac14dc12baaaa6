package revlog

// Computing deltas: the inverse of patch.go. Diff returns mpatch hunks
// (see patch.go for the format) that turn one text into another.
//
// Mercurial's bdiff works on lines; so does this, with a different
// matcher: after trimming the common prefix and suffix (cut at line
// boundaries), lines that occur exactly once in both remaining texts are
// matched in order (patience diff: the longest increasing run of such
// pairs), and the gaps between matches are diffed the same way,
// recursively. A gap with no unique common line becomes one hunk. The
// output need not match hg's byte for byte: any valid delta is read the
// same by every Mercurial, and real histories (manifests, source files)
// are dominated by the prefix/suffix trim and unique lines.

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"sort"
)

// Diff returns a delta that Patch turns from a into b. The delta is empty
// when a and b are equal.
func Diff(a, b []byte) []byte {
	d := differ{a: a, b: b, seed: maphash.MakeSeed()}
	d.run()
	return d.out
}

type differ struct {
	a, b []byte
	seed maphash.Seed
	out  []byte
	// pending hunk, merged with the next when adjacent
	pStart, pEnd int
	pData        []byte
	pending      bool
	// work counts lines examined; past budget the remaining gaps become
	// whole hunks, so that pathological inputs (a reversed file: one
	// anchor per level of recursion) stay linear-ish instead of quadratic.
	work, budget int
}

// line is a line of a or b: its byte range and hash.
type line struct {
	start, end int
	h          uint64
}

func (d *differ) run() {
	a, b := d.a, d.b
	// Common prefix, cut back to a line start.
	n := min(len(a), len(b))
	p := 0
	for p < n && a[p] == b[p] {
		p++
	}
	if p == len(a) && p == len(b) {
		return
	}
	if p < n {
		if i := bytes.LastIndexByte(a[:p], '\n'); i >= 0 {
			p = i + 1
		} else {
			p = 0
		}
	}
	// Common suffix of what remains, cut forward to a line start.
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	if s > 0 && !(lineStart(a, len(a)-s) && lineStart(b, len(b)-s)) {
		// The suffix begins mid-line: keep whole lines only.
		suf := a[len(a)-s:]
		if i := bytes.IndexByte(suf, '\n'); i >= 0 {
			s -= i + 1
		} else {
			s = 0
		}
	}
	la := d.lines(a, p, len(a)-s)
	lb := d.lines(b, p, len(b)-s)
	d.budget = 32*(len(la)+len(lb)) + 1<<16
	d.diffLines(la, lb, p, len(a)-s, p, len(b)-s)
	d.flush()
}

// lineStart reports whether text[i:] begins a line.
func lineStart(text []byte, i int) bool { return i == 0 || text[i-1] == '\n' }

// lines splits text[start:end] into lines ending in '\n' (the last may
// lack one).
func (d *differ) lines(text []byte, start, end int) []line {
	var ls []line
	if end > start {
		ls = make([]line, 0, bytes.Count(text[start:end], []byte{'\n'})+1)
	}
	for pos := start; pos < end; {
		e := end
		if i := bytes.IndexByte(text[pos:end], '\n'); i >= 0 {
			e = pos + i + 1
		}
		ls = append(ls, line{start: pos, end: e, h: maphash.Bytes(d.seed, text[pos:e])})
		pos = e
	}
	return ls
}

// diffLines emits hunks turning a[aStart:aEnd] (lines la) into
// b[bStart:bEnd] (lines lb).
func (d *differ) diffLines(la, lb []line, aStart, aEnd, bStart, bEnd int) {
	// Trim equal lines at both ends.
	for len(la) > 0 && len(lb) > 0 && d.same(la[0], lb[0]) {
		aStart, bStart = la[0].end, lb[0].end
		la, lb = la[1:], lb[1:]
	}
	for len(la) > 0 && len(lb) > 0 && d.same(la[len(la)-1], lb[len(lb)-1]) {
		aEnd, bEnd = la[len(la)-1].start, lb[len(lb)-1].start
		la, lb = la[:len(la)-1], lb[:len(lb)-1]
	}
	d.work += len(la) + len(lb)
	if len(la) == 0 || len(lb) == 0 || d.work > d.budget {
		d.emit(aStart, aEnd, d.b[bStart:bEnd])
		return
	}
	anchors := d.uniqueMatches(la, lb)
	if len(anchors) == 0 {
		d.emit(aStart, aEnd, d.b[bStart:bEnd])
		return
	}
	ai, bi := 0, 0
	as, bs := aStart, bStart
	for _, m := range anchors {
		ae, be := la[m.i].start, lb[m.j].start
		d.diffLines(la[ai:m.i], lb[bi:m.j], as, ae, bs, be)
		ai, bi = m.i+1, m.j+1
		as, bs = la[m.i].end, lb[m.j].end
	}
	d.diffLines(la[ai:], lb[bi:], as, aEnd, bs, bEnd)
}

func (d *differ) same(x, y line) bool {
	return x.h == y.h && bytes.Equal(d.a[x.start:x.end], d.b[y.start:y.end])
}

type match struct{ i, j int }

// uniqueMatches pairs lines occurring exactly once in la and once in lb,
// keeping the longest subsequence increasing in both (patience sorting).
func (d *differ) uniqueMatches(la, lb []line) []match {
	type count struct {
		na, nb int
		ia, ib int
	}
	counts := make(map[uint64]*count, len(la))
	for i, l := range la {
		c := counts[l.h]
		if c == nil {
			c = &count{}
			counts[l.h] = c
		}
		c.na++
		c.ia = i
	}
	for j, l := range lb {
		if c := counts[l.h]; c != nil {
			c.nb++
			c.ib = j
		}
	}
	var pairs []match
	for _, c := range counts {
		if c.na == 1 && c.nb == 1 && d.same(la[c.ia], lb[c.ib]) {
			pairs = append(pairs, match{c.ia, c.ib})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	sort.Slice(pairs, func(x, y int) bool { return pairs[x].i < pairs[y].i })
	// Longest increasing subsequence in j.
	tails := make([]int, 0, len(pairs)) // index into pairs of the tail of each length
	prev := make([]int, len(pairs))
	for k, p := range pairs {
		pos := sort.Search(len(tails), func(t int) bool { return pairs[tails[t]].j >= p.j })
		if pos > 0 {
			prev[k] = tails[pos-1]
		} else {
			prev[k] = -1
		}
		if pos == len(tails) {
			tails = append(tails, k)
		} else {
			tails[pos] = k
		}
	}
	out := make([]match, len(tails))
	for k, t := len(tails)-1, tails[len(tails)-1]; k >= 0; k, t = k-1, prev[t] {
		out[k] = pairs[t]
	}
	return out
}

// emit records that a[start:end] becomes data, merging with the pending
// hunk when they touch.
func (d *differ) emit(start, end int, data []byte) {
	if start == end && len(data) == 0 {
		return
	}
	if d.pending && d.pEnd == start {
		d.pEnd = end
		d.pData = append(d.pData, data...)
		return
	}
	d.flush()
	d.pStart, d.pEnd, d.pending = start, end, true
	d.pData = append(d.pData[:0], data...)
}

func (d *differ) flush() {
	if !d.pending {
		return
	}
	var h [hunkHeaderSize]byte
	binary.BigEndian.PutUint32(h[0:], uint32(d.pStart))
	binary.BigEndian.PutUint32(h[4:], uint32(d.pEnd))
	binary.BigEndian.PutUint32(h[8:], uint32(len(d.pData)))
	d.out = append(d.out, h[:]...)
	d.out = append(d.out, d.pData...)
	d.pending = false
}
