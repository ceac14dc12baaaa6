package store

// The phaseroots file (.hg/store/phaseroots) holds, per phase, the
// changesets that are roots of that phase; every descendant of a root is
// in its phase or a higher one, and a changeset no root reaches is
// public. Layout (phases.py _readroots, phasecache._write):
//
//	one line per root: "<phase> <40 hex digits of the node>\n",
//	phases in increasing order, each phase's nodes sorted.
//
// Phases are 0 public, 1 draft, 2 secret, 32 archived, 96 internal.
// Lines naming nodes the changelog lacks are allowed (hg filters them
// when it reads and drops them when it writes).

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
)

// Phases hg knows (phases.allphases).
var knownPhases = map[int]bool{0: true, 1: true, 2: true, 32: true, 96: true}

// PhaseRoots are the roots of each phase, by phase number.
type PhaseRoots map[int][][20]byte

// ParsePhaseRoots reads phaseroots data as hg does: a line that is not a
// known phase and a 40-digit node is an error (hg fails on it too); empty
// lines are skipped.
func ParsePhaseRoots(data []byte) (PhaseRoots, error) {
	roots := PhaseRoots{}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		var node [20]byte
		ph, err := strconv.Atoi(string(f[0]))
		if len(f) != 2 || err != nil || !knownPhases[ph] || len(f[1]) != 40 {
			return nil, fmt.Errorf("phaseroots: malformed line %q", line)
		}
		if _, err := hex.Decode(node[:], f[1]); err != nil {
			return nil, fmt.Errorf("phaseroots: malformed line %q", line)
		}
		roots[ph] = append(roots[ph], node)
	}
	return roots, nil
}

// Format is the file as phasecache._write writes it: phases in
// increasing order, each phase's roots sorted and once.
func (p PhaseRoots) Format() []byte {
	var b bytes.Buffer
	phases := make([]int, 0, len(p))
	for ph := range p {
		phases = append(phases, ph)
	}
	slices.Sort(phases)
	for _, ph := range phases {
		nodes := slices.Clone(p[ph])
		slices.SortFunc(nodes, func(a, b [20]byte) int { return bytes.Compare(a[:], b[:]) })
		nodes = slices.Compact(nodes)
		for _, n := range nodes {
			fmt.Fprintf(&b, "%d %x\n", ph, n)
		}
	}
	return b.Bytes()
}

// ReadPhaseRoots reads the store's phaseroots; none is every changeset
// public.
func (s *Store) ReadPhaseRoots() (PhaseRoots, error) {
	data, err := fs.ReadFile(s.FS(), "phaseroots")
	if errors.Is(err, fs.ErrNotExist) {
		return PhaseRoots{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParsePhaseRoots(data)
}

// HasSecret is phases.hassecret: whether phaseroots lists a root in the
// secret phase (2). Archived and internal roots alone do not count: hg
// streams and copies such a repository.
func (s *Store) HasSecret() (bool, error) {
	roots, err := s.ReadPhaseRoots()
	if err != nil {
		return false, err
	}
	return len(roots[2]) > 0, nil
}
