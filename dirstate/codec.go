package dirstate

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/revlog"
)

// v1 layout (parsers.py pack_dirstate): parents, then entries of a
// 17-byte header (">cllll") and the name.
const (
	v1ParentsSize = 40
	v1HeaderSize  = 17
)

// ParseV1 parses a v1 dirstate. Empty data is an empty dirstate. The
// entries' paths share one copy of data.
func ParseV1(data []byte) (*Dirstate, error) {
	d := &Dirstate{}
	if len(data) == 0 {
		return d, nil
	}
	if len(data) < v1ParentsSize {
		return nil, corrupt("%d bytes: too short for the parents", len(data))
	}
	copy(d.Parents[0][:], data[:20])
	copy(d.Parents[1][:], data[20:40])
	// A first pass over the headers checks the name lengths and counts
	// the entries; the names are then cut from one string holding them
	// all (one allocation, not one per entry). An entry the first pass
	// finds cut short is reported after the entries before it, as a
	// parse in one pass would.
	count := 0
	var cut error
	for pos := v1ParentsSize; pos < len(data); count++ {
		if len(data)-pos < v1HeaderSize {
			cut = corrupt("truncated entry at offset %d", pos)
			break
		}
		n := int64(int32(binary.BigEndian.Uint32(data[pos+13 : pos+17])))
		pos += v1HeaderSize
		if n < 0 || n > int64(len(data)-pos) {
			cut = corrupt("entry at offset %d: name length %d beyond the file", pos-v1HeaderSize, n)
			break
		}
		pos += int(n)
	}
	all := string(data)
	d.Entries = make([]Entry, 0, count)
	for pos := v1ParentsSize; len(d.Entries) < count; {
		h := data[pos : pos+v1HeaderSize]
		n := int(int32(binary.BigEndian.Uint32(h[13:17])))
		pos += v1HeaderSize
		name := all[pos : pos+n]
		pos += n
		path, src, hasCopy := strings.Cut(name, "\x00")
		e, err := fromV1(path, h[0], binary.BigEndian.Uint32(h[1:5]),
			int32(binary.BigEndian.Uint32(h[5:9])), int32(binary.BigEndian.Uint32(h[9:13])))
		if err != nil {
			return nil, err
		}
		if hasCopy {
			e.Copy = src
		}
		d.Entries = append(d.Entries, e)
	}
	if cut != nil {
		return nil, cut
	}
	return d, nil
}

// ReadBackV1 makes d what ParseV1 reads from its v1 encoding (AppendV1),
// in place, without encoding or parsing: the entries tracked anywhere,
// each as v1 keeps it (mtimes to the second, none where ambiguous, no v2
// fallback bits). The mount's daemon keeps the dirstate an update wrote
// so for its next update, in place of a parse of the megabyte it wrote
// (20,000 entries: 1.2 ms and 20,000 names cut from a copy of it). On
// error (AppendV1's), d is left partly changed.
func (d *Dirstate) ReadBackV1() error {
	kept := d.Entries[:0]
	for i := range d.Entries {
		e := &d.Entries[i]
		if !e.anyTracked() {
			continue
		}
		if !v1Encodable(e) {
			return fmt.Errorf("dirstate: invalid path %q", e.Path)
		}
		state, mode, size, mtime := e.V1()
		r, err := fromV1(e.Path, state, mode, size, mtime)
		if err != nil {
			return err
		}
		r.Copy = e.Copy
		kept = append(kept, r)
	}
	clear(d.Entries[len(kept):])
	d.Entries = kept
	return nil
}

// v1Encodable reports whether v1 can record e: its name field (the path,
// and a NUL and the copy source if any) holds no NUL before the copy
// source and fits the length field's 31 bits.
func v1Encodable(e *Entry) bool {
	n := len(e.Path)
	if e.Copy != "" {
		n += 1 + len(e.Copy)
	}
	return strings.IndexByte(e.Path, 0) < 0 && n <= RangeMask
}

// AppendV1 appends the v1 encoding of d to buf. Entries not tracked
// anywhere are left out (hg never records them).
func (d *Dirstate) AppendV1(buf []byte) ([]byte, error) {
	return appendV1(buf, d.Parents, entrySlice(d.Entries))
}

// EntryList is a dirstate's entries read one at a time (EncodeList):
// Len of them, the i'th from At, in the order they are to be recorded.
type EntryList interface {
	Len() int
	At(i int) Entry
}

// entrySlice is a slice of entries as an EntryList.
type entrySlice []Entry

func (s entrySlice) Len() int       { return len(s) }
func (s entrySlice) At(i int) Entry { return s[i] }

// appendV1 is AppendV1 of the entries l with parents.
func appendV1(buf []byte, parents [2]revlog.Node, l EntryList) ([]byte, error) {
	// Grown once: appending 20,000 entries (0.8 MB) to a nil buffer
	// took 30 allocations, 4 MB, and 2.0 ms against 0.6 (a benchmark of
	// such a dirstate); the mount's daemon encodes one every update.
	n := 2 * len(parents[0])
	for i := range l.Len() {
		if e := l.At(i); e.anyTracked() {
			n += v1HeaderSize + len(e.Path)
			if e.Copy != "" {
				n += 1 + len(e.Copy)
			}
		}
	}
	buf = slices.Grow(buf, n)
	buf = append(buf, parents[0][:]...)
	buf = append(buf, parents[1][:]...)
	var h [v1HeaderSize]byte
	for i := range l.Len() {
		e := l.At(i)
		if !e.anyTracked() {
			continue
		}
		if !v1Encodable(&e) {
			return nil, fmt.Errorf("dirstate: invalid path %q", e.Path)
		}
		nameLen := len(e.Path)
		if e.Copy != "" {
			nameLen += 1 + len(e.Copy)
		}
		state, mode, size, mtime := e.V1()
		h[0] = state
		binary.BigEndian.PutUint32(h[1:5], mode)
		binary.BigEndian.PutUint32(h[5:9], uint32(size))
		binary.BigEndian.PutUint32(h[9:13], uint32(mtime))
		binary.BigEndian.PutUint32(h[13:17], uint32(nameLen))
		buf = append(buf, h[:]...)
		buf = append(buf, e.Path...)
		if e.Copy != "" {
			buf = append(buf, 0)
			buf = append(buf, e.Copy...)
		}
	}
	return buf, nil
}

// v2 layout (dirstateutils/v2.py, docket.py).
const (
	docketMarker   = "dirstate-v2\n"
	metaSize       = 44
	nodeSize       = 44
	docketHeader   = len(docketMarker) + 32 + 32 + metaSize + 4 + 1
	maxPathLen     = 0xFFFF
	maxV2DataBytes = 0xFFFFFFFF
)

// v2 node flags.
const (
	flagWCTracked        = 1 << 0
	flagP1Tracked        = 1 << 1
	flagP2Info           = 1 << 2
	flagExecPerm         = 1 << 3
	flagIsSymlink        = 1 << 4
	flagFallbackMask     = 1<<5 | 1<<6 | 1<<7 | 1<<8
	flagExpectedModified = 1 << 9
	flagHasModeSize      = 1 << 10
	flagHasMtime         = 1 << 11
	flagSecondAmbiguous  = 1 << 12
	flagDirectory        = 1 << 13
)

// Docket is a v2 .hg/dirstate.
type Docket struct {
	Parents  [2]revlog.Node
	Meta     [metaSize]byte // tree metadata
	DataSize uint32
	ID       string // the data file's id
}

// DataFile is the data file's name in .hg.
func (dk *Docket) DataFile() string { return "dirstate." + dk.ID }

// ParseDocket parses a v2 docket.
func ParseDocket(data []byte) (*Docket, error) {
	if len(data) < docketHeader || string(data[:len(docketMarker)]) != docketMarker {
		return nil, corrupt("not a dirstate-v2 docket")
	}
	dk := &Docket{}
	p := data[len(docketMarker):]
	copy(dk.Parents[0][:], p[:20])
	copy(dk.Parents[1][:], p[32:52])
	copy(dk.Meta[:], p[64:64+metaSize])
	dk.DataSize = binary.BigEndian.Uint32(p[64+metaSize:])
	n := int(data[docketHeader-1])
	if len(data)-docketHeader < n {
		return nil, corrupt("docket: data file id of %d bytes truncated", n)
	}
	dk.ID = string(data[docketHeader : docketHeader+n])
	for _, c := range []byte(dk.ID) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return nil, corrupt("docket: invalid data file id %q", dk.ID)
		}
	}
	if dk.ID == "" && dk.DataSize != 0 {
		return nil, corrupt("docket: data without a data file")
	}
	return dk, nil
}

// Encode renders the docket.
func (dk *Docket) Encode() []byte {
	b := make([]byte, 0, docketHeader+len(dk.ID))
	b = append(b, docketMarker...)
	var pad [12]byte
	b = append(b, dk.Parents[0][:]...)
	b = append(b, pad[:]...)
	b = append(b, dk.Parents[1][:]...)
	b = append(b, pad[:]...)
	b = append(b, dk.Meta[:]...)
	b = binary.BigEndian.AppendUint32(b, dk.DataSize)
	b = append(b, byte(len(dk.ID)))
	return append(b, dk.ID...)
}

// ParseV2 parses the data file of docket dk (at least DataSize bytes;
// the rest is ignored, as hg ignores what another writer appended).
func ParseV2(dk *Docket, data []byte) (*Dirstate, error) {
	if int64(len(data)) < int64(dk.DataSize) {
		return nil, corrupt("data file of %d bytes, the docket says %d", len(data), dk.DataSize)
	}
	data = data[:dk.DataSize]
	d := &Dirstate{Parents: dk.Parents}
	rootStart := binary.BigEndian.Uint32(dk.Meta[0:4])
	rootCount := binary.BigEndian.Uint32(dk.Meta[4:8])
	type span struct{ start, count uint32 }
	stack := []span{{rootStart, rootCount}}
	// Every node visited is one the data can hold, at most: a tree whose
	// child pointers loop is refused there.
	budget := len(data) / nodeSize
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.count == 0 {
			continue
		}
		if int64(s.count) > int64(budget) {
			return nil, corrupt("more nodes than the data file holds")
		}
		budget -= int(s.count)
		end := int64(s.start) + int64(s.count)*nodeSize
		if end > int64(len(data)) {
			return nil, corrupt("nodes at offset %d beyond the data", s.start)
		}
		for i := uint32(0); i < s.count; i++ {
			n := data[int64(s.start)+int64(i)*nodeSize:]
			pathStart := binary.BigEndian.Uint32(n[0:4])
			pathLen := binary.BigEndian.Uint16(n[4:6])
			copyStart := binary.BigEndian.Uint32(n[8:12])
			copyLen := binary.BigEndian.Uint16(n[12:14])
			childStart := binary.BigEndian.Uint32(n[14:18])
			childCount := binary.BigEndian.Uint32(n[18:22])
			flags := binary.BigEndian.Uint16(n[30:32])
			size := int32(binary.BigEndian.Uint32(n[32:36]))
			mtimeS := int32(binary.BigEndian.Uint32(n[36:40]))
			mtimeNs := binary.BigEndian.Uint32(n[40:44])
			if childCount > 0 {
				stack = append(stack, span{childStart, childCount})
			}
			e := fromV2(flags, size, mtimeS, mtimeNs)
			if !e.anyTracked() {
				continue
			}
			path, ok := slice(data, pathStart, pathLen)
			if !ok || len(path) == 0 {
				return nil, corrupt("node path at offset %d beyond the data", pathStart)
			}
			e.Path = string(path)
			if copyStart != 0 {
				src, ok := slice(data, copyStart, copyLen)
				if !ok {
					return nil, corrupt("copy source at offset %d beyond the data", copyStart)
				}
				e.Copy = string(src)
			}
			d.Entries = append(d.Entries, e)
		}
	}
	return d, nil
}

func slice(data []byte, start uint32, n uint16) ([]byte, bool) {
	end := int64(start) + int64(n)
	if end > int64(len(data)) {
		return nil, false
	}
	return data[start:end], true
}

// fromV2 is DirstateItem.from_v2_data.
func fromV2(flags uint16, size, mtimeS int32, mtimeNs uint32) Entry {
	e := Entry{
		WCTracked: flags&flagWCTracked != 0,
		P1Tracked: flags&flagP1Tracked != 0,
		P2Info:    flags&flagP2Info != 0,
		Fallback:  flags & flagFallbackMask,
	}
	hasModeSize := flags&flagHasModeSize != 0
	hasMtime := flags&flagHasMtime != 0
	if flags&flagExpectedModified != 0 {
		hasModeSize, hasMtime = false, false
	}
	if hasModeSize {
		e.HasModeSize, e.Size = true, size
		e.Mode = ModeRegular | 0o644
		if flags&flagExecPerm != 0 {
			e.Mode = ModeRegular | 0o755
		}
		if flags&flagIsSymlink != 0 {
			e.Mode = e.Mode&^modeType | ModeSymlink
		}
	}
	if hasMtime {
		e.HasMtime = true
		e.Mtime = Timestamp{Sec: mtimeS, Nsec: mtimeNs, SecondAmbiguous: flags&flagSecondAmbiguous != 0}
	}
	return e
}

// v2Flags is DirstateItem.v2_data.
func (e *Entry) v2Data() (flags uint16, size, mtimeS int32, mtimeNs uint32) {
	if e.WCTracked {
		flags |= flagWCTracked
	}
	if e.P1Tracked {
		flags |= flagP1Tracked
	}
	if e.P2Info {
		flags |= flagP2Info
	}
	if e.HasModeSize {
		flags |= flagHasModeSize
		if e.Mode&0o100 != 0 {
			flags |= flagExecPerm
		}
		if IsSymlink(e.Mode) {
			flags |= flagIsSymlink
		}
		size = e.Size
	}
	if e.HasMtime {
		flags |= flagHasMtime
		if e.Mtime.SecondAmbiguous {
			flags |= flagSecondAmbiguous
		}
		mtimeS, mtimeNs = e.Mtime.Sec, e.Mtime.Nsec
	}
	flags |= e.Fallback & flagFallbackMask
	return
}

// tnode is a node of the tree EncodeV2 builds.
type tnode struct {
	path     string
	entry    *Entry
	children map[string]*tnode // by base name
	// filled by the write
	childStart, childCount     uint32
	withEntry, trackedChildren uint32
}

// EncodeV2 renders d's entries as a v2 data file and its tree metadata.
// Children are written before their parent, siblings sorted by name, as
// v2.pack_dirstate does.
func (d *Dirstate) EncodeV2() (data []byte, meta [metaSize]byte, err error) {
	root := &tnode{}
	var withEntry, withCopy uint32
	for i := range d.Entries {
		e := &d.Entries[i]
		if !e.anyTracked() {
			continue
		}
		if e.Path == "" || len(e.Path) > maxPathLen || len(e.Copy) > maxPathLen ||
			strings.HasPrefix(e.Path, "/") || strings.HasSuffix(e.Path, "/") || strings.Contains(e.Path, "//") {
			return nil, meta, fmt.Errorf("dirstate: invalid path %q", e.Path)
		}
		n := root
		rest := e.Path
		for {
			name, tail, more := strings.Cut(rest, "/")
			if n.children == nil {
				n.children = map[string]*tnode{}
			}
			c := n.children[name]
			if c == nil {
				c = &tnode{path: e.Path[:len(e.Path)-len(rest)+len(name)]}
				n.children[name] = c
			}
			n = c
			if !more {
				break
			}
			rest = tail
		}
		if n.entry != nil {
			return nil, meta, fmt.Errorf("dirstate: %q recorded twice", e.Path)
		}
		n.entry = e
		withEntry++
		if e.Copy != "" {
			withCopy++
		}
	}
	w := &v2Writer{}
	w.children(root)
	if w.err != nil {
		return nil, meta, w.err
	}
	binary.BigEndian.PutUint32(meta[0:4], root.childStart)
	binary.BigEndian.PutUint32(meta[4:8], root.childCount)
	binary.BigEndian.PutUint32(meta[8:12], withEntry)
	binary.BigEndian.PutUint32(meta[12:16], withCopy)
	return w.data, meta, nil
}

type v2Writer struct {
	data []byte
	err  error
}

// children writes n's children (their subtrees first, then their paths,
// then their nodes) and sets n's child span and counters.
func (w *v2Writer) children(n *tnode) {
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	kids := make([]*tnode, len(names))
	for i, name := range names {
		c := n.children[name]
		kids[i] = c
		if len(c.children) > 0 {
			w.children(c)
		}
		n.withEntry += c.withEntry
		n.trackedChildren += c.trackedChildren
		if c.entry != nil {
			n.withEntry++
			if c.entry.WCTracked {
				n.trackedChildren++
			}
		}
	}
	packed := make([]byte, 0, len(kids)*nodeSize)
	for _, c := range kids {
		pathStart := uint32(len(w.data))
		w.data = append(w.data, c.path...)
		var copyStart uint32
		var copyLen uint16
		var flags uint16 = flagDirectory
		var size, mtimeS int32
		var mtimeNs uint32
		if c.entry != nil {
			if c.entry.Copy != "" {
				copyStart, copyLen = uint32(len(w.data)), uint16(len(c.entry.Copy))
				w.data = append(w.data, c.entry.Copy...)
			}
			flags, size, mtimeS, mtimeNs = c.entry.v2Data()
		}
		base := strings.LastIndexByte(c.path, '/') + 1
		packed = binary.BigEndian.AppendUint32(packed, pathStart)
		packed = binary.BigEndian.AppendUint16(packed, uint16(len(c.path)))
		packed = binary.BigEndian.AppendUint16(packed, uint16(base))
		packed = binary.BigEndian.AppendUint32(packed, copyStart)
		packed = binary.BigEndian.AppendUint16(packed, copyLen)
		packed = binary.BigEndian.AppendUint32(packed, c.childStart)
		packed = binary.BigEndian.AppendUint32(packed, c.childCount)
		packed = binary.BigEndian.AppendUint32(packed, c.withEntry)
		packed = binary.BigEndian.AppendUint32(packed, c.trackedChildren)
		packed = binary.BigEndian.AppendUint16(packed, flags)
		packed = binary.BigEndian.AppendUint32(packed, uint32(size))
		packed = binary.BigEndian.AppendUint32(packed, uint32(mtimeS))
		packed = binary.BigEndian.AppendUint32(packed, mtimeNs)
	}
	n.childStart, n.childCount = uint32(len(w.data)), uint32(len(kids))
	w.data = append(w.data, packed...)
	if int64(len(w.data)) > maxV2DataBytes {
		w.err = fmt.Errorf("dirstate: v2 data beyond 4 GiB")
	}
}
