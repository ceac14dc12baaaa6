package exchange

import (
	"context"
	"fmt"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/wireproto"
)

// PullOptions tune Pull.
type PullOptions struct {
	Options
	// Heads limits the pull to these remote changesets and their
	// ancestors (hex nodes; already resolved with the remote's lookup);
	// empty pulls every remote head.
	Heads []string
	// QuietBookmarks sends the bookmark messages ("adding remote bookmark
	// X") to Debug, as hg's clone does (ui.quietbookmarkmove).
	QuietBookmarks bool
	// FromBundle says the peer is a bundle file (hg pull FILE): its
	// reply is read as hg's bundlerepo reads the file (BundleRepo).
	FromBundle bool
	// Force pulls from a remote that shares no changeset with a
	// repository that has some, with a warning (hg pull -f); without it
	// the pull fails with ErrUnrelated.
	Force bool
}

// PullResult summarises a pull.
type PullResult struct {
	// Nothing is set when the remote had no changeset missing here (hg's
	// "no changes found").
	Nothing bool
	// ModHeads is what postincoming receives (0 when nothing was added).
	ModHeads int
	// Discovery is the discovery outcome.
	Discovery *DiscoveryResult
}

// Pull fetches into the repository at root the changesets of peer that it
// lacks, as exchange.pull does over bundle2: lock, discovery ("searching
// for changes", or "requesting all changes" into an empty repository),
// getbundle with a changegroup, phase heads and bookmarks, applied in one
// transaction named "pull\n<url>"; then phases and bookmarks follow the
// remote. Obsolescence markers come too when both sides exchange them
// (Options.ExchangeMarkers, the server's obsmarkers capability).
func Pull(ctx context.Context, root string, peer wireproto.Peer, url string, opt PullOptions) (*PullResult, error) {
	if !peer.Capabilities().Has("getbundle") {
		return nil, fmt.Errorf("%w: the server cannot send changegroups (no getbundle)", ErrUnsupported)
	}
	b2, err := peer.Capabilities().Bundle2()
	if err != nil {
		return nil, err
	}
	if b2 == nil || !b2.Has("changegroup") {
		return nil, fmt.Errorf("%w: the server does not speak bundle2 changegroups", ErrUnsupported)
	}
	o := opt.Options
	o.WLock = true
	s, err := Begin(ctx, root, "pull\n"+url, o)
	if err != nil {
		return nil, err
	}
	defer s.guard()
	res, err := s.pull(ctx, peer, b2, opt)
	if err != nil {
		return nil, s.fail(err)
	}
	return res, nil
}

func (s *Session) pull(ctx context.Context, peer wireproto.Peer, b2 wireproto.Bundle2Caps, opt PullOptions) (*PullResult, error) {
	res := &PullResult{}
	// Before any bookmark moves, the listkeys ones of a pull with no
	// changeset to fetch (a clone after a clone bundle) too.
	s.quietBookmarks = opt.QuietBookmarks
	// Heads asked for that are all here need no discovery: they are
	// the common set (discovery.findcommonincoming).
	known := len(opt.Heads) > 0
	for _, h := range opt.Heads {
		n, err := parseHex(h)
		if err != nil {
			return nil, err
		}
		if _, ok := s.cl.Rev(n); !ok {
			known = false
		}
	}
	var disc *DiscoveryResult
	if known {
		disc = &DiscoveryResult{Common: opt.Heads, RemoteHeads: opt.Heads}
	} else {
		var err error
		if disc, err = FindCommon(ctx, s.cl, peer); err != nil {
			return nil, err
		}
		if s.cl.Len() > 0 {
			// setdiscovery prints this once the first round is answered.
			s.status("searching for changes\n")
			if len(disc.Common) == 0 && len(disc.RemoteHeads) > 0 {
				if !opt.Force {
					return nil, ErrUnrelated
				}
				s.warn("warning: repository is unrelated\n")
			}
		}
	}
	res.Discovery = disc
	heads, missing := opt.Heads, !known
	if len(heads) == 0 {
		heads, missing = disc.RemoteHeads, false
		for _, h := range heads {
			n, err := parseHex(h)
			if err != nil {
				return nil, err
			}
			if _, ok := s.cl.Rev(n); !ok {
				missing = true
			}
		}
	}
	// Markers come in the getbundle reply when both sides exchange them
	// (exchange._pullbundle2), even with no changeset to fetch.
	markers := s.opt.ExchangeMarkers && b2.HasValue("obsmarkers", "V1")
	if !missing {
		// Nothing to fetch; bookmarks and phases may still move.
		s.status("no changes found\n")
		res.Nothing = true
		if !markers {
			if err := s.pullKeys(ctx, peer, heads); err != nil {
				return nil, err
			}
			if err := s.pullObsolete(ctx, peer, markers); err != nil {
				return nil, err
			}
			return res, s.commitOrDrop()
		}
	} else if len(opt.Heads) == 0 && len(disc.Common) == 0 {
		s.status("requesting all changes\n")
	}
	args := wireproto.PullArgs(b2, disc.Common, heads)
	if markers {
		// The client's bundle2 capabilities (wireproto.PullBundle2Caps)
		// list the marker formats it reads.
		args["obsmarkers"] = "1"
	}
	if !missing {
		args["cg"] = "0"
	}
	body, err := peer.GetBundle(ctx, args)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := changegroup.OpenBundle(body)
	if err != nil {
		return nil, err
	}
	mode := BookmarksRecord
	if opt.FromBundle {
		mode, s.summaryFilesAdded = BundleRepo, true
	}
	br, err := s.ApplyBundle(ctx, b, mode)
	if err != nil {
		return nil, err // aborted
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	// The reply has been read to its end. Over ssh the connection
	// carries one command at a time and stays claimed until the reply
	// is closed: close it before the listkeys commands below.
	if err := body.Close(); err != nil {
		return nil, err
	}
	if !br.PhaseHeads {
		if err := s.pullPhasesListkeys(ctx, peer, heads, br.Listkeys["phases"]); err != nil {
			return nil, err
		}
	}
	if br.HasBookmarks {
		if err := s.MergeRemoteBookmarks(br.Bookmarks); err != nil {
			return nil, err
		}
	} else if err := s.pullBookmarksListkeys(ctx, peer); err != nil {
		return nil, err
	}
	if err := s.pullObsolete(ctx, peer, markers); err != nil {
		return nil, err
	}
	res.ModHeads = s.ModHeads
	if !missing {
		return res, s.commitOrDrop()
	}
	return res, s.Commit()
}

// pullObsolete fetches the markers with listkeys when this repository
// exchanges them and the getbundle reply could not carry them (inBundle).
func (s *Session) pullObsolete(ctx context.Context, peer wireproto.Peer, inBundle bool) error {
	if !s.opt.ExchangeMarkers || inBundle {
		return nil
	}
	return s.pullObsmarkersListkeys(ctx, peer)
}

// pullKeys updates phases and bookmarks when no changegroup came.
func (s *Session) pullKeys(ctx context.Context, peer wireproto.Peer, heads []string) error {
	if err := s.pullPhasesListkeys(ctx, peer, heads, nil); err != nil {
		return err
	}
	return s.pullBookmarksListkeys(ctx, peer)
}

func (s *Session) pullBookmarksListkeys(ctx context.Context, peer wireproto.Peer) error {
	keys, err := peer.ListKeys(ctx, "bookmarks")
	if err != nil {
		return err
	}
	marks, err := decodeHexBookmarks(keys)
	if err != nil {
		return err
	}
	return s.MergeRemoteBookmarks(marks)
}

// pullPhasesListkeys is exchange._pullapplyphases with the phases pushkey
// namespace: a publishing remote (or one without phases) makes everything
// pulled public; otherwise what the remote has public becomes public.
func (s *Session) pullPhasesListkeys(ctx context.Context, peer wireproto.Peer, heads []string, keys map[string]string) error {
	if keys == nil {
		var err error
		if keys, err = peer.ListKeys(ctx, "phases"); err != nil {
			return err
		}
	}
	var subset []revlog.Node
	for _, h := range heads {
		if n, err := parseHex(h); err == nil {
			subset = append(subset, n)
		}
	}
	publishing := keys["publishing"] == "True"
	if len(keys) == 0 || publishing {
		s.AdvancePhase(Public, subset)
		return nil
	}
	// Non-publishing: the remote's draft roots; every pulled changeset
	// that descends from none of them is public (phases.analyzeremotephases).
	var roots []int
	for k, v := range keys {
		if k == "publishing" || v != "1" {
			continue
		}
		n, err := parseHex(k)
		if err != nil {
			continue
		}
		if r, ok := s.cl.Rev(n); ok {
			roots = append(roots, r)
		}
	}
	set := map[int]bool{}
	for _, r := range roots {
		set[r] = true
	}
	draft := descendants(s.cl, set)
	var public []revlog.Node
	// Public heads are the heads of ancestors(subset) - draft. Walk the ancestors of the subset; a revision outside draft whose
	// children in the walk are all draft (or that is a subset head) is a
	// public head.
	n := s.cl.Len()
	inAnc := make([]bool, n)
	for _, h := range subset {
		if r, ok := s.cl.Rev(h); ok {
			inAnc[r] = true
		}
	}
	for r := n - 1; r >= 0; r-- {
		if !inAnc[r] {
			continue
		}
		e := s.cl.Entry(r)
		if e.P1 >= 0 {
			inAnc[e.P1] = true
		}
		if e.P2 >= 0 {
			inAnc[e.P2] = true
		}
	}
	hasPublicChild := make([]bool, n)
	for r := 0; r < n; r++ {
		if !inAnc[r] || draft[r] {
			continue
		}
		e := s.cl.Entry(r)
		if e.P1 >= 0 {
			hasPublicChild[e.P1] = true
		}
		if e.P2 >= 0 {
			hasPublicChild[e.P2] = true
		}
	}
	for r := 0; r < n; r++ {
		if inAnc[r] && !draft[r] && !hasPublicChild[r] {
			public = append(public, s.cl.Node(r))
		}
	}
	s.AdvancePhase(Public, public)
	return nil
}

// commitOrDrop commits when something changed (phases, bookmarks) and
// otherwise aborts the empty transaction quietly, as hg creates none.
func (s *Session) commitOrDrop() error {
	if s.phases.dirty || s.bmDirty || s.cl.Len() != s.origLen || (s.obs != nil && len(s.obs.added) > 0) {
		return s.Commit()
	}
	return s.Abort()
}
