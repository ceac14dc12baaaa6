package store

// The obsstore (.hg/store/obsstore) holds obsolescence markers; a bundle2
// "obsmarkers" part carries markers in the same encoding. Layout (keep in
// sync with mercurial/obsolete.py):
//
//	byte 0: format version, 0 or 1; then markers.
//	version 1 (_fm1readmarkers, _fm1encodeonemarker), each marker:
//	  uint32 size (whole marker), float64 date, int16 tz (minutes),
//	  uint16 flags, uint8 #successors, uint8 #parents (3: none
//	  recorded), uint8 #metadata, precursor (20 bytes; 32 with flag
//	  16), successors, parents, #metadata (keylen, vallen) byte pairs,
//	  then each key and value.
//	version 0 (_fm0readmarkers, _fm0encodeonemarker), each marker:
//	  uint8 #successors, uint32 metadata size, uint8 flags, precursor
//	  (20 bytes), successors, then the metadata: "key:value" entries
//	  joined by NUL, sorted by key, holding the date ("date": "<float
//	  repr> <tz seconds>") and parents ("p0": none, "p1", "p2": hex).
//
// All integers are big endian. A marker is the tuple hg compares whole
// (precursor, successors, flags, metadata, date, parents): adding a
// marker equal to one already stored adds nothing (obsstore.add).

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrObsstore means obsstore data is malformed.
var ErrObsstore = errors.New("malformed obsstore")

// Obsstore format versions.
const (
	ObsFormat0 = 0
	ObsFormat1 = 1
)

// ObsFlagSHA256 marks a marker whose nodes are 32 bytes (usingsha256).
const ObsFlagSHA256 = 16

// ObsFlagBumpedFix marks a marker that fixes a phase-divergent
// changeset (bumpedfix): it does not make its successors divergent.
const ObsFlagBumpedFix = 1

const (
	obsFixed1    = 4 + 8 + 2 + 2 + 1 + 1 + 1
	obsFixed0    = 1 + 4 + 1 + 20
	obsNoParents = 3 // _fm1parentnone
)

// ObsMarker is one obsolescence marker: Prec was rewritten as Succs (none:
// pruned). Nodes are raw bytes (20, or 32 with ObsFlagSHA256).
type ObsMarker struct {
	Prec  []byte
	Succs [][]byte
	Flags uint16
	// Meta holds the metadata pairs in stored order (version 0 sorts
	// them by key).
	Meta [][2]string
	// Date is seconds since the epoch; TZ the offset in seconds (hg's
	// date tuple; version 1 stores TZ in minutes).
	Date float64
	TZ   int
	// Parents are the precursor's parents when recorded (HasParents).
	Parents    [][]byte
	HasParents bool
}

// Key is the marker's identity: two markers hg considers equal have the
// same key.
func (m *ObsMarker) Key() string {
	var b bytes.Buffer
	node := func(n []byte) { b.WriteByte(byte(len(n))); b.Write(n) }
	node(m.Prec)
	b.WriteByte(byte(len(m.Succs)))
	for _, s := range m.Succs {
		node(s)
	}
	var num [8]byte
	binary.BigEndian.PutUint16(num[:], m.Flags)
	b.Write(num[:2])
	binary.BigEndian.PutUint64(num[:], math.Float64bits(m.Date))
	b.Write(num[:])
	binary.BigEndian.PutUint64(num[:], uint64(m.TZ))
	b.Write(num[:])
	if m.HasParents {
		b.WriteByte(byte(len(m.Parents)))
		for _, p := range m.Parents {
			node(p)
		}
	} else {
		b.WriteByte(0xff)
	}
	for _, kv := range m.Meta {
		for _, s := range kv {
			binary.BigEndian.PutUint32(num[:], uint32(len(s)))
			b.Write(num[:4])
			b.WriteString(s)
		}
	}
	return b.String()
}

// ParseObsstore decodes obsstore data (a file, or an obsmarkers part's
// payload): its format version and markers. Empty data has no markers
// (version -1); an unknown version is an error, as is any marker that
// does not fit.
func ParseObsstore(data []byte) (version int, markers []ObsMarker, err error) {
	if len(data) == 0 {
		return -1, nil, nil
	}
	switch data[0] {
	case ObsFormat1:
		markers, err = parseObsstore1(data[1:])
	case ObsFormat0:
		markers, err = parseObsstore0(data[1:])
	default:
		return int(data[0]), nil, fmt.Errorf("%w: parsing obsolete marker: unknown version %d", ErrObsstore, data[0])
	}
	return int(data[0]), markers, err
}

func parseObsstore1(data []byte) ([]ObsMarker, error) {
	var out []ObsMarker
	for off := 0; off < len(data); {
		at := off + 1 // offset in the file, for messages
		if len(data)-off < obsFixed1 {
			return nil, fmt.Errorf("%w: truncated marker at offset %d", ErrObsstore, at)
		}
		size := int(binary.BigEndian.Uint32(data[off:]))
		if size < obsFixed1 || size > len(data)-off {
			return nil, fmt.Errorf("%w: marker at offset %d claims %d bytes", ErrObsstore, at, size)
		}
		m := data[off : off+size]
		var mk ObsMarker
		mk.Date = math.Float64frombits(binary.BigEndian.Uint64(m[4:]))
		mk.TZ = int(int16(binary.BigEndian.Uint16(m[12:]))) * 60
		mk.Flags = binary.BigEndian.Uint16(m[14:])
		nsucc, npar, nmeta := int(m[16]), int(m[17]), int(m[18])
		mk.HasParents = npar != obsNoParents
		if !mk.HasParents {
			npar = 0
		}
		nodeLen := 20
		if mk.Flags&ObsFlagSHA256 != 0 {
			nodeLen = 32
		}
		p := obsFixed1
		if need := p + nodeLen*(1+nsucc+npar) + 2*nmeta; need > size {
			return nil, fmt.Errorf("%w: marker at offset %d: %d bytes of nodes and metadata sizes in a %d-byte marker", ErrObsstore, at, need, size)
		}
		next := func() []byte { n := bytes.Clone(m[p : p+nodeLen]); p += nodeLen; return n }
		mk.Prec = next()
		for i := 0; i < nsucc; i++ {
			mk.Succs = append(mk.Succs, next())
		}
		if mk.HasParents {
			mk.Parents = [][]byte{}
			for i := 0; i < npar; i++ {
				mk.Parents = append(mk.Parents, next())
			}
		}
		sizes := m[p : p+2*nmeta]
		p += 2 * nmeta
		for i := 0; i < nmeta; i++ {
			kl, vl := int(sizes[2*i]), int(sizes[2*i+1])
			if kl+vl > size-p {
				return nil, fmt.Errorf("%w: marker at offset %d: metadata past its end", ErrObsstore, at)
			}
			mk.Meta = append(mk.Meta, [2]string{string(m[p : p+kl]), string(m[p+kl : p+kl+vl])})
			p += kl + vl
		}
		out = append(out, mk)
		off += size
	}
	return out, nil
}

func parseObsstore0(data []byte) ([]ObsMarker, error) {
	var out []ObsMarker
	for off := 0; off < len(data); {
		at := off + 1
		if len(data)-off < obsFixed0 {
			return nil, fmt.Errorf("%w: truncated v0 marker at offset %d", ErrObsstore, at)
		}
		nsucc := int(data[off])
		mdsize := uint64(binary.BigEndian.Uint32(data[off+1:]))
		var mk ObsMarker
		mk.Flags = uint16(data[off+5])
		p := off + 6
		if uint64(len(data)-p) < uint64(20*(1+nsucc))+mdsize {
			return nil, fmt.Errorf("%w: parsing obsolete marker: metadata is too short at offset %d", ErrObsstore, at)
		}
		mk.Prec = bytes.Clone(data[p : p+20])
		p += 20
		for i := 0; i < nsucc; i++ {
			mk.Succs = append(mk.Succs, bytes.Clone(data[p:p+20]))
			p += 20
		}
		meta, err := decodeObsMeta0(data[p : p+int(mdsize)])
		if err != nil {
			return nil, fmt.Errorf("%w: marker at offset %d: %v", ErrObsstore, at, err)
		}
		p += int(mdsize)
		if d, ok := meta["date"]; ok {
			delete(meta, "date")
			if when, tz, ok := strings.Cut(d, " "); ok && !strings.Contains(tz, " ") {
				f, ferr := strconv.ParseFloat(strings.TrimSpace(when), 64)
				z, zerr := strconv.Atoi(strings.TrimSpace(tz))
				if ferr == nil && zerr == nil {
					mk.Date, mk.TZ = f, z
				}
			}
		}
		// hg pops p1 and p2 as it uses them, and leaves p0 in the
		// metadata; a p2 without p1 records no parents.
		var hexParents []string
		switch {
		case hasKey(meta, "p2"):
			p1, ok := meta["p1"]
			hexParents, mk.HasParents = []string{p1, meta["p2"]}, ok
			delete(meta, "p1")
			delete(meta, "p2")
		case hasKey(meta, "p1"):
			hexParents, mk.HasParents = []string{meta["p1"]}, true
			delete(meta, "p1")
		case hasKey(meta, "p0"):
			mk.HasParents = true
		}
		if mk.HasParents {
			mk.Parents = [][]byte{}
			for _, h := range hexParents {
				n, err := hex.DecodeString(h)
				if err != nil || len(n) != 20 {
					mk.HasParents, mk.Parents = false, nil
					break
				}
				mk.Parents = append(mk.Parents, n)
			}
		}
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			mk.Meta = append(mk.Meta, [2]string{k, meta[k]})
		}
		out = append(out, mk)
		off = p
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// decodeObsMeta0 is _fm0decodemeta: NUL-separated "key:value" entries.
func decodeObsMeta0(data []byte) (map[string]string, error) {
	d := map[string]string{}
	for _, l := range strings.Split(string(data), "\x00") {
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("metadata entry %q without ':'", l)
		}
		d[k] = v
	}
	return d, nil
}

// EncodeObsMarkers encodes markers in format version (ObsFormat0 or
// ObsFormat1), preceded by the version byte when header is set (a new
// obsstore, or a part's payload), as obsolete.encodemarkers. A marker
// the format cannot hold is an error (where hg's encoder fails too).
func EncodeObsMarkers(markers []ObsMarker, header bool, version int) ([]byte, error) {
	var b []byte
	if header {
		b = append(b, byte(version))
	}
	for i := range markers {
		var err error
		switch version {
		case ObsFormat1:
			b, err = appendObsMarker1(b, &markers[i])
		case ObsFormat0:
			b, err = appendObsMarker0(b, &markers[i])
		default:
			err = fmt.Errorf("obsstore: unknown format version %d", version)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func appendObsMarker1(b []byte, m *ObsMarker) ([]byte, error) {
	npar := obsNoParents
	if m.HasParents {
		npar = len(m.Parents)
	}
	tz := floorDiv(m.TZ, 60)
	if len(m.Succs) > 255 || npar > 255 || len(m.Meta) > 255 || tz < math.MinInt16 || tz > math.MaxInt16 {
		return nil, fmt.Errorf("obsstore: marker of %x does not fit format 1", m.Prec)
	}
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, 0) // size, set below
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Date))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(tz)))
	b = binary.BigEndian.AppendUint16(b, m.Flags)
	b = append(b, byte(len(m.Succs)), byte(npar), byte(len(m.Meta)))
	b = append(b, m.Prec...)
	for _, s := range m.Succs {
		b = append(b, s...)
	}
	for _, p := range m.Parents {
		b = append(b, p...)
	}
	for _, kv := range m.Meta {
		if len(kv[0]) > 255 || len(kv[1]) > 255 {
			return nil, fmt.Errorf("obsstore metadata key or value longer than 255 bytes (key %q)", kv[0])
		}
		b = append(b, byte(len(kv[0])), byte(len(kv[1])))
	}
	for _, kv := range m.Meta {
		b = append(b, kv[0]...)
		b = append(b, kv[1]...)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b, nil
}

func appendObsMarker0(b []byte, m *ObsMarker) ([]byte, error) {
	if m.Flags&ObsFlagSHA256 != 0 || m.Flags > 255 || len(m.Succs) > 255 {
		return nil, errors.New("cannot handle sha256 with old obsstore format")
	}
	meta := map[string]string{}
	for _, kv := range m.Meta {
		meta[kv[0]] = kv[1]
	}
	meta["date"] = pyFloatRepr(m.Date) + " " + strconv.Itoa(m.TZ)
	if m.HasParents {
		if len(m.Parents) == 0 {
			meta["p0"] = ""
		}
		for i, p := range m.Parents {
			meta["p"+strconv.Itoa(i+1)] = hex.EncodeToString(p)
		}
	}
	keys := make([]string, 0, len(meta))
	for k, v := range meta {
		if strings.ContainsAny(k, ":\x00") || strings.Contains(v, "\x00") {
			return nil, fmt.Errorf("obsstore: metadata %q cannot be stored in format 0", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var md strings.Builder
	for i, k := range keys {
		if i > 0 {
			md.WriteByte(0)
		}
		md.WriteString(k + ":" + meta[k])
	}
	b = append(b, byte(len(m.Succs)))
	b = binary.BigEndian.AppendUint32(b, uint32(md.Len()))
	b = append(b, byte(m.Flags))
	b = append(b, m.Prec...)
	for _, s := range m.Succs {
		b = append(b, s...)
	}
	return append(b, md.String()...), nil
}

// pyFloatRepr is Python's repr of a float: the shortest digits that read
// back the same, positional between 1e-4 and 1e16, else scientific with
// a two-digit exponent.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde+XX"
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	decpt := exp + 1
	if -4 < decpt && decpt <= 16 {
		var s string
		switch {
		case decpt <= 0:
			s = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			s = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			s = digits[:decpt] + "." + digits[decpt:]
		}
		return sign + s
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

// RelevantMarkers is obsstore.relevantmarkers: the markers of all that
// bear on nodes: those with one of them as successor, prunes of their
// children, and the same again for the precursors of what was found.
// Equal markers count once; the result keeps the order of all.
func RelevantMarkers(all []ObsMarker, nodes [][]byte) []ObsMarker {
	preds := map[string][]int{}    // node -> markers naming it a successor
	prunes := map[string][]int{}   // node -> prunes of it (succsmarkers without successors)
	children := map[string][]int{} // parent -> prunes recording it as a parent
	for i := range all {
		m := &all[i]
		for _, s := range m.Succs {
			preds[string(s)] = append(preds[string(s)], i)
		}
		if len(m.Succs) == 0 {
			prunes[string(m.Prec)] = append(prunes[string(m.Prec)], i)
			for _, p := range m.Parents {
				children[string(p)] = append(children[string(p)], i)
			}
		}
	}
	seenNodes := map[string]bool{}
	var pending []string
	for _, n := range nodes {
		if !seenNodes[string(n)] {
			seenNodes[string(n)] = true
			pending = append(pending, string(n))
		}
	}
	picked := make([]bool, len(all))
	seenKeys := map[string]bool{}
	for len(pending) > 0 {
		var next []string
		for _, n := range pending {
			for _, group := range [][]int{preds[n], children[n], prunes[n]} {
				for _, i := range group {
					if picked[i] {
						continue
					}
					picked[i] = true
					prec := string(all[i].Prec)
					if !seenNodes[prec] {
						seenNodes[prec] = true
						next = append(next, prec)
					}
				}
			}
		}
		pending = next
	}
	var out []ObsMarker
	for i := range all {
		if picked[i] {
			if k := all[i].Key(); !seenKeys[k] {
				seenKeys[k] = true
				out = append(out, all[i])
			}
		}
	}
	return out
}

// SortMarkers orders markers as obsutil.sortedmarkers does: by the
// marker tuple (precursor, successors, flags, metadata, date, parents),
// markers without recorded parents as if they had none.
func SortMarkers(ms []ObsMarker) {
	sort.SliceStable(ms, func(i, j int) bool { return compareMarkers(&ms[i], &ms[j]) < 0 })
}

func compareMarkers(a, b *ObsMarker) int {
	if c := bytes.Compare(a.Prec, b.Prec); c != 0 {
		return c
	}
	if c := compareNodeLists(a.Succs, b.Succs); c != 0 {
		return c
	}
	if a.Flags != b.Flags {
		return cmp.Compare(a.Flags, b.Flags)
	}
	for k := 0; k < len(a.Meta) && k < len(b.Meta); k++ {
		if c := strings.Compare(a.Meta[k][0], b.Meta[k][0]); c != 0 {
			return c
		}
		if c := strings.Compare(a.Meta[k][1], b.Meta[k][1]); c != 0 {
			return c
		}
	}
	if len(a.Meta) != len(b.Meta) {
		return cmp.Compare(len(a.Meta), len(b.Meta))
	}
	if a.Date != b.Date {
		return cmp.Compare(a.Date, b.Date)
	}
	if a.TZ != b.TZ {
		return cmp.Compare(a.TZ, b.TZ)
	}
	return compareNodeLists(a.Parents, b.Parents)
}

func compareNodeLists(a, b [][]byte) int {
	for k := 0; k < len(a) && k < len(b); k++ {
		if c := bytes.Compare(a[k], b[k]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
