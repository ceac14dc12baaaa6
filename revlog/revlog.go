package revlog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Revlog is an open revlog: its index in memory and, for a split revlog,
// its data file opened on first use. It is safe for concurrent use.
type Revlog struct {
	inner             // entries, format flags, text rebuilding; its mu guards the fields below
	fsys      fs.FS   // nil for FromBytes
	index     []byte  // the whole .i file when inline (it holds the chunks), else nil
	inlinePos []int64 // inline only: position of each rev's chunk in index
	version   uint16

	data     io.ReaderAt // .d contents (split revlogs), nil until opened
	dataSize int64
	dataFile fs.File // to close, when data reads it in place
	nodes    map[Node]int
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
	if !r.inline {
		r.data = bytes.NewReader(data)
		r.dataSize = int64(len(data))
	}
	return r, nil
}

func newRevlog(name string, index []byte) (*Revlog, error) {
	hdr, entries, inlinePos, err := loadIndex(name, index)
	if err != nil {
		return nil, err
	}
	r := &Revlog{index: index, version: hdr.version, inlinePos: inlinePos}
	r.init(name, strings.TrimSuffix(name, ".i")+".d", hdr.inline, hdr.generalDelta, r)
	r.entries = entries
	if !hdr.inline {
		r.index = nil // decoded into entries; keep one copy only
	}
	return r, nil
}

// Forget empties the text cache: for a reader done with a large text
// it has parsed into its own memory (a checkout's whole manifest, 15 MB
// at 250,000 files, held otherwise for as long as the revlog).
func (r *Revlog) Forget() { r.forget() }

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
func (r *Revlog) Inline() bool { return r.inline }

// GeneralDelta reports whether deltas may be against any earlier revision
// (the base field names it) rather than always the previous one.
func (r *Revlog) GeneralDelta() bool { return r.generalDelta }

// Version returns the format version (always 1 for an open revlog).
func (r *Revlog) Version() int { return int(r.version) }

// Node returns rev's node; NullNode for NullRev.
func (r *Revlog) Node(rev int) Node { return r.node(rev) }

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
func (r *Revlog) DeltaParent(rev int) int { return r.deltaParent(rev) }

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

// readChunks returns the stored chunks of revs (ascending): slices of
// the index of an inline revlog, else read from the .d file with as few
// ReadAt calls as the layout allows (the chunkSource of r's inner).
func (r *Revlog) readChunks(revs []int) ([][]byte, bool, error) {
	out := make([][]byte, len(revs))
	if r.inlinePos != nil {
		for i, rev := range revs {
			if err := checkInlinePos(r.name, &r.entries[rev], rev, r.inlinePos[rev]); err != nil {
				return nil, false, err
			}
			pos, n := r.span(rev)
			out[i] = r.index[pos : pos+n : pos+n]
		}
		return out, true, nil
	}
	r.mu.Lock()
	err := r.openData()
	data, size := r.data, r.dataSize
	r.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	if err := r.readBatched(data, size, r.dataName, revs, out); err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// RawChunk returns rev's stored chunk, decompressed: a full text or a
// delta against DeltaParent(rev). The result may share memory with the
// revlog and must not be modified.
func (r *Revlog) RawChunk(rev int) ([]byte, error) { return r.rawChunk(rev) }

// StoredChunks returns the stored chunks of revs (best ascending) as the
// file holds them, read with as few reads as their layout allows;
// DecompressChunk decodes one as RawChunk would. For a reader going
// through many revisions' chunks in order (a changegroup's group): it
// reads a window ahead instead of once per revision. The chunks may
// share memory with the revlog and must not be modified.
func (r *Revlog) StoredChunks(revs []int) ([][]byte, error) { return r.storedChunks(revs) }

// DecompressChunk decodes rev's stored chunk, as StoredChunks returned
// it, within the bounds RawChunk applies.
func (r *Revlog) DecompressChunk(rev int, stored []byte) ([]byte, error) {
	if err := r.checkRev(rev); err != nil {
		return nil, err
	}
	return r.decompress(rev, stored)
}

// Revision returns rev's raw text, as `hg debugdata` prints it, after
// checking it as hg does: a revision whose flags need a processor hg
// takes from an extension (ellipsis, extstored) gives a *FlagError, a
// text whose length or hash disagrees with the index a *CorruptError, a
// censored revision an error wrapping ErrCensored. NullRev gives the
// empty text.
//
// The result is shared with the revlog's cache and must not be modified.
func (r *Revlog) Revision(rev int) ([]byte, error) {
	return r.revision(rev, true)
}

// RevisionChunk returns what Revision and RawChunk return for rev,
// decompressing rev's stored chunk once: for a reader sending stored
// deltas that needs the texts too (a changegroup's changelog group,
// whose changesets name the manifests and files to send). Neither result
// may be modified.
func (r *Revlog) RevisionChunk(rev int) (text, chunk []byte, err error) {
	return r.revisionChunk(rev, true, true)
}

// RevisionUnchecked returns rev's raw text without checking its hash or
// flags: for tools that show what is stored (censored tombstones,
// corrupt revisions). The result must not be modified.
func (r *Revlog) RevisionUnchecked(rev int) ([]byte, error) {
	return r.revision(rev, false)
}
