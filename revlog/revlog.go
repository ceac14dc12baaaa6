package revlog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
)

// Revlog is an open revlog: its index in memory and, for a split revlog,
// its data file opened on first use. It is safe for concurrent use.
type Revlog struct {
	fsys      fs.FS // nil for FromBytes
	name      string
	dataName  string
	index     []byte     // the whole .i file when inline (it holds the chunks), else nil
	entries   []rawEntry // checked by checkEntry
	inlinePos []int64    // inline only: position of each rev's chunk in index
	hdr       header

	mu       sync.Mutex // guards everything below
	closed   bool
	data     io.ReaderAt // .d contents (split revlogs), nil until opened
	dataSize int64
	dataFile fs.File // to close, when data reads it in place
	nodes    map[Node]int
	cache    textCache
}

// Open opens the revlog whose index is name in fsys (rooted at the store
// directory), reading the index with one read. The data file of a split
// revlog is opened when a chunk is first needed; if it implements
// io.ReaderAt (as *os.File does) it is read in place, else it is read
// whole into memory.
func Open(fsys fs.FS, name string) (*Revlog, error) {
	return OpenWithData(fsys, name, "")
}

// OpenWithData is Open with the data file's name given: stores with
// hashed names ("dh/...") encode the .d name with its own digest, so it
// cannot be derived from the index name (Store.Encode of the logical .d
// name gives it). An empty data name is derived as Open does.
func OpenWithData(fsys fs.FS, name, data string) (*Revlog, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("revlog: %w", err)
	}
	return OpenWithIndex(fsys, name, data, b)
}

// OpenWithIndex is OpenWithData with the index's contents already read
// (a caller reading many indexes at once); the revlog keeps index.
func OpenWithIndex(fsys fs.FS, name, data string, index []byte) (*Revlog, error) {
	r, err := newRevlog(name, index)
	if err != nil {
		return nil, err
	}
	if data != "" {
		r.dataName = data
	}
	r.fsys = fsys
	return r, nil
}

// IndexInline reports whether an index's header says its revision data
// is inline (no .d file); an index too short for a header says no.
func IndexInline(index []byte) bool {
	return len(index) >= 4 && binary.BigEndian.Uint32(index)&FlagInlineData != 0
}

// FromBytes makes a revlog from in-memory index and data (.d) contents;
// data is ignored for an inline revlog. name is used in errors.
func FromBytes(name string, index, data []byte) (*Revlog, error) {
	r, err := newRevlog(name, index)
	if err != nil {
		return nil, err
	}
	if !r.hdr.inline {
		r.data = bytes.NewReader(data)
		r.dataSize = int64(len(data))
	}
	return r, nil
}

func newRevlog(name string, index []byte) (*Revlog, error) {
	hdr, err := parseHeader(name, index)
	if err != nil {
		return nil, err
	}
	r := &Revlog{
		name:     name,
		dataName: strings.TrimSuffix(name, ".i") + ".d",
		index:    index,
		hdr:      hdr,
		cache:    textCache{maxItems: defaultCacheItems, maxBytes: defaultCacheBytes},
	}
	r.entries, r.inlinePos, err = parseIndex(index, hdr.inline)
	if err != nil {
		return nil, &CorruptError{File: name, Rev: -1, Offset: -1, Err: err}
	}
	for i := range r.entries {
		if err := checkEntry(&r.entries[i], i, hdr.generalDelta); err != nil {
			return nil, &CorruptError{File: name, Rev: i, Offset: r.entryOffset(i), Err: err}
		}
	}
	if !hdr.inline {
		r.index = nil // decoded into entries; keep one copy only
	}
	return r, nil
}

// entryOffset is the position of rev's index entry in the .i file.
func (r *Revlog) entryOffset(rev int) int64 {
	if r.inlinePos != nil {
		return r.inlinePos[rev] - EntrySize
	}
	return int64(rev) * EntrySize
}

// Close releases the data file. Reads after Close fail with fs.ErrClosed.
func (r *Revlog) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.cache.clear()
	r.data = nil
	if r.dataFile != nil {
		err := r.dataFile.Close()
		r.dataFile = nil
		return err
	}
	return nil
}

// Name returns the index file name given to Open.
func (r *Revlog) Name() string { return r.name }

// DataName returns the name of the data (.d) file of a split revlog.
func (r *Revlog) DataName() string { return r.dataName }

// Len returns the number of revisions.
func (r *Revlog) Len() int { return len(r.entries) }

// Entry returns rev's index entry; rev must be in [0, Len()).
func (r *Revlog) Entry(rev int) Entry { return r.entries[rev].entry() }

// Inline reports whether chunks are stored in the index file.
func (r *Revlog) Inline() bool { return r.hdr.inline }

// GeneralDelta reports whether deltas may be against any earlier revision
// (the base field names it) rather than always the previous one.
func (r *Revlog) GeneralDelta() bool { return r.hdr.generalDelta }

// Version returns the format version (always 1 for an open revlog).
func (r *Revlog) Version() int { return int(r.hdr.version) }

// Node returns rev's node; NullNode for NullRev.
func (r *Revlog) Node(rev int) Node {
	if rev == NullRev {
		return NullNode
	}
	return r.entries[rev].node
}

// Parents returns rev's parent revisions (NullRev for none).
func (r *Revlog) Parents(rev int) (p1, p2 int) {
	e := &r.entries[rev]
	return int(e.p1), int(e.p2)
}

// LinkRev returns the changelog revision that introduced rev.
func (r *Revlog) LinkRev(rev int) int { return int(r.entries[rev].link) }

// DeltaParent returns the revision rev's chunk is a delta against, or
// NullRev if the chunk is a full snapshot (or, with generaldelta, a delta
// against the empty text). Keep in sync with revlog.py deltaparent.
func (r *Revlog) DeltaParent(rev int) int {
	e := &r.entries[rev]
	switch {
	case int(e.base) == rev:
		return NullRev
	case r.hdr.generalDelta:
		return int(e.base)
	default:
		return rev - 1
	}
}

// ChainBase returns the first revision of rev's delta chain: a full
// snapshot, or (generaldelta) a delta against the empty text.
func (r *Revlog) ChainBase(rev int) int {
	for {
		dp := r.DeltaParent(rev)
		if dp == NullRev {
			return rev
		}
		rev = dp
	}
}

// DeltaChain returns the revisions whose chunks rebuild rev, base first,
// as revlog.py _deltachain does.
func (r *Revlog) DeltaChain(rev int) []int {
	var chain []int
	for cur := rev; ; {
		chain = append(chain, cur)
		dp := r.DeltaParent(cur)
		if dp == NullRev {
			break
		}
		cur = dp
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// scanNodes is the most revisions Rev scans for a node instead of
// building its map.
const scanNodes = 16

// Rev returns the revision of node n. The node map is built on first use.
func (r *Revlog) Rev(n Node) (int, bool) {
	if n == NullNode {
		return NullRev, true
	}
	if len(r.entries) <= scanNodes {
		// Most filelogs hold a few revisions: a scan is cheaper than
		// building the map (a first walk of a tree opens one each).
		for i := range r.entries {
			if r.entries[i].node == n {
				return i, true
			}
		}
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nodes == nil {
		r.nodes = make(map[Node]int, len(r.entries))
		for i := range r.entries {
			// A duplicate node is corruption that verify reports; lookups
			// keep the first revision.
			if _, dup := r.nodes[r.entries[i].node]; !dup {
				r.nodes[r.entries[i].node] = i
			}
		}
	}
	rev, ok := r.nodes[n]
	return rev, ok
}

// LookupPrefix returns the revision whose hex node starts with hexPrefix
// (case-insensitive). The null node takes part, as in hg. A prefix that
// is not hex or matches nothing gives ErrNotFound; several matches give
// ErrAmbiguous.
func (r *Revlog) LookupPrefix(hexPrefix string) (int, error) {
	p := strings.ToLower(hexPrefix)
	if len(p) == 0 || len(p) > 2*NodeLen {
		return 0, fmt.Errorf("%w: %q in %s", ErrNotFound, hexPrefix, r.name)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return 0, fmt.Errorf("%w: %q is not hex (in %s)", ErrNotFound, hexPrefix, r.name)
		}
	}
	if len(p) == 2*NodeLen {
		n, _ := ParseNode(p)
		if rev, ok := r.Rev(n); ok {
			return rev, nil
		}
		return 0, fmt.Errorf("%w: %s in %s", ErrNotFound, p, r.name)
	}
	whole, _ := hex.DecodeString(p[:len(p)&^1])
	odd := len(p)%2 == 1
	var nibble byte
	if odd {
		nibble = unhexDigit(p[len(p)-1])
	}
	match := func(n *Node) bool {
		if !bytes.Equal(n[:len(whole)], whole) {
			return false
		}
		return !odd || n[len(whole)]>>4 == nibble
	}
	found, count := 0, 0
	if match(&NullNode) {
		found, count = NullRev, 1
	}
	for i := range r.entries {
		if match(&r.entries[i].node) {
			found = i
			count++
			if count > 1 {
				return 0, fmt.Errorf("%w: %s in %s", ErrAmbiguous, hexPrefix, r.name)
			}
		}
	}
	if count == 0 {
		return 0, fmt.Errorf("%w: %s in %s", ErrNotFound, hexPrefix, r.name)
	}
	return found, nil
}

func unhexDigit(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// Heads returns the revisions that are no revision's parent, in
// increasing order. An empty revlog has no heads (hg reports the null
// revision there).
func (r *Revlog) Heads() []int {
	isParent := make([]bool, len(r.entries))
	for i := range r.entries {
		e := &r.entries[i]
		if e.p1 >= 0 {
			isParent[e.p1] = true
		}
		if e.p2 >= 0 {
			isParent[e.p2] = true
		}
	}
	var heads []int
	for rev, p := range isParent {
		if !p {
			heads = append(heads, rev)
		}
	}
	return heads
}

// openData opens the .d file once. The caller holds r.mu.
func (r *Revlog) openData() error {
	if r.closed {
		return fmt.Errorf("revlog %s: %w", r.name, fs.ErrClosed)
	}
	if r.data != nil {
		return nil
	}
	if r.fsys == nil {
		return fmt.Errorf("revlog %s: no data file", r.name)
	}
	f, err := r.fsys.Open(r.dataName)
	if err != nil {
		return fmt.Errorf("revlog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("revlog: %w", err)
	}
	if ra, ok := f.(io.ReaderAt); ok {
		r.data, r.dataSize, r.dataFile = ra, st.Size(), f
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, st.Size()))
	if err != nil {
		return fmt.Errorf("revlog: reading %s: %w", r.dataName, err)
	}
	r.data, r.dataSize = bytes.NewReader(b), int64(len(b))
	return nil
}

// span locates rev's stored chunk: its position in the .i (inline) or .d.
func (r *Revlog) span(rev int) (pos, n int64, err error) {
	e := &r.entries[rev]
	off, n := int64(e.offsetFlags>>16), int64(e.compLen)
	if r.inlinePos != nil {
		pos = r.inlinePos[rev]
		// hg reads an inline chunk at offset + (rev+1)*64; the index
		// walk found it by chunk lengths. They agree in a sound file.
		if want := pos - int64(rev+1)*EntrySize; off != want {
			return 0, 0, r.corrupt(rev, r.entryOffset(rev), "data offset %d disagrees with inline position %d", off, want)
		}
		return pos, n, nil
	}
	return off, n, nil
}

// readChunks returns the stored chunks of revs (ascending), reading
// neighbouring chunks of a split revlog with one ReadAt when the gap
// between them is small.
func (r *Revlog) readChunks(revs []int) ([][]byte, error) {
	out := make([][]byte, len(revs))
	if r.inlinePos != nil {
		for i, rev := range revs {
			pos, n, err := r.span(rev)
			if err != nil {
				return nil, err
			}
			out[i] = r.index[pos : pos+n : pos+n]
		}
		return out, nil
	}
	r.mu.Lock()
	err := r.openData()
	data, size := r.data, r.dataSize
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	const maxGap = 64 << 10
	for i := 0; i < len(revs); {
		start, n, _ := r.span(revs[i])
		end := start + n
		if end > size {
			return nil, &CorruptError{File: r.dataName, Rev: revs[i], Offset: start,
				Err: fmt.Errorf("chunk of %d bytes runs past the end of the data file (%d bytes)", n, size)}
		}
		j := i + 1
		for ; j < len(revs); j++ {
			s, m, _ := r.span(revs[j])
			if s < end || s-end > maxGap || s+m > size || s+m-start > 64<<20 {
				break
			}
			end = s + m
		}
		buf := make([]byte, end-start)
		if _, err := data.ReadAt(buf, start); err != nil {
			return nil, &CorruptError{File: r.dataName, Rev: revs[i], Offset: start, Err: fmt.Errorf("reading %d bytes: %w", len(buf), err)}
		}
		for k := i; k < j; k++ {
			s, m, _ := r.span(revs[k])
			out[k] = buf[s-start : s-start+m : s-start+m]
		}
		i = j
	}
	return out, nil
}

// RawChunk returns rev's stored chunk, decompressed: a full text or a
// delta against DeltaParent(rev). The result may share memory with the
// revlog and must not be modified.
func (r *Revlog) RawChunk(rev int) ([]byte, error) {
	if err := r.checkRev(rev); err != nil {
		return nil, err
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("revlog %s: %w", r.name, fs.ErrClosed)
	}
	chunks, err := r.readChunks([]int{rev})
	if err != nil {
		return nil, err
	}
	return r.decompress(rev, chunks[0], r.chunkLimit(rev))
}

func (r *Revlog) checkRev(rev int) error {
	if rev < 0 || rev >= len(r.entries) {
		return fmt.Errorf("%w: revision %d in %s (%d revisions)", ErrNotFound, rev, r.name, len(r.entries))
	}
	return nil
}

// chunkLimit bounds rev's decompressed chunk. A full snapshot is exactly
// its raw length. A delta's size is not recorded; real deltas stay far
// below the generous bound used, which only stops decompression bombs.
func (r *Revlog) chunkLimit(rev int) int64 {
	e := &r.entries[rev]
	if int(e.base) == rev {
		if e.rawLen >= 0 {
			return int64(e.rawLen)
		}
		return MaxTextLen
	}
	dp := r.DeltaParent(rev)
	var parentLen int64
	if dp >= 0 {
		parentLen = int64(r.entries[dp].rawLen)
	}
	if e.rawLen < 0 || parentLen < 0 {
		return MaxTextLen
	}
	return min(16*(int64(e.rawLen)+parentLen)+64<<10, MaxTextLen)
}

func (r *Revlog) decompress(rev int, chunk []byte, limit int64) ([]byte, error) {
	hint := int64(-1)
	if int(r.entries[rev].base) == rev {
		hint = int64(r.entries[rev].rawLen)
	}
	out, err := Decompress(chunk, limit, hint)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, fmt.Errorf("%s rev %d: %w", r.name, rev, err)
		}
		file := r.name
		if !r.hdr.inline {
			file = r.dataName
		}
		pos, _, _ := r.span(rev)
		return nil, &CorruptError{File: file, Rev: rev, Offset: pos, Err: fmt.Errorf("revlog decompress error: %w", err)}
	}
	return out, nil
}

// Revision returns rev's raw text, as `hg debugdata` prints it, after
// checking it against its node (unless the revision's flags tell hg not
// to: ellipsis and externally stored revisions). A censored revision gives
// an error wrapping ErrCensored. NullRev gives the empty text.
//
// The result is shared with the revlog's cache and must not be modified.
func (r *Revlog) Revision(rev int) ([]byte, error) {
	return r.revision(rev, true)
}

// RevisionUnchecked returns rev's raw text without checking its hash or
// flags: for tools that show what is stored (censored tombstones,
// corrupt revisions). The result must not be modified.
func (r *Revlog) RevisionUnchecked(rev int) ([]byte, error) {
	return r.revision(rev, false)
}

func (r *Revlog) revision(rev int, check bool) ([]byte, error) {
	if rev == NullRev {
		return []byte{}, nil
	}
	if err := r.checkRev(rev); err != nil {
		return nil, err
	}
	e := &r.entries[rev]
	if check && e.offsetFlags&0xFFFF&^KnownRevisionFlags != 0 {
		return nil, fmt.Errorf("%w: %s rev %d: incompatible revision flag '%#x'", ErrUnsupported, r.name, rev, e.offsetFlags&0xFFFF&^KnownRevisionFlags)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("revlog %s: %w", r.name, fs.ErrClosed)
	}
	if t, ok := r.cache.get(rev); ok {
		r.mu.Unlock()
		return t, nil
	}
	// Walk the delta chain back to a snapshot, the empty text, or a text
	// in the cache.
	var base []byte
	haveBase := false
	var chain []int
	for cur := rev; ; {
		if cur != rev {
			if t, ok := r.cache.get(cur); ok {
				base, haveBase = t, true
				break
			}
		}
		chain = append(chain, cur)
		dp := r.DeltaParent(cur)
		if dp == NullRev {
			if int(r.entries[cur].base) != cur {
				base, haveBase = []byte{}, true // generaldelta delta against null
			}
			break
		}
		cur = dp
	}
	r.mu.Unlock()
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}

	stored, err := r.readChunks(chain)
	if err != nil {
		return nil, err
	}
	deltas := make([][]byte, 0, len(chain))
	for i, c := range chain {
		d, err := r.decompress(c, stored[i], r.chunkLimit(c))
		if err != nil {
			return nil, err
		}
		if i == 0 && !haveBase {
			base = d
			continue
		}
		deltas = append(deltas, d)
	}
	text, err := PatchChain(base, deltas)
	if err == nil && len(deltas) == 0 && !haveBase && !r.hdr.inline && len(chain) == 1 {
		// An uncompressed snapshot aliases the read buffer, which may span
		// neighbouring chunks: copy it so the cache holds only the text.
		text = bytes.Clone(text)
	}
	if err != nil {
		return nil, r.corrupt(rev, -1, "applying delta chain %v: %w", chain, err)
	}
	if check {
		if e.rawLen >= 0 && int64(len(text)) != int64(e.rawLen) {
			return nil, r.corrupt(rev, -1, "unpacked size is %d, %d expected", len(text), e.rawLen)
		}
		if err := r.checkHash(rev, text); err != nil {
			return nil, err
		}
		r.mu.Lock()
		if !r.closed {
			r.cache.add(rev, text)
		}
		r.mu.Unlock()
	}
	return text, nil
}

// checkHash compares text with rev's node, as revlog.py checkhash does
// for raw reads (flagutil.processflagsraw decides whether to check).
func (r *Revlog) checkHash(rev int, text []byte) error {
	e := &r.entries[rev]
	flags := uint16(e.offsetFlags)
	if flags&flagsSkipHash != 0 {
		return nil
	}
	p1, p2 := int(e.p1), int(e.p2)
	if HashRevision(text, r.Node(p1), r.Node(p2)) == e.node {
		return nil
	}
	if flags&FlagCensored != 0 && isCensoredText(text) {
		return fmt.Errorf("%w: %s rev %d (node %s)", ErrCensored, r.name, rev, e.node.Short())
	}
	return r.corrupt(rev, -1, "integrity check failed on %s:%d (node %s)", r.name, rev, e.node.Short())
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
