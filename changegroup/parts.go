package changegroup

// Payload of the phase-heads part that travels with a changegroup:
//
//	phase-heads  (phase int32, node [20]byte)*       phases.binaryencode
//
// The bookmarks and listkeys parts are package bundle2's
// (bundle2.DecodeBookmarks, bundle2.DecodeKeys). Keep in sync with
// mercurial/phases.py.

import (
	"encoding/binary"
	"io"
)

// Phases; keep in sync with mercurial/phases.py (allphases).
const (
	PhasePublic   = 0
	PhaseDraft    = 1
	PhaseSecret   = 2
	PhaseArchived = 32
	PhaseInternal = 96
)

// PhaseHead is one entry of a phase-heads part: Node and its ancestors in
// the bundle are at most in Phase.
type PhaseHead struct {
	Phase int
	Node  [20]byte
}

func validPhase(p int) bool {
	switch p {
	case PhasePublic, PhaseDraft, PhaseSecret, PhaseArchived, PhaseInternal:
		return true
	}
	return false
}

// DecodePhaseHeads reads a phase-heads payload.
func DecodePhaseHeads(r io.Reader) ([]PhaseHead, error) {
	var out []PhaseHead
	var e [24]byte
	for {
		n, err := io.ReadFull(r, e[:])
		if err == io.EOF {
			return out, nil
		}
		if err == io.ErrUnexpectedEOF {
			return nil, corruptf("bad phase-heads stream: %d trailing bytes", n)
		}
		if err != nil {
			return nil, err
		}
		ph := int(int32(binary.BigEndian.Uint32(e[:4])))
		if !validPhase(ph) {
			return nil, corruptf("bad phase-heads stream: unknown phase %d", ph)
		}
		h := PhaseHead{Phase: ph}
		copy(h.Node[:], e[4:])
		out = append(out, h)
	}
}

// EncodePhaseHeads encodes a phase-heads payload, in the order given.
func EncodePhaseHeads(heads []PhaseHead) []byte {
	b := make([]byte, 0, 24*len(heads))
	for _, h := range heads {
		b = binary.BigEndian.AppendUint32(b, uint32(int32(h.Phase)))
		b = append(b, h.Node[:]...)
	}
	return b
}
