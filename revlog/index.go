package revlog

// Index format, version 1 ("RevlogNG"), as written by Mercurial 6.3.
// Keep in sync with mercurial/revlogutils/constants.py and pure/parsers.py.
//
// The index is a sequence of 64-byte big-endian entries:
//
//	offset  size  field
//	0       6     data offset of the chunk (48 bits)
//	6       2     revision flags (REVIDX_*)
//	8       4     compressed (stored) chunk length
//	12      4     uncompressed (raw text) length, -1 if unknown
//	16      4     base revision (delta base with generaldelta, else chain base)
//	20      4     link revision (changelog revision introducing this one)
//	24      4     parent 1 revision, -1 for none
//	28      4     parent 2 revision, -1 for none
//	32      20    node
//	52      12    padding (zero)
//
// The first 4 bytes of entry 0 are overwritten by the header: the format
// version in the low 16 bits, format flags (inline, generaldelta) above.
// Revision 0's data offset is therefore always 0.
//
// An inline revlog interleaves each entry with its chunk in the .i file
// (entry 0, chunk 0, entry 1, chunk 1, ...); otherwise chunks live in the
// .d file at their data offset.

import (
	"encoding/binary"
	"fmt"
)

// EntrySize is the size of a version 1 index entry.
const EntrySize = 64

// Revlog format versions and header flags.
// Keep in sync with mercurial/revlogutils/constants.py.
const (
	versionV0          = 0
	versionV1          = 1
	versionV2          = 0xDEAD // REVLOGV2, experimental, not read here
	versionChangelogV2 = 0xD34D // CHANGELOGV2, experimental, not read here

	FlagInlineData   = 1 << 16 // FLAG_INLINE_DATA
	FlagGeneralDelta = 1 << 17 // FLAG_GENERALDELTA

	supportedV1Flags = FlagInlineData | FlagGeneralDelta // REVLOGV1_FLAGS
)

// Revision flags (Entry.Flags).
// Keep in sync with mercurial/interfaces/repository.py REVISION_FLAG_* and
// mercurial/revlogutils/flagutil.py.
const (
	FlagCensored      = 1 << 15 // REVIDX_ISCENSORED: content replaced by a tombstone
	FlagEllipsis      = 1 << 14 // REVIDX_ELLIPSIS: narrow ellipsis node (refused: *FlagError)
	FlagExtStored     = 1 << 13 // REVIDX_EXTSTORED: raw text is an lfs pointer (refused: *FlagError)
	FlagHasCopiesInfo = 1 << 12 // REVIDX_HASCOPIESINFO: changeset carries copy info

	// KnownRevisionFlags is REVIDX_KNOWN_FLAGS.
	KnownRevisionFlags = FlagCensored | FlagEllipsis | FlagExtStored | FlagHasCopiesInfo
)

// Entry is one index entry with its revision numbers checked: parents and
// base are NullRev or refer to earlier revisions (or to itself for a full
// snapshot's base).
type Entry struct {
	Offset        int64  // data offset (48 bits of the first field)
	Flags         uint16 // revision flags (censored, ellipsis, extstored, ...)
	CompressedLen int64  // stored chunk length
	RawLen        int64  // full-text length as recorded (-1 if unknown)
	BaseRev       int    // delta base as stored (generaldelta) / chain base (legacy)
	LinkRev       int
	P1, P2        int // NullRev for none
	Node          Node
}

// header is the parsed first 4 bytes of an index.
type header struct {
	version      uint16
	inline       bool
	generalDelta bool
}

// parseHeader decodes and validates the version word of entry 0.
func parseHeader(name string, b []byte) (header, error) {
	var h header
	if len(b) < 4 {
		// An empty index is an empty revlog; hg then uses the default
		// header, and nothing depends on it for reading.
		h.version = versionV1
		return h, nil
	}
	word := binary.BigEndian.Uint32(b)
	version, flags := word&0xFFFF, word&^0xFFFF
	switch version {
	case versionV1:
	case versionV0:
		return h, fmt.Errorf("%w: %s: revlog version 0 (pre-2006 format) is not supported", ErrUnsupported, name)
	case versionV2, versionChangelogV2:
		return h, fmt.Errorf("%w: %s: experimental revlog version %#x is not supported", ErrUnsupported, name, version)
	default:
		return h, &HeaderError{fmt.Sprintf("unknown version (%d) in", version), displayID(name)}
	}
	if flags&^supportedV1Flags != 0 {
		return h, &HeaderError{fmt.Sprintf("unknown flags (%s) in version %d", pyHex04(flags>>16), version), displayID(name)}
	}
	h.version = uint16(version)
	h.inline = flags&FlagInlineData != 0
	h.generalDelta = flags&FlagGeneralDelta != 0
	return h, nil
}

// rawEntry is an index entry as stored: revision numbers are unchecked
// until checkEntries has run over the whole index.
type rawEntry struct {
	offsetFlags uint64
	compLen     int32
	rawLen      int32
	base        int32
	link        int32
	p1, p2      int32
	node        Node
}

func decodeEntry(b []byte, rev int) rawEntry {
	e := rawEntry{
		offsetFlags: binary.BigEndian.Uint64(b[0:8]),
		compLen:     int32(binary.BigEndian.Uint32(b[8:12])),
		rawLen:      int32(binary.BigEndian.Uint32(b[12:16])),
		base:        int32(binary.BigEndian.Uint32(b[16:20])),
		link:        int32(binary.BigEndian.Uint32(b[20:24])),
		p1:          int32(binary.BigEndian.Uint32(b[24:28])),
		p2:          int32(binary.BigEndian.Uint32(b[28:32])),
	}
	copy(e.node[:], b[32:52])
	if rev == 0 {
		// The header occupies the high bytes; hg forces offset 0.
		e.offsetFlags &= 0xFFFF
	}
	return e
}

// parseIndex splits index bytes into raw entries. For an inline revlog it
// walks entry, chunk, entry, chunk... and also returns each revision's data
// position in b.
func parseIndex(b []byte, inline bool) (entries []rawEntry, inlinePos []int64, err error) {
	if !inline {
		if len(b)%EntrySize != 0 {
			return nil, nil, fmt.Errorf("index size %d is not a multiple of %d (truncated?)", len(b), EntrySize)
		}
		n := len(b) / EntrySize
		entries = make([]rawEntry, n)
		for i := range entries {
			entries[i] = decodeEntry(b[i*EntrySize:], i)
		}
		return entries, nil, nil
	}
	// Inline: count first so the slices are sized by what the bytes prove.
	n := 0
	for pos := int64(0); pos < int64(len(b)); n++ {
		if int64(len(b))-pos < EntrySize {
			return nil, nil, fmt.Errorf("truncated index entry %d at offset %d", n, pos)
		}
		cl := int32(binary.BigEndian.Uint32(b[pos+8:]))
		if cl < 0 {
			return nil, nil, fmt.Errorf("rev %d: negative compressed length %d", n, cl)
		}
		pos += EntrySize + int64(cl)
		if pos > int64(len(b)) {
			return nil, nil, fmt.Errorf("rev %d: chunk of %d bytes runs past end of inline index (%d bytes)", n, cl, len(b))
		}
	}
	entries = make([]rawEntry, n)
	inlinePos = make([]int64, n)
	pos := int64(0)
	for i := range entries {
		entries[i] = decodeEntry(b[pos:], i)
		inlinePos[i] = pos + EntrySize
		pos += EntrySize + int64(entries[i].compLen)
	}
	return entries, inlinePos, nil
}

// checkEntry validates one raw entry's revision numbers against its
// position, so that every later use (chain walks, parent lookups, array
// indexing) stays in range. rev must be its index in the revlog.
func checkEntry(e *rawEntry, rev int, generalDelta bool) error {
	if e.compLen < 0 {
		return fmt.Errorf("negative compressed length %d", e.compLen)
	}
	if e.rawLen < -1 {
		return fmt.Errorf("invalid uncompressed length %d", e.rawLen)
	}
	if off := e.offsetFlags >> 16; off > 1<<47 {
		return fmt.Errorf("data offset %d out of range", off)
	}
	if e.link < 0 {
		return fmt.Errorf("invalid link revision %d", e.link)
	}
	for _, p := range [2]int32{e.p1, e.p2} {
		if p < NullRev || int(p) >= rev {
			return fmt.Errorf("parent revision %d out of range (must be -1 or below %d)", p, rev)
		}
	}
	if generalDelta {
		// base == -1: a delta against the empty text (hg's null entry).
		if e.base < NullRev || int(e.base) > rev {
			return fmt.Errorf("delta base %d out of range [-1, %d]", e.base, rev)
		}
	} else if e.base < 0 || int(e.base) > rev {
		return fmt.Errorf("chain base %d out of range [0, %d]", e.base, rev)
	}
	return nil
}

// loadIndex parses a whole index and checks every entry, for a Revlog
// and a Writer alike (Open and OpenWriter), so both refuse the same
// indexes with the same words. inlinePos is as parseIndex gives it.
func loadIndex(name string, b []byte) (hdr header, entries []rawEntry, inlinePos []int64, err error) {
	if hdr, err = parseHeader(name, b); err != nil {
		return hdr, nil, nil, err
	}
	if entries, inlinePos, err = parseIndex(b, hdr.inline); err != nil {
		return hdr, nil, nil, &CorruptError{File: name, Rev: -1, Offset: -1, Err: err}
	}
	for i := range entries {
		if err := checkEntry(&entries[i], i, hdr.generalDelta); err != nil {
			return hdr, nil, nil, &CorruptError{File: name, Rev: i, Offset: entryOffset(inlinePos, i), Err: err}
		}
	}
	return hdr, entries, inlinePos, nil
}

// entryOffset is the position of rev's index entry in the .i file, given
// the chunk positions of an inline index (nil for a split one).
func entryOffset(inlinePos []int64, rev int) int64 {
	if inlinePos != nil {
		return inlinePos[rev] - EntrySize
	}
	return int64(rev) * EntrySize
}

// checkInlinePos checks that an inline entry's recorded data offset puts
// its chunk where the walk of the index found it (pos): hg reads an
// inline chunk at offset + (rev+1)*64, the walk by chunk lengths; they
// agree in a sound file.
func checkInlinePos(name string, e *rawEntry, rev int, pos int64) error {
	skip := int64(rev+1) * EntrySize
	if off := int64(e.offsetFlags >> 16); off+skip != pos {
		return &CorruptError{File: name, Rev: rev, Offset: pos - EntrySize,
			Err: fmt.Errorf("data offset %d disagrees with inline position %d", off, pos-skip)}
	}
	return nil
}

func (e *rawEntry) entry() Entry {
	return Entry{
		Offset:        int64(e.offsetFlags >> 16),
		Flags:         uint16(e.offsetFlags),
		CompressedLen: int64(e.compLen),
		RawLen:        int64(e.rawLen),
		BaseRev:       int(e.base),
		LinkRev:       int(e.link),
		P1:            int(e.p1),
		P2:            int(e.p2),
		Node:          e.node,
	}
}

// pyHex04 formats v as Python's "%#04x" does (hg's message format).
func pyHex04(v uint32) string {
	if v < 0x10 {
		return fmt.Sprintf("0x0%x", v)
	}
	return fmt.Sprintf("%#x", v)
}
