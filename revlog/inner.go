package revlog

// Rebuilding revision texts, for reading and for writing alike. Revlog
// and Writer each hold an inner: the index entries, the format flags,
// where chunks are read from, and the text cache. Every text either
// needs (a revision read, the delta base of an incoming revision, the
// text the writer diffs a new one against) is rebuilt and checked here,
// as Mercurial's Rust hg-core has one inner revlog that reading and
// writing go through (rust/hg-core/src/revlog/inner_revlog.rs).
//
// Keep in sync with mercurial/revlog.py _revisiondata, _rawtext and
// checkhash, and revlogutils/flagutil.py _processflagsfunc.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
)

// chunkSource reads stored chunks: a Revlog's files, or a Writer's files
// and the pending bytes not yet written to them.
type chunkSource interface {
	// readChunks returns the stored chunks of revs (ascending). stable
	// reports that they are slices of memory that never changes (an
	// inline index held whole), so a text aliasing one may be kept as
	// is; otherwise it is copied first.
	readChunks(revs []int) (chunks [][]byte, stable bool, err error)
}

// inner is the state texts are rebuilt from. Its owner fills in the
// fields; a Writer appends entries and may turn inline off (a split).
type inner struct {
	name, dataName       string     // index file, data file (split revlogs)
	entries              []rawEntry // checked by checkEntry
	inline, generalDelta bool
	src                  chunkSource

	// mu guards closed and cache, and whatever the owner keeps that
	// concurrent readers share (a Revlog's data file and node map).
	mu     sync.Mutex
	closed bool
	cache  textCache
}

func (in *inner) init(name, dataName string, inline, generalDelta bool, src chunkSource) {
	in.name, in.dataName = name, dataName
	in.inline, in.generalDelta = inline, generalDelta
	in.src = src
	in.cache = textCache{maxItems: defaultCacheItems, maxBytes: defaultCacheBytes}
}

// node returns rev's node; NullNode for NullRev.
func (in *inner) node(rev int) Node {
	if rev == NullRev {
		return NullNode
	}
	return in.entries[rev].node
}

// deltaParent is revlog.py deltaparent: the revision rev's chunk is a
// delta against, or NullRev for a full snapshot (or, with generaldelta,
// a delta against the empty text). deltaParent(NullRev) is NullRev.
func (in *inner) deltaParent(rev int) int {
	if rev == NullRev {
		return NullRev
	}
	base := int(in.entries[rev].base)
	switch {
	case base == rev:
		return NullRev
	case in.generalDelta:
		return base
	default:
		return rev - 1
	}
}

// span locates rev's stored chunk in its file: the .i when inline (after
// the entries before it), else the .d.
func (in *inner) span(rev int) (pos, n int64) {
	e := &in.entries[rev]
	pos, n = int64(e.offsetFlags>>16), int64(e.compLen)
	if in.inline {
		pos += int64(rev+1) * EntrySize
	}
	return pos, n
}

// chunkFile names the file chunks are stored in.
func (in *inner) chunkFile() string {
	if in.inline {
		return in.name
	}
	return in.dataName
}

func (in *inner) checkRev(rev int) error {
	if rev < 0 || rev >= len(in.entries) {
		return fmt.Errorf("%w: revision %d in %s (%d revisions)", ErrNotFound, rev, in.name, len(in.entries))
	}
	return nil
}

func (in *inner) errClosed() error {
	return fmt.Errorf("revlog %s: %w", in.name, fs.ErrClosed)
}

func (in *inner) corrupt(rev int, off int64, format string, args ...any) error {
	return &CorruptError{File: in.name, Rev: rev, Offset: off, Err: fmt.Errorf(format, args...)}
}

// chunkLimit bounds rev's decompressed chunk. A full snapshot is exactly
// its raw length. A delta's size is not recorded; real deltas stay far
// below the generous bound used, which only stops decompression bombs.
func (in *inner) chunkLimit(rev int) int64 {
	e := &in.entries[rev]
	if int(e.base) == rev {
		if e.rawLen >= 0 {
			return int64(e.rawLen)
		}
		return MaxTextLen
	}
	var parentLen int64
	if dp := in.deltaParent(rev); dp >= 0 {
		parentLen = int64(in.entries[dp].rawLen)
	}
	if e.rawLen < 0 || parentLen < 0 {
		return MaxTextLen
	}
	return min(16*(int64(e.rawLen)+parentLen)+64<<10, MaxTextLen)
}

// decompress decodes rev's stored chunk within chunkLimit.
func (in *inner) decompress(rev int, chunk []byte) ([]byte, error) {
	return in.decompressAppend(nil, rev, chunk)
}

// decompressAppend is decompress decoding into dst's spare capacity
// where it fits (decompressAppend in compress.go).
func (in *inner) decompressAppend(dst []byte, rev int, chunk []byte) ([]byte, error) {
	hint := int64(-1)
	if int(in.entries[rev].base) == rev {
		hint = int64(in.entries[rev].rawLen)
	}
	out, err := decompressAppend(dst, chunk, in.chunkLimit(rev), hint)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, fmt.Errorf("%s rev %d: %w", in.name, rev, err)
		}
		pos, _ := in.span(rev)
		return nil, &CorruptError{File: in.chunkFile(), Rev: rev, Offset: pos, Err: fmt.Errorf("revlog decompress error: %w", err)}
	}
	return out, nil
}

// rawChunk returns rev's stored chunk, decompressed.
func (in *inner) rawChunk(rev int) ([]byte, error) {
	chunks, err := in.storedChunks([]int{rev})
	if err != nil {
		return nil, err
	}
	return in.decompress(rev, chunks[0])
}

// storedChunks checks revs and returns their stored chunks.
func (in *inner) storedChunks(revs []int) ([][]byte, error) {
	for _, rev := range revs {
		if err := in.checkRev(rev); err != nil {
			return nil, err
		}
	}
	in.mu.Lock()
	closed := in.closed
	in.mu.Unlock()
	if closed {
		return nil, in.errClosed()
	}
	chunks, _, err := in.src.readChunks(revs)
	return chunks, err
}

// revision rebuilds rev's raw text: it walks the delta chain back to a
// full snapshot, the empty text or a text in the cache, reads the
// chunks in one readChunks call, folds the deltas and applies them once.
// With check, the text is checked as revlog.py _revisiondata does for a
// raw read (flags, then the recorded length, then the node) and cached;
// without, it is returned as stored. NullRev gives the empty text. The
// result may be shared with the cache and must not be modified.
func (in *inner) revision(rev int, check bool) ([]byte, error) {
	text, _, err := in.revisionChunk(rev, check, false)
	return text, err
}

// revisionChunk is revision; withChunk also returns rev's own stored
// chunk, decompressed (as rawChunk), which rebuilding the text
// decompressed anyway (read again only when the text was cached).
func (in *inner) revisionChunk(rev int, check, withChunk bool) (text, chunk []byte, err error) {
	if rev == NullRev {
		return []byte{}, nil, nil
	}
	if err := in.checkRev(rev); err != nil {
		return nil, nil, err
	}
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil, nil, in.errClosed()
	}
	if t, ok := in.cache.get(rev); ok {
		in.mu.Unlock()
		if withChunk {
			if chunk, err = in.rawChunk(rev); err != nil {
				return nil, nil, err
			}
		}
		return t, chunk, nil
	}
	chain, base, haveBase := in.chain(rev, &in.cache)
	in.mu.Unlock()

	stored, stable, err := in.src.readChunks(chain)
	if err != nil {
		return nil, nil, err
	}
	// With deltas to apply, the chain's chunks are decompressed into one
	// pooled buffer (chainBuffers), as the text is built afresh by
	// PatchChain and aliases none of them. A lone snapshot is the text
	// itself, in a buffer of its own.
	var scratch *chainBuffer
	if len(chain) > 1 || haveBase {
		scratch = getChainBuffer()
		defer putChainBuffer(scratch)
	}
	base, deltas, chunk, err := in.unpack(chain, stored, scratch, base, haveBase)
	if err != nil {
		return nil, nil, err
	}
	text, err = PatchChain(base, deltas)
	if err != nil {
		return nil, nil, in.corrupt(rev, -1, "applying delta chain %v: %w", chain, err)
	}
	if scratch != nil && withChunk {
		chunk = bytes.Clone(chunk) // the scratch buffer is reused
	}
	if len(deltas) == 0 && !stable && storedAsIs(stored[0]) {
		// The text aliases a read buffer (which may span neighbouring
		// chunks) or a writer's pending bytes: keep a copy of it only.
		text = bytes.Clone(text)
		chunk = text
	}
	if !check {
		return text, chunk, nil
	}
	if err := in.checkText(rev, text); err != nil {
		return nil, nil, err
	}
	in.remember(rev, text)
	return text, chunk, nil
}

// chain returns the revisions whose chunks rebuild rev, oldest first:
// back along the delta parents to a full snapshot, or to a revision whose
// text cache holds (base, haveBase), or to a generaldelta delta against
// the empty text (base empty, haveBase).
func (in *inner) chain(rev int, cache *textCache) (chain []int, base []byte, haveBase bool) {
	for cur := rev; ; {
		if cur != rev {
			if t, ok := cache.get(cur); ok {
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
	slices.Reverse(chain)
	return chain, base, haveBase
}

// unpack decompresses the stored chunks of chain (as inner.chain gave
// it, with base and haveBase), into scratch when it is not nil, else
// each into a buffer of its own, and splits them into the text the
// deltas apply to and those deltas; last is the chain's last chunk,
// decompressed (the revision's own).
func (in *inner) unpack(chain []int, stored [][]byte, scratch *chainBuffer, base []byte, haveBase bool) (_ []byte, deltas [][]byte, last []byte, err error) {
	deltas = make([][]byte, 0, len(chain))
	for i, c := range chain {
		var d []byte
		if scratch != nil {
			d, err = scratch.decompress(in, c, stored[i])
		} else {
			d, err = in.decompress(c, stored[i])
		}
		if err != nil {
			return nil, nil, nil, err
		}
		last = d
		if i == 0 && !haveBase {
			base = d
			continue
		}
		deltas = append(deltas, d)
	}
	return base, deltas, last, nil
}

// chainBuffer is the buffer one delta chain's chunks are decompressed
// into, one after another, instead of one allocation per chunk: on the
// real-history corpus a file's checkout decompresses a chain of tens of
// deltas for one text. Recycled through chainBuffers, unless SetPooling
// turned the pools off.
type chainBuffer struct{ b []byte }

// maxPooledChainBuffer is the largest buffer put back in the pool, so
// that one huge chain does not keep its memory after it is rebuilt.
const maxPooledChainBuffer = 1 << 20

var chainBuffers = sync.Pool{New: func() any { return new(chainBuffer) }}

// noPools turns off the pooled delta-chain buffers and hunk lists.
var noPools atomic.Bool

// SetPooling switches the pools of rebuilding texts on or off for the
// process (HGFS_TUNE's revlogpool): the buffer one delta chain's chunks
// are decompressed into (chainBuffer) and the hunk lists folding the
// chain's deltas (patcher). Off, each chunk is decompressed into a
// buffer of its own and each hunk list allocated, as before the pools.
// A returned text never aliases a pooled buffer either way.
func SetPooling(on bool) { noPools.Store(!on) }

func getChainBuffer() *chainBuffer {
	if noPools.Load() {
		return &chainBuffer{}
	}
	return chainBuffers.Get().(*chainBuffer)
}

func putChainBuffer(c *chainBuffer) {
	if noPools.Load() || cap(c.b) > maxPooledChainBuffer {
		return
	}
	c.b = c.b[:0]
	chainBuffers.Put(c)
}

// decompress decodes rev's chunk after the ones already in c. A chunk
// that is not compressed is returned as it is; one that did not fit the
// spare capacity moves c to the new, larger array (the chunks already
// decoded stay valid in the old one).
func (c *chainBuffer) decompress(in *inner, rev int, chunk []byte) ([]byte, error) {
	spare := c.b[len(c.b):]
	d, err := in.decompressAppend(spare, rev, chunk)
	if err != nil || storedAsIs(chunk) || len(d) == 0 {
		return d, err
	}
	if cap(spare) > 0 && &spare[:1][0] == &d[0] {
		c.b = c.b[:len(c.b)+len(d)]
	} else {
		c.b = d
	}
	return d[:len(d):len(d)], nil
}

// remember caches a text known to match rev: one just checked, or one a
// Writer just added.
func (in *inner) remember(rev int, text []byte) {
	in.mu.Lock()
	if !in.closed {
		in.cache.add(rev, text)
	}
	in.mu.Unlock()
}

// forget empties the text cache.
func (in *inner) forget() {
	in.mu.Lock()
	in.cache.clear()
	in.mu.Unlock()
}

// markClosed makes later reads fail with fs.ErrClosed and drops the
// cache.
func (in *inner) markClosed() {
	in.mu.Lock()
	in.closed = true
	in.cache.clear()
	in.mu.Unlock()
}

// storedAsIs reports whether a chunk's decompressed form aliases it.
func storedAsIs(chunk []byte) bool {
	return len(chunk) > 0 && (chunk[0] == 0 || chunk[0] == 'u')
}

// checkText checks a rebuilt text against rev's entry: its flags (as
// flagutil.processflagsraw), its recorded length, then its node (as
// revlog.py checkhash).
func (in *inner) checkText(rev int, text []byte) error {
	e := &in.entries[rev]
	flags := uint16(e.offsetFlags)
	if err := checkFlags(in.name, rev, flags); err != nil {
		return err
	}
	if e.rawLen >= 0 && int64(len(text)) != int64(e.rawLen) {
		return in.corrupt(rev, -1, "unpacked size is %d, %d expected", len(text), e.rawLen)
	}
	return checkNode(in.name, rev, e.node, in.node(int(e.p1)), in.node(int(e.p2)), flags, true, text)
}

// checkNode is revlog.py checkhash: text must hash to node with parents
// p1 and p2, whatever the flags. A text that does not is a
// *CorruptError, unless the revision is flagged censored, the revlog
// censorable and the text a censor tombstone: then an error wrapping
// ErrCensored (reading fails with it; a censorable Writer accepts the
// tombstone). rev names the revision in errors (for one being added:
// the revision it would be).
func checkNode(name string, rev int, node, p1, p2 Node, flags uint16, censorable bool, text []byte) error {
	if HashRevision(text, p1, p2) == node {
		return nil
	}
	if censorable && flags&FlagCensored != 0 && isCensoredText(text) {
		return fmt.Errorf("%w: %s rev %d (node %s)", ErrCensored, name, rev, node.Short())
	}
	return &CorruptError{File: name, Rev: rev, Offset: -1, Err: &IntegrityError{File: name, Rev: rev, Node: node}}
}

// checkFlags refuses the revision flags hg refuses without extensions,
// as flagutil._processflagsfunc does: unknown flags, then, in
// REVIDX_FLAGS_ORDER, each flag whose processor an extension provides
// (narrow's ellipsis, lfs's extstored). With such a processor hg would
// not check the raw text against the node; this package has none, so no
// flag exempts a text from its hash. rev names the revision in errors.
func checkFlags(name string, rev int, flags uint16) error {
	if unknown := flags &^ KnownRevisionFlags; unknown != 0 {
		return fmt.Errorf("%w: %s rev %d: incompatible revision flag '%#x'", ErrUnsupported, name, rev, unknown)
	}
	for _, f := range [...]uint16{FlagEllipsis, FlagExtStored} {
		if flags&f != 0 {
			return &FlagError{File: name, Rev: rev, Flag: f}
		}
	}
	return nil
}

// isCensoredText reports whether text carries censor metadata, as
// storageutil.iscensoredtext does.
func isCensoredText(text []byte) bool {
	meta, _, err := ParseFileMeta(text)
	if err != nil {
		return false
	}
	_, ok := meta["censored"]
	return ok
}

// maxChunkGap is the largest gap between two chunks read with one ReadAt;
// maxChunkRead bounds the bytes one ReadAt takes.
const (
	maxChunkGap  = 64 << 10
	maxChunkRead = 64 << 20
)

// readBatched reads the chunks of revs (ascending, their spans within
// the first size bytes of f) into out, neighbouring chunks with one
// ReadAt when the gap between them is small. Each chunk slices its read
// buffer. file names f in errors.
func (in *inner) readBatched(f io.ReaderAt, size int64, file string, revs []int, out [][]byte) error {
	for i := 0; i < len(revs); {
		start, n := in.span(revs[i])
		end := start + n
		if end > size {
			return &CorruptError{File: file, Rev: revs[i], Offset: start,
				Err: fmt.Errorf("chunk of %d bytes runs past the end of the file (%d bytes)", n, size)}
		}
		j := i + 1
		for ; j < len(revs); j++ {
			s, m := in.span(revs[j])
			if s < end || s-end > maxChunkGap || s+m > size || s+m-start > maxChunkRead {
				break
			}
			end = s + m
		}
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return &CorruptError{File: file, Rev: revs[i], Offset: start, Err: fmt.Errorf("reading %d bytes: %w", len(buf), err)}
		}
		for k := i; k < j; k++ {
			s, m := in.span(revs[k])
			out[k] = buf[s-start : s-start+m : s-start+m]
		}
		i = j
	}
	return nil
}
