package revlog

// Appending to a revlog. The on-disk layout is index.go's; this file
// adds revisions to it the way Mercurial 6.3's revlog.py does
// (_addrevision, _writeentry, addgroup, _enforceinlinesize), with one
// deliberate difference: writes are buffered. hg's file objects write
// (and, reading a delta base back, flush) revision by revision; a Writer
// keeps appended chunks and index entries in memory and reads its own
// pending revisions from there, so the bytes reach the files only when
// the buffer fills, at Flush, or at Close: data (.d) first, then the
// index (.i), so the index never names data that is not yet written.
//
// Transaction hooks (Journal) are called where revlog.py calls tr.add and
// tr.replace: Add for each file before the first byte of this writer
// reaches it, with its size when the writer opened it; Replace twice when
// an inline revlog is split.
//
// Keep in sync with mercurial/revlog.py and revlogutils/deltas.py.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/internal/sysio"
)

// maxInline is the data size past which an inline revlog is split into
// .i and .d files. Keep in sync with mercurial/revlog.py _maxinline.
const maxInline = 131072

// SparseRevlogMaxChainLen is hg's delta chain bound for sparse revlogs.
// Keep in sync with mercurial/revlogutils/constants.py
// SPARSE_REVLOG_MAX_CHAIN_LENGTH.
const SparseRevlogMaxChainLen = 1000

// defaultWriteBuffer is how many pending bytes (index and data together)
// a Writer keeps before writing them out.
const defaultWriteBuffer = 1 << 20

// writerCacheItems is how many recent texts a Writer keeps (a Revlog
// keeps defaultCacheItems): a changegroup's deltas are against a base up
// to a few dozen revisions back (the sender's own delta parents,
// intermediate snapshots of a sparse revlog), and a base missing from the
// cache is rebuilt from its whole chain. With 8, 142 of the corpus
// bundle's 7,724 deltas missed (125 of them manifests), costing about a
// ninth of the unbundle's CPU time.
//
// They are bounded in bytes too, by writerCacheBytes, but the last
// writerCacheMin texts stay whatever their size: a large repository's
// manifest text is megabytes (1.2 MB on the bench's 20,000-file store,
// about 15 MB at 250,000 files), each manifest delta needs its base, and
// a base missing from the cache costs its whole chain. With the readers'
// 64 MiB bound, the manifest writer of a changegroup clone of the
// 20,000-file store from hg serve kept about 55 texts, and the clone
// peaked at 176.8 MiB RSS; with 16 MiB, 91.4 MiB, in the same time
// (2,456 against 2,434 ms; medians of 4 alternated clones, the builds
// before and after, 2026-12-06; one build with the bound switched gave
// 170 against 89 MiB, 2,814 against 2,646 ms). Real history, whose
// manifests are small, is the same either way (the item bound holds
// first). Where writerCacheMin decides (texts over 8 MiB), the same
// clone of a 150,000-file store (9.2 MB manifest texts, two kept where
// the readers' bound kept six) peaked at 192.9 MiB against 279.7, in
// 14.3 against 15.3 s (medians of 3 alternated clones, the same day):
// a changegroup's manifest deltas are against the previous revision.
const (
	writerCacheItems = 64
	writerCacheBytes = 16 << 20
	writerCacheMin   = 2
)

// ErrUnknownBase reports a delta whose base, or a revision whose parent,
// is not in the revlog (nor the null revision).
var ErrUnknownBase = errors.New("unknown delta base or parent")

// Journal receives the transaction hooks, as Mercurial's transaction does
// (tr.add / tr.replace). Names are on-disk paths relative to the store
// directory, as given to OpenWriter (the .i name) or derived from it (.d).
type Journal interface {
	// Add is called once per file, before the writer's first write to it;
	// offset is the file's size when the writer opened it (0 for a new
	// file). Rolling back truncates the file to offset (or removes it).
	Add(name string, offset int64) error
	// Replace is called after an inline revlog is split: the .d file now
	// holds the data, the .i file only index entries, and the offsets to
	// roll back to change accordingly.
	Replace(name string, offset int64) error
}

// JournalFlusher is implemented by a Journal that buffers its entries
// (to write the entries of many revlogs with one write): the Writer calls
// FlushJournal before any of its bytes reach a file, so that the entry
// naming a file is on disk before the file changes, which is what makes
// a killed transaction recoverable.
type JournalFlusher interface {
	FlushJournal() error
}

// WriterOptions configures a Writer. The zero value writes zlib-compressed
// legacy (non-generaldelta) revlogs without a journal.
type WriterOptions struct {
	// Compression is "zstd", "zlib" or "none" (hg's revlog-compression-zstd
	// requirement selects zstd). Whatever the engine, a chunk is stored
	// uncompressed when compressing does not make it smaller.
	Compression string
	ZstdLevel   int // 0: hg's default (3)
	// GeneralDelta and SparseRevlog come from the repository's
	// requirements. A new revlog gets the generaldelta header flag from
	// GeneralDelta; an existing one keeps its header (and sparse-revlog
	// rules apply only with generaldelta, as in hg: issue6056).
	GeneralDelta bool
	SparseRevlog bool
	// MaxChainLen bounds delta chains: 0 means hg's default (1000 with
	// sparse-revlog, unbounded otherwise), negative means unbounded.
	MaxChainLen int
	// Changelog selects hg's changelog rules (changelog.py): a new
	// changelog never gets the generaldelta flag, and every revision is
	// stored whole (delta chains are disabled: changesets do not delta
	// well against each other).
	Changelog bool
	// Censorable marks a filelog: revisions carrying the censored flag
	// with a censor tombstone are accepted (hg's censorable revlogs), and
	// a delta against a censored base must replace it whole.
	Censorable bool
	// BufferSize is how many pending bytes are kept before writing; 0
	// means 1 MiB.
	BufferSize int
	// Delay keeps every pending byte in memory until Flush or Close: no
	// write when the buffer fills, and an inline revlog is split only
	// then. The changelog is written this way (hg's delayed changelog,
	// changelog.delayupdate): its new revisions reach the file after
	// everything they refer to. The memory held is the transaction's
	// changelog data, as in hg.
	Delay bool
	// DataName is the on-disk name of the data file, relative to dir.
	// Empty means the index name with ".d" for ".i", which is wrong only
	// for hashed store names ("dh/..."), whose digest covers the suffix:
	// callers with a store pass Store.Encode of the logical .d name.
	DataName string
	Journal  Journal // may be nil (tests, tools)
}

// Writer appends revisions to one revlog. It is not safe for concurrent
// use. A Writer assumes it is the only writer of its files (the caller
// holds the repository lock) and that each revlog gets one Writer per
// transaction.
//
// After a failed write (an I/O error, a failed split) the files may hold
// part of the pending bytes: the Writer refuses further work and the
// transaction must be rolled back.
type Writer struct {
	inner    // entries (pending ones too), format flags, text rebuilding
	dir      string
	opt      WriterOptions
	maxChain int
	bufSize  int
	sparse   bool
	comp     *compressor

	nodes     map[Node]int
	chainLen  []int32 // deltas to apply to rebuild the rev (revlog.py _chaininfo)
	chainSize []int64 // their stored size, plus the snapshot's
	snap      []int8  // issnapshot memo: 0 unknown, 1 yes, 2 no

	ifile, dfile   wfile  // opened read-write on first need
	iDisk, dDisk   int64  // bytes of each file on disk
	ibuf, dbuf     []byte // pending appends
	iStart, dStart int64  // sizes when opened: the journal offsets
	iAdded, dAdded bool   // Journal.Add called
	broken         error
}

// OpenWriter opens dir/name for appending, creating an empty revlog when
// the file is absent or empty (inline at first, as hg; split once its
// data passes 128 KiB). dir is the store directory; name the on-disk .i
// path relative to it, with forward slashes. Nothing is created on disk
// until a revision is written.
func OpenWriter(dir, name string, opt WriterOptions) (*Writer, error) {
	if !strings.HasSuffix(name, ".i") || !fs.ValidPath(name) {
		return nil, fmt.Errorf("revlog: invalid index name %q", name)
	}
	if opt.Compression == "" {
		opt.Compression = CompressionZlib
	}
	if opt.DataName == "" {
		opt.DataName = strings.TrimSuffix(name, ".i") + ".d"
	} else if !fs.ValidPath(opt.DataName) {
		return nil, fmt.Errorf("revlog: invalid data name %q", opt.DataName)
	}
	comp, err := newCompressor(opt.Compression, opt.ZstdLevel)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, opt: opt, comp: comp, bufSize: opt.BufferSize}
	w.init(name, opt.DataName, true, false, w)
	w.cache.maxItems, w.cache.maxBytes, w.cache.minItems = writerCacheItems, writerCacheBytes, writerCacheMin
	if w.bufSize <= 0 {
		w.bufSize = defaultWriteBuffer
	}
	b, err := sysio.ReadFile(w.path(name), math.MaxInt)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("revlog: %w", err)
	}
	if len(b) == 0 {
		w.generalDelta = opt.GeneralDelta && !opt.Changelog
	} else if err := w.load(b); err != nil {
		return nil, err
	}
	w.sparse = opt.SparseRevlog && w.generalDelta
	switch {
	case opt.MaxChainLen > 0:
		w.maxChain = opt.MaxChainLen
	case opt.MaxChainLen == 0 && opt.SparseRevlog:
		w.maxChain = SparseRevlogMaxChainLen
	}
	w.iStart, w.dStart = w.iDisk, w.dDisk
	return w, nil
}

// load parses and checks an existing index, as Open does, and the data
// file's size against it.
func (w *Writer) load(b []byte) error {
	hdr, entries, inlinePos, err := loadIndex(w.name, b)
	if err != nil {
		return err
	}
	w.inline, w.generalDelta = hdr.inline, hdr.generalDelta
	w.entries = entries
	w.nodes = make(map[Node]int, len(entries))
	for i := range entries {
		e := &entries[i]
		// Appending continues at the end of the previous chunk, as
		// revlog.py end(prev) does: offsets must be contiguous. (In an
		// inline index that is the reader's inline position check,
		// made here for every entry.)
		if inlinePos != nil {
			if err := checkInlinePos(w.name, e, i, inlinePos[i]); err != nil {
				return err
			}
		}
		if want := w.dataEnd(i); int64(e.offsetFlags>>16) != want {
			return &CorruptError{File: w.name, Rev: i, Offset: entryOffset(inlinePos, i), Err: fmt.Errorf("data offset %d, previous chunk ends at %d", e.offsetFlags>>16, want)}
		}
		if _, dup := w.nodes[e.node]; !dup {
			w.nodes[e.node] = i
		}
		w.appendChainInfo(i)
	}
	w.iDisk = int64(len(b))
	if !w.inline {
		st, err := os.Stat(w.path(w.dataName))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("revlog: %w", err)
		default:
			w.dDisk = st.Size()
		}
		if end := w.dataEnd(len(w.entries)); w.dDisk != end {
			return &CorruptError{File: w.dataName, Rev: -1, Offset: -1,
				Err: fmt.Errorf("data file has %d bytes, the index expects %d (interrupted transaction? run hg recover)", w.dDisk, end)}
		}
	}
	return nil
}

func (w *Writer) path(name string) string { return filepath.Join(w.dir, filepath.FromSlash(name)) }

// dataEnd is where the chunk of revision rev starts: the end of rev-1's.
func (w *Writer) dataEnd(rev int) int64 {
	if rev == 0 {
		return 0
	}
	e := &w.entries[rev-1]
	return int64(e.offsetFlags>>16) + int64(e.compLen)
}

// Len returns the number of revisions, including pending ones.
func (w *Writer) Len() int { return len(w.entries) }

// Rev returns the revision of node n (NullRev for NullNode).
func (w *Writer) Rev(n Node) (int, bool) {
	if n == NullNode {
		return NullRev, true
	}
	rev, ok := w.nodes[n]
	return rev, ok
}

// Node returns rev's node; NullNode for NullRev.
func (w *Writer) Node(rev int) Node { return w.node(rev) }

// Entry returns rev's index entry; rev must be in [0, Len()).
func (w *Writer) Entry(rev int) Entry { return w.entries[rev].entry() }

// Inline reports whether the revlog is (still) inline.
func (w *Writer) Inline() bool { return w.inline }

// GeneralDelta reports whether the revlog's deltas may be against any
// earlier revision.
func (w *Writer) GeneralDelta() bool { return w.generalDelta }

func (w *Writer) length(rev int) int64 {
	if rev == NullRev {
		return 0
	}
	return int64(w.entries[rev].compLen)
}

func (w *Writer) flags(rev int) uint16 {
	if rev == NullRev {
		return 0
	}
	return uint16(w.entries[rev].offsetFlags)
}

// appendChainInfo records rev's chain length and size (revlog.py
// _chaininfo): a snapshot counts 0 deltas and its own size.
func (w *Writer) appendChainInfo(rev int) {
	e := &w.entries[rev]
	var n int32
	size := int64(e.compLen)
	if dp := w.deltaParent(rev); dp != NullRev {
		n, size = w.chainLen[dp]+1, size+w.chainSize[dp]
	} else if int(e.base) != rev {
		n = 1 // generaldelta delta against the empty text
	}
	w.chainLen = append(w.chainLen, n)
	w.chainSize = append(w.chainSize, size)
	w.snap = append(w.snap, 0)
}

// Revision returns rev's raw text, including revisions still in the
// buffer, checked as Revlog.Revision does. The result must not be
// modified.
func (w *Writer) Revision(rev int) ([]byte, error) { return w.revision(rev, true) }

// readChunks returns the stored chunks of revs (ascending) from the file
// and the pending buffer (the chunkSource of w's inner). A chunk is
// never split between the two: buffers are written whole, so the chunks
// on disk come first, and they are read as a Revlog reads its .d file.
func (w *Writer) readChunks(revs []int) ([][]byte, bool, error) {
	out := make([][]byte, len(revs))
	file, disk, buf := w.dataName, w.dDisk, w.dbuf
	if w.inline {
		file, disk, buf = w.name, w.iDisk, w.ibuf
	}
	onDisk := 0
	for i, rev := range revs {
		pos, n := w.span(rev)
		if pos < disk {
			onDisk = i + 1
			continue
		}
		if pos-disk+n > int64(len(buf)) {
			return nil, false, &CorruptError{File: file, Rev: rev, Offset: pos, Err: fmt.Errorf("chunk of %d bytes beyond the pending data", n)}
		}
		out[i] = buf[pos-disk : pos-disk+n : pos-disk+n]
	}
	if onDisk > 0 {
		f, err := w.file(w.inline)
		if err != nil {
			return nil, false, err
		}
		if err := w.readBatched(f, disk, file, revs[:onDisk], out[:onDisk]); err != nil {
			return nil, false, err
		}
	}
	return out, false, nil
}

// file returns the index (index true) or data file, opening it for
// reading and writing (creating it, and its directory, if needed).
// wfile is an open revlog file (openWFile).
type wfile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// openWFile opens a revlog file for the writer, read and written at
// offsets: a sysio.File, whose plain open(2) on unix spares an unbundle
// creating 20,000 filelogs the fcntl calls and failed epoll registration
// os.OpenFile adds per file (~100,000 system calls).
func openWFile(path string, trunc bool) (wfile, error) {
	flag := os.O_RDWR | os.O_CREATE
	if trunc {
		flag |= os.O_TRUNC
	}
	f, err := sysio.OpenFile(path, flag, 0o666)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (w *Writer) file(index bool) (wfile, error) {
	fp, name, disk := &w.dfile, w.dataName, w.dDisk
	if index {
		fp, name, disk = &w.ifile, w.name, w.iDisk
	}
	if *fp != nil {
		return *fp, nil
	}
	p := w.path(name)
	// A file with bytes on disk may be linked under another name too (a
	// local hg clone hard-links the source's revlogs): it is first made
	// a file of its own, as hg's vfs does, or the writes would reach the
	// other repository. A file the writer creates needs no look (one
	// system call less for each of a clone's new filelogs).
	if disk > 0 {
		if err := sysio.BreakLink(p); err != nil {
			return nil, fmt.Errorf("revlog: %w", err)
		}
	}
	f, err := openWFile(p, false)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(p), 0o777); err == nil {
			f, err = openWFile(p, false)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("revlog: %w", err)
	}
	*fp = f
	return f, nil
}

// AddRevision appends a full text; its node is HashRevision(text, p1, p2).
// When the node is already present it returns its rev and added=false
// (nothing written). Flags are refused as AddDelta refuses them. text is
// copied.
func (w *Writer) AddRevision(text []byte, p1, p2 Node, linkRev int, flags uint16) (rev int, added bool, err error) {
	if err := w.usable(); err != nil {
		return 0, false, err
	}
	node := HashRevision(text, p1, p2)
	if rev, ok := w.nodes[node]; ok {
		return rev, false, nil
	}
	if len(text) > MaxTextLen {
		return 0, false, fmt.Errorf("revlog %s: text of %d bytes exceeds the format's limit", w.name, len(text))
	}
	ri, err := w.newRevInfo(node, p1, p2, linkRev, flags)
	if err != nil {
		return 0, false, err
	}
	ri.text = bytes.Clone(text)
	rev, err = w.add(ri)
	return rev, err == nil, err
}

// AddDelta appends a revision arriving as a delta against base (NullNode:
// the empty text), as changegroups carry them. Parents and base must be
// present (NullNode allowed): otherwise an error wrapping ErrUnknownBase
// naming the node. Flags whose processor hg takes from an extension
// (ellipsis, extstored) give a *FlagError, as in hg without it. The
// rebuilt text must hash to node (a censorable revlog also takes a
// censor tombstone with the censored flag): otherwise a *CorruptError.
// A node already present gives (rev, false, nil) and writes nothing.
// Every argument is untrusted; a rejected revision leaves no trace in the
// files or the buffer. The delta is not retained after the call.
func (w *Writer) AddDelta(node, p1, p2, base Node, delta []byte, linkRev int, flags uint16) (rev int, added bool, err error) {
	if err := w.usable(); err != nil {
		return 0, false, err
	}
	if node == NullNode {
		return 0, false, fmt.Errorf("revlog %s: attempt to add null revision", w.name)
	}
	if rev, ok := w.nodes[node]; ok {
		return rev, false, nil
	}
	ri, err := w.newRevInfo(node, p1, p2, linkRev, flags)
	if err != nil {
		return 0, false, err
	}
	baseRev, ok := w.Rev(base)
	if !ok {
		return 0, false, fmt.Errorf("%w: %s: unknown delta base %s for %s", ErrUnknownBase, w.name, base, node)
	}
	corrupt := func(format string, args ...any) error {
		return &CorruptError{File: w.name, Rev: len(w.entries), Offset: -1, Err: fmt.Errorf("node %s: "+format, append([]any{node}, args...)...)}
	}
	baseLen := w.rawSize(baseRev)
	censoredBase := baseRev != NullRev && w.opt.Censorable && w.flags(baseRev)&FlagCensored != 0
	whole := isReplaceDelta(delta, baseLen)
	if censoredBase && !whole {
		return 0, false, corrupt("%w: cannot apply delta to censored base %s", ErrCensored, base.Short())
	}
	if ri.flags == 0 && w.opt.Censorable && whole && bytes.HasPrefix(delta[hunkHeaderSize:], []byte("\x01\ncensored:")) {
		// storageutil.deltaiscensored: cg1/cg2 carry no flags.
		ri.flags |= FlagCensored
	}
	var text []byte
	if whole {
		// Replaces the base whole: no need to read it (nor can one read
		// a censored base).
		text = bytes.Clone(delta[hunkHeaderSize:])
	} else {
		newLen, err := PatchedSize(int(baseLen), delta)
		if err != nil {
			return 0, false, corrupt("delta against %s: %w", base.Short(), err)
		}
		if newLen > MaxTextLen {
			return 0, false, corrupt("delta produces %d bytes, beyond the format's limit", newLen)
		}
		btext, err := w.Revision(baseRev)
		if err != nil {
			return 0, false, fmt.Errorf("revlog %s: reading delta base %s: %w", w.name, base.Short(), err)
		}
		if text, err = Patch(btext, delta); err != nil {
			return 0, false, corrupt("delta against %s: %w", base.Short(), err)
		}
	}
	// As deltas.py _textfromdelta: no flag newRevInfo lets through
	// exempts the text from its hash, checked as a read checks it; a
	// censorable revlog takes a tombstone with the censored flag.
	switch err := checkNode(w.name, len(w.entries), node, p1, p2, ri.flags, w.opt.Censorable, text); {
	case errors.Is(err, ErrCensored):
	case err != nil:
		return 0, false, err
	case ri.flags&FlagCensored != 0:
		return 0, false, corrupt("node is not censored")
	}
	ri.text = text
	ri.cacheBase, ri.cacheDelta = baseRev, delta
	rev, err = w.add(ri)
	return rev, err == nil, err
}

// isReplaceDelta reports whether delta is one hunk replacing a whole
// text of baseLen bytes (mdiff.replacediffheader).
func isReplaceDelta(delta []byte, baseLen int64) bool {
	if len(delta) < hunkHeaderSize {
		return false
	}
	return binary.BigEndian.Uint32(delta[0:]) == 0 &&
		int64(binary.BigEndian.Uint32(delta[4:])) == baseLen &&
		int(binary.BigEndian.Uint32(delta[8:])) == len(delta)-hunkHeaderSize
}

func replaceHeader(oldLen, newLen int) []byte {
	h := make([]byte, hunkHeaderSize, hunkHeaderSize+newLen)
	binary.BigEndian.PutUint32(h[4:], uint32(oldLen))
	binary.BigEndian.PutUint32(h[8:], uint32(newLen))
	return h
}

// rawSize is revlog.py rawsize: the recorded text length.
func (w *Writer) rawSize(rev int) int64 {
	if rev == NullRev {
		return 0
	}
	if n := w.entries[rev].rawLen; n >= 0 {
		return int64(n)
	}
	t, err := w.Revision(rev)
	if err != nil {
		return 0
	}
	return int64(len(t))
}

func (w *Writer) usable() error {
	if w.closed {
		return fmt.Errorf("revlog %s: %w", w.name, fs.ErrClosed)
	}
	return w.broken
}

// revInfo is what add needs to store a revision (revlogutils.revisioninfo).
type revInfo struct {
	node       Node
	p1r, p2r   int
	link       int
	flags      uint16
	text       []byte
	cacheBase  int    // base of the incoming delta, when cacheDelta != nil
	cacheDelta []byte // the incoming delta (AddDelta)
}

func (w *Writer) newRevInfo(node, p1, p2 Node, linkRev int, flags uint16) (*revInfo, error) {
	// hg refuses these flags when it adds a revision (flagutil's
	// processflagswrite for a text, processflagsraw for a delta).
	if err := checkFlags(w.name, len(w.entries), flags); err != nil {
		return nil, err
	}
	if linkRev < 0 || linkRev > math.MaxInt32 {
		return nil, fmt.Errorf("revlog %s: link revision %d out of range", w.name, linkRev)
	}
	if len(w.entries) >= math.MaxInt32 {
		return nil, fmt.Errorf("revlog %s: too many revisions", w.name)
	}
	ri := &revInfo{node: node, link: linkRev, flags: flags}
	var ok bool
	if ri.p1r, ok = w.Rev(p1); !ok {
		return nil, fmt.Errorf("%w: %s: unknown parent %s of %s", ErrUnknownBase, w.name, p1, node)
	}
	if ri.p2r, ok = w.Rev(p2); !ok {
		return nil, fmt.Errorf("%w: %s: unknown parent %s of %s", ErrUnknownBase, w.name, p2, node)
	}
	return ri, nil
}

// add chooses the stored form of ri, appends its chunk and entry to the
// buffers and splits an inline revlog grown past maxInline.
func (w *Writer) add(ri *revInfo) (int, error) {
	rev := len(w.entries)
	di, err := w.findDelta(ri)
	if err != nil {
		return 0, err
	}
	offset := w.dataEnd(rev)
	chunkLen := int64(len(di.prefix) + len(di.body))
	if offset+chunkLen >= 1<<47 || chunkLen > math.MaxInt32 {
		return 0, fmt.Errorf("revlog %s: data offset %d out of range", w.name, offset+chunkLen)
	}
	if err := w.journalAdd(); err != nil {
		return 0, err
	}
	e := rawEntry{
		offsetFlags: uint64(offset)<<16 | uint64(ri.flags),
		compLen:     int32(chunkLen),
		rawLen:      int32(len(ri.text)),
		base:        int32(di.base),
		link:        int32(ri.link),
		p1:          int32(ri.p1r),
		p2:          int32(ri.p2r),
		node:        ri.node,
	}
	w.entries = append(w.entries, e)
	if w.nodes == nil {
		w.nodes = map[Node]int{}
	}
	w.nodes[ri.node] = rev
	w.appendChainInfo(rev)
	var eb [EntrySize]byte
	w.encodeEntry(eb[:], rev)
	if w.inline {
		w.ibuf = append(w.ibuf, eb[:]...)
		w.ibuf = append(w.ibuf, di.prefix...)
		w.ibuf = append(w.ibuf, di.body...)
	} else {
		w.dbuf = append(w.dbuf, di.prefix...)
		w.dbuf = append(w.dbuf, di.body...)
		w.ibuf = append(w.ibuf, eb[:]...)
	}
	if ri.flags&FlagCensored == 0 {
		w.remember(rev, ri.text)
	}
	if w.opt.Delay {
		return rev, nil
	}
	if w.inline && offset+chunkLen >= maxInline {
		if err := w.split(); err != nil {
			w.broken = fmt.Errorf("revlog %s: splitting inline revlog: %w", w.name, err)
			return 0, w.broken
		}
	}
	if len(w.ibuf)+len(w.dbuf) >= w.bufSize {
		if err := w.Flush(); err != nil {
			return 0, err
		}
	}
	return rev, nil
}

// encodeEntry writes rev's 64-byte index entry, with the header in
// place of revision 0's offset.
func (w *Writer) encodeEntry(b []byte, rev int) {
	e := &w.entries[rev]
	binary.BigEndian.PutUint64(b[0:], e.offsetFlags)
	binary.BigEndian.PutUint32(b[8:], uint32(e.compLen))
	binary.BigEndian.PutUint32(b[12:], uint32(e.rawLen))
	binary.BigEndian.PutUint32(b[16:], uint32(e.base))
	binary.BigEndian.PutUint32(b[20:], uint32(e.link))
	binary.BigEndian.PutUint32(b[24:], uint32(e.p1))
	binary.BigEndian.PutUint32(b[28:], uint32(e.p2))
	copy(b[32:52], e.node[:])
	clear(b[52:EntrySize])
	if rev == 0 {
		hdr := uint32(versionV1)
		if w.inline {
			hdr |= FlagInlineData
		}
		if w.generalDelta {
			hdr |= FlagGeneralDelta
		}
		binary.BigEndian.PutUint32(b[0:], hdr)
	}
}

// journalAdd registers the files about to be written, as revlog.py
// _writing does (data file first).
func (w *Writer) journalAdd() error {
	j := w.opt.Journal
	if !w.inline && !w.dAdded {
		if j != nil {
			if err := j.Add(w.dataName, w.dStart); err != nil {
				return fmt.Errorf("revlog %s: journal: %w", w.name, err)
			}
		}
		w.dAdded = true
	}
	if !w.iAdded {
		if j != nil {
			if err := j.Add(w.name, w.iStart); err != nil {
				return fmt.Errorf("revlog %s: journal: %w", w.name, err)
			}
		}
		w.iAdded = true
	}
	return nil
}

// split converts an inline revlog to index + data files, as revlog.py
// _enforceinlinesize does: the data file is written whole, the index is
// written to a temporary file renamed over the old one, and the journal
// learns the new offsets to roll back to.
func (w *Writer) split() error {
	j := w.opt.Journal
	if !w.dAdded {
		if j != nil {
			if err := j.Add(w.dataName, 0); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
		}
		w.dAdded = true
	}
	if err := w.flushJournal(); err != nil {
		return err
	}
	// The inline file as it will be: what is on disk, then the buffer.
	inl := make([]byte, w.iDisk, w.iDisk+int64(len(w.ibuf)))
	if w.iDisk > 0 {
		f, err := w.file(true)
		if err != nil {
			return err
		}
		if _, err := f.ReadAt(inl, 0); err != nil {
			return fmt.Errorf("reading %s: %w", w.name, err)
		}
	}
	inl = append(inl, w.ibuf...)
	n := len(w.entries)
	end := w.dataEnd(n)
	data := make([]byte, 0, end)
	trIndex := -1
	for rev := range n {
		e := &w.entries[rev]
		pos := int64(e.offsetFlags>>16) + int64(rev+1)*EntrySize
		data = append(data, inl[pos:pos+int64(e.compLen)]...)
		if trIndex < 0 && w.iStart <= pos-EntrySize {
			trIndex = rev
		}
	}
	if trIndex < 0 {
		trIndex = 0
	}
	inl = nil

	dpath := w.path(w.dataName)
	// Truncated, so a link to another file must go first (see file).
	if err := sysio.BreakLink(dpath); err != nil {
		return fmt.Errorf("revlog: %w", err)
	}
	df, err := openWFile(dpath, true)
	if errors.Is(err, fs.ErrNotExist) {
		// A new revlog splitting before its first flush: its directory
		// may not exist yet.
		if err = os.MkdirAll(filepath.Dir(dpath), 0o777); err == nil {
			df, err = openWFile(dpath, true)
		}
	}
	if err != nil {
		return err
	}
	if w.dfile != nil {
		w.dfile.Close()
	}
	w.dfile = df
	if _, err := df.WriteAt(data, 0); err != nil {
		return err
	}
	w.dDisk = int64(len(data))
	w.dbuf = w.dbuf[:0]

	w.inline = false
	idx := make([]byte, n*EntrySize)
	for rev := range n {
		w.encodeEntry(idx[rev*EntrySize:], rev)
	}
	ipath := w.path(w.name)
	tmp, err := createTemp(ipath)
	if err != nil {
		return err
	}
	_, err = tmp.Write(idx)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if j != nil {
		if err := j.Replace(w.dataName, w.dataEnd(trIndex)); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("journal: %w", err)
		}
	}
	// The inline file is closed before it is replaced: Windows refuses
	// to rename over an open file (w.file reopens it if the rename fails).
	if w.ifile != nil {
		w.ifile.Close()
		w.ifile = nil
	}
	if err := os.Rename(tmp.Name(), ipath); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	w.iDisk = int64(len(idx))
	w.ibuf = w.ibuf[:0]
	if j != nil {
		if err := j.Replace(w.name, int64(trIndex)*EntrySize); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

// createTemp creates an empty file next to path, with path's
// permissions when it exists, as hg's atomictempfile does.
func createTemp(path string) (*os.File, error) {
	perm := os.FileMode(0o666) // umask applies
	st, err := os.Stat(path)
	if err == nil {
		perm = st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for range 100 {
		name := fmt.Sprintf("%s/.%s-%08x", filepath.Dir(path), filepath.Base(path), rand.Uint32())
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if st != nil {
			// Exactly the old mode, whatever the umask.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return f, nil
	}
	return nil, fmt.Errorf("creating a temporary file next to %s: too many collisions", path)
}

// Flush writes the pending bytes: data (.d) first, then the index (.i),
// each with one write. It does not fsync.
func (w *Writer) Flush() error {
	if w.broken != nil {
		return w.broken
	}
	if w.closed {
		return fmt.Errorf("revlog %s: %w", w.name, fs.ErrClosed)
	}
	if w.opt.Delay && w.inline && w.dataEnd(len(w.entries)) >= maxInline {
		// The split deferred by Delay writes everything pending.
		if err := w.split(); err != nil {
			w.broken = fmt.Errorf("revlog %s: splitting inline revlog: %w", w.name, err)
			return w.broken
		}
	}
	if len(w.dbuf) > 0 {
		if err := w.writeOut(false); err != nil {
			return err
		}
	}
	if len(w.ibuf) > 0 {
		if err := w.writeOut(true); err != nil {
			return err
		}
	}
	return nil
}

// flushJournal lets a buffering journal write its entries before the
// writer touches a file.
func (w *Writer) flushJournal() error {
	if f, ok := w.opt.Journal.(JournalFlusher); ok {
		if err := f.FlushJournal(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

func (w *Writer) writeOut(index bool) error {
	buf, disk := &w.dbuf, &w.dDisk
	if index {
		buf, disk = &w.ibuf, &w.iDisk
	}
	err := w.flushJournal()
	var f wfile
	if err == nil {
		f, err = w.file(index)
	}
	if err == nil {
		_, err = f.WriteAt(*buf, *disk)
	}
	if err != nil {
		w.broken = fmt.Errorf("revlog %s: writing: %w", w.name, err)
		return w.broken
	}
	*disk += int64(len(*buf))
	if cap(*buf) > 2*w.bufSize {
		*buf = nil
	} else {
		*buf = (*buf)[:0]
	}
	return nil
}

// Close flushes and closes the files. It does not fsync: durability is
// the transaction's business. Close after Close is a no-op.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.Flush()
	w.markClosed()
	w.comp.release()
	for _, f := range []wfile{w.dfile, w.ifile} {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	w.dfile, w.ifile = nil, nil
	return err
}

// Pending returns how many bytes wait in the buffers for Flush.
func (w *Writer) Pending() int { return len(w.ibuf) + len(w.dbuf) }

// EndGroup tells the writer no more revisions will be added before Flush
// or Close: it frees its text cache and keeps only the pending bytes, so
// a caller can keep many finished writers around and flush them
// together (one journal write for a whole changegroup's filelogs).
func (w *Writer) EndGroup() { w.forget() }

// Discard drops the pending bytes and closes the files without writing:
// for a transaction being rolled back, whose playback truncates whatever
// already reached the files. Discard after Close is a no-op.
func (w *Writer) Discard() error {
	if w.closed {
		return nil
	}
	w.markClosed()
	w.ibuf, w.dbuf = nil, nil
	var err error
	for _, f := range []wfile{w.dfile, w.ifile} {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	w.dfile, w.ifile = nil, nil
	return err
}

var _ io.Closer = (*Writer)(nil)
