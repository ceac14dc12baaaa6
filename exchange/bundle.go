package exchange

import (
	"context"
	"io"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
)

// BookmarkMode says what a bundle's bookmarks part does (bundle2's
// op.modes['bookmarks']).
type BookmarkMode int

const (
	// BookmarksApply sets and deletes the bookmarks as the part says
	// (hg unbundle).
	BookmarksApply BookmarkMode = iota
	// BookmarksRecord keeps them in BundleResult for the caller to merge
	// (hg pull).
	BookmarksRecord
	// BundleRepo reads a bundle file pulled from as hg's bundlerepo does:
	// its changegroups and phase-heads only. Its bookmarks, listkeys and
	// obsmarkers parts are skipped, as hg's pull from a bundle takes the
	// bookmarks and markers of the repository the bundle overlays (the
	// local one: nothing moves).
	BundleRepo
)

// BundleResult is what ApplyBundle saw besides the changegroups.
type BundleResult struct {
	Changegroups int
	// Bookmarks are the remote bookmarks (a bookmarks part, or a listkeys
	// part of namespace "bookmarks") when recorded.
	Bookmarks map[string]revlog.Node
	// HasBookmarks is set when the bundle carried bookmarks at all.
	HasBookmarks bool
	// Listkeys holds listkeys parts by namespace.
	Listkeys map[string]map[string]string
	// PhaseHeads is set when a phase-heads part was applied.
	PhaseHeads bool
}

// ApplyBundle applies the parts of b in order, as bundle2.processbundle
// does for the parts hgfs knows: changegroups, phase-heads, bookmarks,
// listkeys, obsmarkers (obsmarkers.go). Caches (hgtagsfnodes,
// rev-branch-cache) are skipped: hg rebuilds them on demand.
func (s *Session) ApplyBundle(ctx context.Context, b *changegroup.Bundle, mode BookmarkMode) (*BundleResult, error) {
	if s.done {
		return nil, ErrSessionDone
	}
	defer s.guard()
	res := &BundleResult{Listkeys: map[string]map[string]string{}}
	for {
		p, err := b.NextPart()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return nil, s.fail(err)
		}
		if mode == BundleRepo && p.Type != "changegroup" && p.Type != "phase-heads" {
			continue
		}
		switch p.Type {
		case "changegroup":
			phase := Draft
			if p.TargetPhase >= 0 {
				phase = p.TargetPhase
			}
			if _, err := s.applyChangegroup(ctx, p.Changegroup, phase, max(p.NbChanges, 0)); err != nil {
				return nil, err // already aborted
			}
			res.Changegroups++
		case "phase-heads":
			s.applyPhaseHeads(p.PhaseHeads)
			res.PhaseHeads = true
		case "bookmarks":
			res.HasBookmarks = true
			if mode == BookmarksApply {
				if err := s.loadBookmarks(); err != nil {
					return nil, s.fail(err)
				}
				for name, n := range p.Bookmarks {
					s.setBookmark(name, n)
				}
				for _, name := range p.DeletedBookmarks {
					s.deleteBookmark(name)
				}
				continue
			}
			res.Bookmarks = map[string]revlog.Node{}
			for name, n := range p.Bookmarks {
				res.Bookmarks[name] = n
			}
		case "obsmarkers":
			if err := s.applyObsmarkers(p.Mandatory, p.Payload); err != nil {
				return nil, s.fail(err)
			}
		case "listkeys":
			ns := p.Params["namespace"]
			res.Listkeys[ns] = p.Listkeys
			if ns == "bookmarks" && !res.HasBookmarks {
				marks, err := decodeHexBookmarks(p.Listkeys)
				if err != nil {
					return nil, s.fail(err)
				}
				res.HasBookmarks = true
				res.Bookmarks = marks
			}
		}
	}
}

// applyPhaseHeads is phases.updatephases: for each phase, the heads not
// already in it move the boundary (advance only).
func (s *Session) applyPhaseHeads(heads []changegroup.PhaseHead) {
	byPhase := map[int][]revlog.Node{}
	for _, h := range heads {
		byPhase[h.Phase] = append(byPhase[h.Phase], h.Node)
	}
	for _, ph := range []int{Public, Draft, Secret} {
		var move []revlog.Node
		cur := s.phases.phaseOf(s.cl)
		for _, n := range byPhase[ph] {
			if r, ok := s.cl.Rev(n); ok && cur[r] != ph {
				move = append(move, n)
			}
		}
		if len(move) > 0 {
			s.AdvancePhase(ph, move)
		}
	}
}
