package repo

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hgfs/hgfs/revlog"
)

// The obsstore holds obsolescence markers. Layout (format version 1, keep
// in sync with mercurial/obsolete.py _fm1readmarkers):
//
//	byte 0: version (1; version 0 is the legacy format, also read here)
//	then markers, each:
//	  uint32 size (whole marker), float64 date, int16 tz minutes,
//	  uint16 flags, uint8 #successors, uint8 #parents (3: none recorded),
//	  uint8 #metadata, precursor node (20 bytes, 32 with flag 16),
//	  successors, parents, #metadata (keylen, vallen) byte pairs, metadata.

// ErrObsstore means the obsstore file is malformed.
var ErrObsstore = errors.New("malformed obsstore")

// Marker is one obsolescence marker: Prec was rewritten as Succs (none:
// pruned).
type Marker struct {
	Prec  revlog.Node
	Succs []revlog.Node
}

const (
	obsFixed1     = 4 + 8 + 2 + 2 + 1 + 1 + 1
	obsFlagSHA256 = 16
	obsNoParents  = 3 // keep in sync with obsolete.py _fm1parentnone
)

// ParseObsstore decodes an obsstore file. An empty file has no markers.
func ParseObsstore(data []byte) ([]Marker, error) {
	if len(data) == 0 {
		return nil, nil
	}
	switch data[0] {
	case 1:
	case 0:
		return parseObsstore0(data[1:])
	default:
		return nil, fmt.Errorf("%w: unknown version %d", ErrObsstore, data[0])
	}
	var out []Marker
	for off := 1; off < len(data); {
		if len(data)-off < obsFixed1 {
			return nil, fmt.Errorf("%w: truncated marker at offset %d", ErrObsstore, off)
		}
		size := int(binary.BigEndian.Uint32(data[off:]))
		if size < obsFixed1 || size > len(data)-off {
			return nil, fmt.Errorf("%w: marker at offset %d claims %d bytes", ErrObsstore, off, size)
		}
		m := data[off : off+size]
		flags := binary.BigEndian.Uint16(m[14:])
		nsucc, npar, nmeta := int(m[16]), int(m[17]), int(m[18])
		if npar == obsNoParents {
			npar = 0
		}
		nodeLen := 20
		if flags&obsFlagSHA256 != 0 {
			nodeLen = 32
		}
		need := obsFixed1 + nodeLen*(1+nsucc+npar) + 2*nmeta
		if need > size {
			return nil, fmt.Errorf("%w: marker at offset %d: %d bytes of nodes and metadata sizes in a %d-byte marker", ErrObsstore, off, need, size)
		}
		p := obsFixed1
		var mk Marker
		copy(mk.Prec[:], m[p:p+20])
		p += nodeLen
		for i := 0; i < nsucc; i++ {
			var n revlog.Node
			copy(n[:], m[p:p+20])
			mk.Succs = append(mk.Succs, n)
			p += nodeLen
		}
		out = append(out, mk)
		off += size
	}
	return out, nil
}

// parseObsstore0 reads the legacy format: uint8 #successors, uint32
// metadata size, uint8 flags, precursor, successors, metadata.
func parseObsstore0(data []byte) ([]Marker, error) {
	var out []Marker
	for off := 0; off < len(data); {
		if len(data)-off < 26 {
			return nil, fmt.Errorf("%w: truncated v0 marker at offset %d", ErrObsstore, off+1)
		}
		nsucc := int(data[off])
		mdsize := int(binary.BigEndian.Uint32(data[off+1:]))
		p := off + 6
		if mdsize > len(data) || len(data)-p < 20*(1+nsucc)+mdsize {
			return nil, fmt.Errorf("%w: truncated v0 marker at offset %d", ErrObsstore, off+1)
		}
		var mk Marker
		copy(mk.Prec[:], data[p:p+20])
		p += 20
		for i := 0; i < nsucc; i++ {
			var n revlog.Node
			copy(n[:], data[p:p+20])
			mk.Succs = append(mk.Succs, n)
			p += 20
		}
		out = append(out, mk)
		off = p + mdsize
	}
	return out, nil
}
