package changegroup

// Changegroup stream layout, as mercurial/changegroup.py (cg1unpacker,
// cg2unpacker, cg3unpacker) reads it and `hg help internals.changegroups`
// describes it:
//
//	chunk        int32 length (big-endian, counting itself) + data;
//	             length 0 is the "empty chunk", 1..4 are invalid
//	             ("invalid chunk length %d")
//	changegroup  changelog group, manifest group,
//	             cg3 only: tree manifest groups (name chunk + group each),
//	                       then an empty chunk,
//	             file groups (name chunk + group each), then an empty chunk
//	group        delta chunks, then an empty chunk
//	delta chunk  delta header + delta (mpatch hunks, `hg help internals.bdiff`)
//	  cg1 header node p1 p2 linknode                 (80 bytes; base implied)
//	  cg2 header node p1 p2 base linknode            (100 bytes)
//	  cg3 header node p1 p2 base linknode flags:u16  (102 bytes)
//
// In cg1 a delta applies to the previous revision of its group, or to p1
// for the first one. Keep in sync with mercurial/changegroup.py.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// Changegroup versions this package reads and writes. "04" (sidedata) is
// refused with ErrUnsupported.
const (
	Version1 = "01"
	Version2 = "02"
	Version3 = "03"
)

// Delta header sizes; keep in sync with _CHANGEGROUPV*_DELTA_HEADER in
// mercurial/changegroup.py.
const (
	headerSizeV1 = 80
	headerSizeV2 = 100
	headerSizeV3 = 102
)

const (
	// maxNameLen bounds a file name chunk. Mercurial has no limit of its
	// own, but no operating system checks out a path this long.
	maxNameLen = 64 << 10
	// initialDataAlloc is the most a delta buffer grows by before the bytes
	// behind a chunk length have actually arrived: memory follows the input
	// read, not the (untrusted) length field.
	initialDataAlloc = 1 << 20
)

// GroupKind says which revlog a group of deltas belongs to.
type GroupKind int

// Group kinds, in the order a changegroup carries them.
const (
	Changelog GroupKind = iota
	Manifest
	File
)

func (k GroupKind) String() string {
	switch k {
	case Changelog:
		return "changelog"
	case Manifest:
		return "manifest"
	case File:
		return "file"
	}
	return fmt.Sprintf("GroupKind(%d)", int(k))
}

// Delta is one revision of a group, as a delta against Base.
type Delta struct {
	Node, P1, P2 [20]byte
	// Base is the revision the delta applies to (the null node: the empty
	// text). For cg1 it is resolved: the previous node of the group, or P1
	// for the first delta.
	Base [20]byte
	// LinkNode is the changeset the revision belongs to.
	LinkNode [20]byte
	Flags    uint16 // revlog flags (cg3); 0 otherwise
	// Data is the delta (mpatch hunks). It is valid until the next
	// NextDelta call.
	Data []byte
}

// Reader decodes a raw changegroup stream. It is not safe for concurrent
// use.
type Reader struct {
	r       *bufio.Reader
	version string
	hdrSize int

	off     int64 // stream offset, for error messages
	stage   int   // next segment: stageChangelog ... stageEnd
	inGroup bool  // deltas may remain in the current group
	kind    GroupKind
	name    string
	prev    [20]byte // previous node of the group (cg1 delta base)
	nDeltas int      // deltas read in the current group
	buf     []byte
	err     error // sticky: once failed, always failed

	// requireEOF makes the stream end with the changegroup: bundles set
	// it where hg asserts that (bundle2 parts) and where reading on to the
	// end verifies a compressed stream's checksum.
	requireEOF bool
}

const (
	stageChangelog = iota
	stageManifest
	stageTrees // cg3: the tree manifest list
	stageFiles
	stageEnd
)

// NewReader reads a raw changegroup stream of version "01", "02" or "03".
func NewReader(r io.Reader, version string) (*Reader, error) {
	cr := &Reader{version: version}
	switch version {
	case Version1:
		cr.hdrSize = headerSizeV1
	case Version2:
		cr.hdrSize = headerSizeV2
	case Version3:
		cr.hdrSize = headerSizeV3
	default:
		return nil, unsupportedf("changegroup version %q (supported: 01, 02, 03)", version)
	}
	if br, ok := r.(*bufio.Reader); ok {
		cr.r = br
	} else {
		cr.r = bufio.NewReaderSize(r, 64<<10)
	}
	return cr, nil
}

// Version returns the changegroup version ("01", "02" or "03").
func (r *Reader) Version() string { return r.version }

// Offset returns the number of changegroup bytes consumed so far.
func (r *Reader) Offset() int64 { return r.off }

// NextGroup moves to the next group, skipping what is left of the current
// one: Changelog, then Manifest, then one File group per file (name is the
// tracked path, checked safe: relative, no "..", NUL or newline). It
// returns io.EOF after the last group. cg3 tree manifest groups are
// refused with ErrUnsupported.
func (r *Reader) NextGroup() (kind GroupKind, name string, err error) {
	if r.err != nil {
		return 0, "", r.err
	}
	kind, name, err = r.nextGroup()
	if err != nil && err != io.EOF {
		r.err = err
	}
	return kind, name, err
}

func (r *Reader) nextGroup() (GroupKind, string, error) {
	for r.inGroup {
		var d Delta
		if _, err := r.NextDelta(&d); err != nil {
			return 0, "", err
		}
	}
	switch r.stage {
	case stageChangelog:
		r.stage = stageManifest
		return r.enter(Changelog, "")
	case stageManifest:
		r.stage = stageTrees
		if r.version != Version3 {
			r.stage = stageFiles
		}
		return r.enter(Manifest, "")
	case stageTrees:
		off := r.off
		n, err := r.chunkLen("tree manifest header")
		if err != nil {
			return 0, "", err
		}
		if n != 0 {
			return 0, "", unsupportedf("tree manifests are not supported (tree manifest group at offset %d)", off)
		}
		r.stage = stageFiles
		fallthrough
	case stageFiles:
		off := r.off
		n, err := r.chunkLen("file header")
		if err != nil {
			return 0, "", err
		}
		if n == 0 {
			r.stage = stageEnd
			r.buf = nil
			if r.requireEOF {
				if _, err := r.r.ReadByte(); err == nil {
					return 0, "", corruptf("data after the end of the changegroup at offset %d", r.off)
				} else if err != io.EOF {
					return 0, "", fmt.Errorf("after the changegroup at offset %d: %w", r.off, err)
				}
			}
			return 0, "", io.EOF
		}
		if n > maxNameLen {
			return 0, "", corruptf("file name of %d bytes at offset %d (limit %d)", n, off, maxNameLen)
		}
		b := make([]byte, n)
		if err := r.readFull(b, "file name"); err != nil {
			return 0, "", err
		}
		name := string(b)
		if err := CheckPath(name); err != nil {
			return 0, "", fmt.Errorf("file group at offset %d: %w", off, err)
		}
		return r.enter(File, name)
	}
	return 0, "", io.EOF
}

func (r *Reader) enter(kind GroupKind, name string) (GroupKind, string, error) {
	r.kind, r.name = kind, name
	r.inGroup = true
	r.nDeltas = 0
	return kind, name, nil
}

// NextDelta fills d with the next delta of the current group. It returns
// false at the end of the group (and before the first NextGroup).
func (r *Reader) NextDelta(d *Delta) (bool, error) {
	if r.err != nil {
		return false, r.err
	}
	if !r.inGroup {
		return false, nil
	}
	ok, err := r.nextDelta(d)
	if err != nil {
		r.err = err
		r.inGroup = false
	}
	return ok, err
}

func (r *Reader) nextDelta(d *Delta) (bool, error) {
	off := r.off
	n, err := r.chunkLen("delta chunk")
	if err != nil {
		return false, err
	}
	if n == 0 {
		r.inGroup = false
		return false, nil
	}
	if n < r.hdrSize {
		return false, corruptf("%s: delta chunk of %d bytes at offset %d is shorter than its %d-byte header",
			r.group(), n, off, r.hdrSize)
	}
	var h [headerSizeV3]byte
	if err := r.readFull(h[:r.hdrSize], "delta header"); err != nil {
		return false, err
	}
	copy(d.Node[:], h[0:20])
	copy(d.P1[:], h[20:40])
	copy(d.P2[:], h[40:60])
	switch r.version {
	case Version1:
		copy(d.LinkNode[:], h[60:80])
		if r.nDeltas == 0 {
			d.Base = d.P1
		} else {
			d.Base = r.prev
		}
		d.Flags = 0
	default:
		copy(d.Base[:], h[60:80])
		copy(d.LinkNode[:], h[80:100])
		d.Flags = 0
		if r.version == Version3 {
			d.Flags = binary.BigEndian.Uint16(h[100:102])
		}
	}
	data, err := r.readData(n - r.hdrSize)
	if err != nil {
		return false, err
	}
	d.Data = data
	r.prev = d.Node
	r.nDeltas++
	return true, nil
}

func (r *Reader) group() string {
	if r.kind == File {
		return fmt.Sprintf("file group %q", r.name)
	}
	return r.kind.String() + " group"
}

// chunkLen reads a chunk length and returns the size of the data that
// follows (0 for the empty chunk).
func (r *Reader) chunkLen(what string) (int, error) {
	off := r.off
	var b [4]byte
	if err := r.readFull(b[:], what+" length"); err != nil {
		return 0, err
	}
	l := int32(binary.BigEndian.Uint32(b[:]))
	if l <= 4 {
		if l != 0 {
			return 0, corruptf("invalid chunk length %d at offset %d", l, off)
		}
		return 0, nil
	}
	return int(l - 4), nil
}

// readData reads n bytes into the reused buffer, growing it only as the
// bytes arrive.
func (r *Reader) readData(n int) ([]byte, error) {
	buf := r.buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			c := 2 * cap(buf)
			if c < 4096 {
				c = 4096
			}
			if c > len(buf)+initialDataAlloc {
				c = len(buf) + initialDataAlloc
			}
			if c > n {
				c = n
			}
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = nb
		}
		k := min(n, cap(buf)) - len(buf)
		if err := r.readFull(buf[len(buf):len(buf)+k], "delta data"); err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+k]
	}
	r.buf = buf
	return buf, nil
}

func (r *Reader) readFull(b []byte, what string) error {
	n, err := io.ReadFull(r.r, b)
	r.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corruptf("stream ended unexpectedly reading %s at offset %d", what, r.off)
		}
		return fmt.Errorf("reading %s at offset %d: %w", what, r.off, err)
	}
	return nil
}

// maxPathLen is the longest tracked path whose filelog names
// ("data/PATH.i", ".d") Mercurial can store (store.MaxNameLen).
const maxPathLen = store.MaxNameLen - len("data/") - len(".i")

// CheckPath reports whether a file name from a changegroup is safe to use
// as a tracked path: not empty, not longer than Mercurial can store,
// relative, without "." or ".." components, NUL, CR or LF (Mercurial's
// manifest format cannot even carry the last three). The error wraps
// ErrCorrupt.
func CheckPath(name string) error {
	switch {
	case name == "":
		return corruptf("empty file name")
	case len(name) > maxPathLen:
		return corruptf("file name of %d bytes, more than Mercurial can store (%d)", len(name), maxPathLen)
	case strings.ContainsAny(name, "\x00\n\r"):
		return corruptf("file name %q contains NUL or a newline", name)
	case strings.HasPrefix(name, "/"):
		return corruptf("file name %q is absolute", name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c == "." || c == ".." {
			return corruptf("file name %q has an empty, \".\" or \"..\" component", name)
		}
	}
	return nil
}
