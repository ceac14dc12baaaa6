package revlog

// Choosing how a new revision is stored: a delta against some earlier
// revision, or a full snapshot. Keep in sync with
// mercurial/revlogutils/deltas.py (deltacomputer.finddeltainfo,
// _candidategroups, _refinedgroups, _rawgroups, isgooddeltainfo), with
// hg 6.3's default settings: lazydelta and lazydeltabase on (an incoming
// delta is reused when its base is acceptable), deltabothparents on,
// experimental.maxdeltachainspan unset.
//
// Candidates are tried in groups, the first group holding an acceptable
// delta wins (the smallest acceptable delta of the group):
//
//  1. the incoming delta's base (generaldelta only);
//  2. both parents (generaldelta only);
//  3. sparse-revlog: the snapshots in the parents' delta chains, deepest
//     level first, as bases for a new intermediate snapshot;
//  4. without sparse-revlog: the previous revision;
//
// then, for sparse-revlog, a snapshot base is refined down its own chain.
// The changelog stores every revision whole (changelog.py sets
// _storedeltachains = False). Without generaldelta the only candidate is the previous revision (the
// format cannot name another base). When nothing qualifies the revision
// is stored as a full snapshot.
//
// Not done (hg's search is wider, the result only less compact, never
// invalid): sibling and "unrelated" snapshots in step 3, refining a
// snapshot up to its children, the manifest's upperboundcomp pruning.

import (
	"bytes"
	"fmt"
	"slices"
)

// limitDelta2Text bounds a chain's total delta size relative to the text.
// Keep in sync with deltas.py LIMIT_DELTA2TEXT.
const limitDelta2Text = 2

// limitBase2Text: sparse revlogs skip bases this many times smaller than
// the text. Keep in sync with deltas.py LIMIT_BASE2TEXT.
const limitBase2Text = 500

// rawTextChangingFlags: revisions whose raw text is not their content
// are stored whole and are not delta bases. Keep in sync with
// revlogutils/constants.py REVIDX_RAWTEXT_CHANGING_FLAGS.
const rawTextChangingFlags = FlagCensored | FlagExtStored

// deltaInfo is one way to store a revision (deltas.py _deltainfo).
type deltaInfo struct {
	base      int    // the entry's base field (delta base, chain base, or the rev itself)
	against   int    // the revision the delta applies to; NullRev for a snapshot
	prefix    string // "u" or ""
	body      []byte
	length    int64 // stored chunk length
	dist      int64 // bytes read to rebuild the chain
	chainLen  int
	chainSize int64
	snapDepth int // -1: not a snapshot (hg's None)
}

// findDelta picks the stored form of ri (finddeltainfo).
func (w *Writer) findDelta(ri *revInfo) (*deltaInfo, error) {
	rev := len(w.entries)
	textLen := int64(len(ri.text))
	if textLen == 0 || ri.flags&rawTextChangingFlags != 0 || rev == 0 || w.opt.Changelog {
		return w.fullSnapshot(ri, rev)
	}
	s := deltaSearch{w: w, ri: ri, textLen: textLen, tested: map[int]bool{NullRev: true}}
	hasCache := ri.cacheDelta != nil
	parents := make([]int, 0, 2)
	for _, p := range []int{ri.p1r, ri.p2r} {
		if p != NullRev {
			parents = append(parents, p)
		}
	}
	done := func() bool { return s.best != nil || s.err != nil }
	if hasCache && w.generalDelta {
		// lazydeltabase: trust the sender's choice when it is good.
		if s.try(ri.cacheBase); done() {
			return s.result(rev)
		}
	}
	if w.generalDelta && len(parents) > 0 {
		s.try(parents...)
	}
	if !done() && w.sparse && len(parents) > 0 {
		for _, snaps := range w.parentSnapshots(parents) {
			if s.try(snaps...); done() {
				break
			}
		}
	}
	if !done() && !w.sparse {
		s.try(rev - 1)
	}
	if s.err == nil && s.best != nil && w.sparse {
		// Refine a snapshot base down its chain while that helps.
		good := s.best.against
		for good != ri.p1r && good != ri.p2r && w.isSnapshot(good) {
			base := w.deltaParent(good)
			if base == NullRev {
				break
			}
			if s.try(base); s.err != nil || s.best.against == good {
				break
			}
			good = s.best.against
		}
	}
	return s.result(rev)
}

// parentSnapshots returns the snapshots found at the start of the
// parents' delta chains, grouped by level, deepest level first
// (deltas.py _rawgroups, sparse part, without siblings).
func (w *Writer) parentSnapshots(parents []int) [][]int {
	var levels []map[int]bool
	for _, p := range parents {
		chain := w.deltaChain(p)
		for idx, r := range chain {
			if !w.isSnapshot(r) {
				break
			}
			for len(levels) <= idx {
				levels = append(levels, map[int]bool{})
			}
			levels[idx][r] = true
		}
	}
	out := make([][]int, 0, len(levels))
	for i := len(levels) - 1; i >= 0; i-- {
		var revs []int
		for r := range levels[i] {
			revs = append(revs, r)
		}
		slices.Sort(revs)
		out = append(out, revs)
	}
	return out
}

// deltaChain returns the revisions whose chunks rebuild rev, base first.
func (w *Writer) deltaChain(rev int) []int {
	var chain []int
	for cur := rev; cur != NullRev; cur = w.deltaParent(cur) {
		chain = append(chain, cur)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// chainBase is revlog.py chainbase (NullRev for a generaldelta chain
// starting with a delta against the empty text).
func (w *Writer) chainBase(rev int) int {
	for rev != NullRev {
		base := int(w.entries[rev].base)
		if base == rev {
			return rev
		}
		if w.generalDelta {
			rev = base
		} else {
			rev--
		}
	}
	return NullRev
}

// isSnapshot is revlog.py issnapshot.
func (w *Writer) isSnapshot(rev int) bool {
	if !w.sparse {
		return w.deltaParent(rev) == NullRev
	}
	if rev == NullRev {
		return true
	}
	// Iterative over the base chain, memoised.
	var path []int
	result := false
	for cur := rev; ; {
		if cur == NullRev {
			result = true
			break
		}
		if m := w.snap[cur]; m != 0 {
			result = m == 1
			break
		}
		e := &w.entries[cur]
		base := int(e.base)
		if base == cur || base == NullRev {
			path = append(path, cur)
			result = true
			break
		}
		p1, p2 := w.skipEmpty(int(e.p1)), w.skipEmpty(int(e.p2))
		path = append(path, cur)
		if base == p1 || base == p2 {
			result = false
			break
		}
		cur = base
	}
	m := int8(2)
	if result {
		m = 1
	}
	for _, r := range path {
		w.snap[r] = m
	}
	return result
}

// skipEmpty follows empty deltas down to the revision they repeat.
func (w *Writer) skipEmpty(p int) int {
	for p != NullRev && w.length(p) == 0 {
		b := w.deltaParent(p)
		if b == p {
			break
		}
		p = b
	}
	return p
}

// deltaSearch holds the state of one finddeltainfo run.
type deltaSearch struct {
	w       *Writer
	ri      *revInfo
	textLen int64
	tested  map[int]bool
	best    *deltaInfo
	err     error
}

// try evaluates a group of candidate bases and keeps the smallest
// acceptable delta, the current best included (as finddeltainfo does).
func (s *deltaSearch) try(revs ...int) {
	w := s.w
	limit := s.textLen * limitDelta2Text
	for _, rev := range revs {
		if s.err != nil {
			return
		}
		for w.generalDelta && rev != NullRev && !s.tested[rev] && w.length(rev) == 0 {
			s.tested[rev] = true
			rev = w.deltaParent(rev)
		}
		if rev == NullRev || s.tested[rev] || rev >= len(w.entries) {
			continue
		}
		s.tested[rev] = true
		switch {
		case limit < w.length(rev),
			w.sparse && w.rawSize(rev) < s.textLen/limitBase2Text,
			w.flags(rev)&rawTextChangingFlags != 0,
			w.maxChain > 0 && int(w.chainLen[rev]) >= w.maxChain,
			limit < w.chainSize[rev]:
			continue
		}
		di, err := w.buildDelta(s.ri, rev)
		if err != nil {
			s.err = err
			return
		}
		if w.goodDelta(di, s.textLen) && (s.best == nil || di.length < s.best.length) {
			s.best = di
		}
	}
}

func (s *deltaSearch) result(rev int) (*deltaInfo, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.best != nil {
		return s.best, nil
	}
	return s.w.fullSnapshot(s.ri, rev)
}

// buildDelta computes the delta of ri against base (_builddeltainfo).
func (w *Writer) buildDelta(ri *revInfo, base int) (*deltaInfo, error) {
	chainBase := w.chainBase(base)
	deltaBase := chainBase
	if w.generalDelta {
		deltaBase = base
	}
	snapDepth := -1
	if w.sparse && deltaBase != ri.p1r && deltaBase != ri.p2r && w.isSnapshot(deltaBase) {
		snapDepth = len(w.deltaChain(deltaBase))
	}
	var delta []byte
	if ri.cacheDelta != nil {
		cur := ri.cacheBase
		for cur != NullRev && cur != base && w.length(cur) == 0 {
			cur = w.deltaParent(cur)
		}
		if cur == base {
			delta = ri.cacheDelta
		}
	}
	if delta == nil {
		if w.flags(base)&FlagCensored != 0 {
			// A delta against a censored base replaces it whole, so it
			// applies whatever the tombstone.
			delta = append(replaceHeader(int(w.rawSize(base)), len(ri.text)), ri.text...)
		} else {
			ptext, err := w.Revision(base)
			if err != nil {
				return nil, fmt.Errorf("revlog %s: reading delta base rev %d: %w", w.name, base, err)
			}
			delta = Diff(ptext, ri.text)
		}
	}
	prefix, body, err := w.comp.compress(delta)
	if err != nil {
		return nil, fmt.Errorf("revlog %s: %w", w.name, err)
	}
	if len(prefix) == 0 && len(body) > 0 && len(delta) > 0 && &body[0] != &delta[0] {
		body = bytes.Clone(body) // the compressor's scratch buffer
	}
	length := int64(len(prefix) + len(body))
	var chainStart int64
	if chainBase != NullRev {
		chainStart = int64(w.entries[chainBase].offsetFlags >> 16)
	}
	return &deltaInfo{
		base:      deltaBase,
		against:   base,
		prefix:    prefix,
		body:      body,
		length:    length,
		dist:      length + w.dataEnd(len(w.entries)) - chainStart,
		chainLen:  int(w.chainLen[base]) + 1,
		chainSize: w.chainSize[base] + length,
		snapDepth: snapDepth,
	}, nil
}

// goodDelta is deltas.py isgooddeltainfo.
func (w *Writer) goodDelta(di *deltaInfo, textLen int64) bool {
	switch {
	case !w.sparse && textLen*4 < di.dist:
		return false // read span (maxdeltachainspan unset: 4 x text)
	case textLen < di.length:
		return false
	case textLen*limitDelta2Text < di.chainSize:
		return false
	case w.maxChain > 0 && w.maxChain < di.chainLen:
		return false
	case di.snapDepth >= 0 && di.snapDepth < 63 && textLen>>di.snapDepth < di.length,
		di.snapDepth >= 63:
		return false
	case di.snapDepth > 0 && w.length(di.base) < di.length:
		return false
	}
	return true
}

// fullSnapshot stores ri's text whole (_fullsnapshotinfo).
func (w *Writer) fullSnapshot(ri *revInfo, rev int) (*deltaInfo, error) {
	prefix, body, err := w.comp.compress(ri.text)
	if err != nil {
		return nil, fmt.Errorf("revlog %s: %w", w.name, err)
	}
	if len(prefix) == 0 && len(body) > 0 && &body[0] != &ri.text[0] {
		body = bytes.Clone(body)
	}
	n := int64(len(prefix) + len(body))
	return &deltaInfo{base: rev, against: NullRev, prefix: prefix, body: body,
		length: n, dist: n, chainLen: 1, chainSize: n, snapDepth: 0}, nil
}
