package changegroup

// Payloads of the bundle2 parts that travel with a changegroup:
//
//	phase-heads  (phase int32, node [20]byte)*       phases.binaryencode
//	bookmarks    (node [20]byte, name length uint16, name)*
//	             node = all 0xff ("wdirid"): the bookmark is deleted
//	                                                  bookmarks.binaryencode
//	listkeys     "key\tvalue" lines joined by "\n"    pushkey.encodekeys
//
// Keep in sync with mercurial/phases.py, mercurial/bookmarks.py and
// mercurial/pushkey.py.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
)

// Phases; keep in sync with mercurial/phases.py (allphases).
const (
	PhasePublic   = 0
	PhaseDraft    = 1
	PhaseSecret   = 2
	PhaseArchived = 32
	PhaseInternal = 96
)

// maxListkeysPayload bounds a listkeys part held in memory.
const maxListkeysPayload = 256 << 20

// wdirNode is Mercurial's working-directory pseudo node (nodeconstants
// wdirid), which the bookmarks part uses for "deleted".
var wdirNode = [20]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

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

// DecodeBookmarks reads a bookmarks payload: the bookmarks set (name ->
// node) and, in order, the names the part deletes. A later entry for a
// name overrides an earlier one, as applychanges does.
func DecodeBookmarks(r io.Reader) (marks map[string][20]byte, deleted []string, err error) {
	marks = map[string][20]byte{}
	var e [22]byte
	for {
		n, err := io.ReadFull(r, e[:])
		if err == io.EOF {
			return marks, deleted, nil
		}
		if err == io.ErrUnexpectedEOF {
			return nil, nil, corruptf("bad bookmark stream: %d trailing bytes", n)
		}
		if err != nil {
			return nil, nil, err
		}
		name := make([]byte, binary.BigEndian.Uint16(e[20:])) // at most 64 KiB
		if _, err := io.ReadFull(r, name); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, nil, corruptf("bad bookmark stream: truncated name")
			}
			return nil, nil, err
		}
		var node [20]byte
		copy(node[:], e[:20])
		if node == wdirNode {
			delete(marks, string(name))
			deleted = append(deleted, string(name))
			continue
		}
		marks[string(name)] = node
	}
}

// EncodeBookmarks encodes a bookmarks payload, sorted by name, with
// deletions last.
func EncodeBookmarks(marks map[string][20]byte, deleted []string) ([]byte, error) {
	names := make([]string, 0, len(marks))
	for n := range marks {
		names = append(names, n)
	}
	sort.Strings(names)
	var b []byte
	add := func(name string, node [20]byte) error {
		if len(name) > 0xffff {
			return fmt.Errorf("changegroup: bookmark name of %d bytes", len(name))
		}
		b = append(b, node[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
		b = append(b, name...)
		return nil
	}
	for _, n := range names {
		if err := add(n, marks[n]); err != nil {
			return nil, err
		}
	}
	for _, n := range deleted {
		if err := add(n, wdirNode); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// DecodeListkeys reads a listkeys payload (pushkey.decodekeys).
func DecodeListkeys(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxListkeysPayload+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxListkeysPayload {
		return nil, corruptf("listkeys payload larger than %d bytes", maxListkeysPayload)
	}
	out := map[string]string{}
	for _, l := range splitLines(data) {
		k, v, ok := bytes.Cut(l, []byte("\t"))
		if !ok || bytes.IndexByte(v, '\t') >= 0 {
			return nil, corruptf("bad listkeys line %q", l)
		}
		out[string(k)] = string(v)
	}
	return out, nil
}

// splitLines splits as Python's bytes.splitlines does for the separators
// pushkey data can hold (\n, \r\n, \r).
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return out
}
