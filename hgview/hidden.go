package hgview

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// Phases hg writes to phaseroots. Keep in sync with mercurial/phases.py.
const (
	phasePublic   = 0
	phaseArchived = 32
)

// computeHidden follows mercurial/repoview.py computehidden, as package
// repo does: obsolete (non-public changesets with an obsolescence marker)
// and archived or internal ones are hidden, unless pinned (a working
// directory parent, a bookmark, a local tag) or an ancestor of a visible
// changeset.
func (s *snapshot) computeHidden(bookmarks map[string]revlog.Node, local map[string]tagEntry) ([]bool, error) {
	n := s.cl.Len()
	hidden := make([]bool, n)
	phases, err := s.readPhases()
	if err != nil {
		return nil, err
	}
	obs, err := readOptional(s.st, "obsstore")
	if err != nil {
		return nil, err
	}
	markers, err := repo.ParseObsstore(obs)
	if err != nil {
		return nil, fmt.Errorf("obsstore: %w", err)
	}
	any := false
	for _, mk := range markers {
		if rev, ok := s.rev(mk.Prec); ok && phases[rev] != phasePublic {
			hidden[rev], any = true, true
		}
	}
	for rev := 0; rev < n; rev++ {
		if phases[rev] >= phaseArchived {
			hidden[rev], any = true, true
		}
	}
	if !any {
		return hidden, nil
	}
	pin := func(node revlog.Node) {
		if rev, ok := s.rev(node); ok {
			hidden[rev] = false
		}
	}
	parents, err := s.dirstateParents()
	if err != nil {
		return nil, err
	}
	pin(parents[0])
	pin(parents[1])
	for _, node := range bookmarks {
		pin(node)
	}
	for _, t := range local {
		pin(t.node)
	}
	for rev := n - 1; rev >= 0; rev-- {
		if hidden[rev] {
			continue
		}
		e := s.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < rev {
				hidden[p] = false
			}
		}
	}
	return hidden, nil
}

// readPhases reads phaseroots ("PHASE HEXNODE" lines) and propagates each
// root's phase to its descendants.
func (s *snapshot) readPhases() ([]int, error) {
	n := s.cl.Len()
	phases := make([]int, n)
	b, err := readOptional(s.st, "phaseroots")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		ph, hex, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		p, err := strconv.Atoi(ph)
		if err != nil {
			continue
		}
		node, err := revlog.ParseNode(hex)
		if err != nil {
			continue
		}
		if rev, ok := s.rev(node); ok && p > phases[rev] {
			phases[rev] = p
		}
	}
	for rev := 0; rev < n; rev++ {
		e := s.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < rev && phases[p] > phases[rev] {
				phases[rev] = phases[p]
			}
		}
	}
	return phases, nil
}

// dirstateParents reads the working directory parents: the first 40
// bytes of a dirstate-v1 file, or the parents in a dirstate-v2 docket.
func (s *snapshot) dirstateParents() ([2]revlog.Node, error) {
	var p [2]revlog.Node
	b, err := readOptional(s.hg, "dirstate")
	if err != nil {
		return p, err
	}
	const v2 = "dirstate-v2\n"
	if bytes.HasPrefix(b, []byte(v2)) {
		b = b[len(v2):]
		if len(b) >= 64 {
			copy(p[0][:], b[:20])
			copy(p[1][:], b[32:52])
		}
		return p, nil
	}
	if len(b) >= 40 {
		copy(p[0][:], b[:20])
		copy(p[1][:], b[20:40])
	}
	return p, nil
}
