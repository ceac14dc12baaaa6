package wireproto

// Changegroups: what getbundle sends a pull or a clone that is not a
// stream (exchange.getbundlechunks' changegroup and obsmarkers parts, or a
// bare cg1 for a bundle10 client), and the legacy commands of clients
// before getbundle (wireprotov1server.py changegroup, changegroupsubset,
// between, branches). The changesets sent are the outgoing set of the
// served view, ancestors(heads) - ancestors(common)
// (exchange._computeoutgoing); changegroup.GenerateOutgoing streams them
// from the revlogs.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/store"
)

// Messages hg's server sends (keep in sync with mercurial/exchange.py and
// bundle2.py).
const (
	msgNoCommonCgVersion = "no common changegroup version"
	msgObsNoCommonFormat = "bundler does not support common obsmarker format"
	msgBundle10NeedsCg   = "request for bundle10 must include changegroup"
)

// outgoing is a changegroup's content: the changesets a receiver lacks
// and those it has (every ancestor of its common heads), by revision.
type outgoing struct {
	missing, common []bool
	n               int // missing changesets
}

// computeOutgoing is exchange._computeoutgoing on the served view: common
// nodes the view does not know are dropped, no heads means the view's
// heads. It also returns the heads the other parts are about (the heads
// asked for, the view's when none were given). An unknown head is an
// abort when strict, else left out (a stream clone, which sends no
// changegroup).
func (v *view) computeOutgoing(g *getbundleArgs, strict bool) (*outgoing, []int, error) {
	partHeads := v.heads()
	if g.hasHeads {
		partHeads = partHeads[:0]
		for _, h := range g.heads {
			rev, ok := v.rev(h)
			if !ok {
				if strict {
					return nil, nil, &abortError{msg: fmt.Sprintf("unknown revision %s", truncate(h, 40))}
				}
				continue
			}
			partHeads = append(partHeads, rev)
		}
	}
	hrevs := partHeads
	if len(hrevs) == 0 {
		hrevs = v.heads()
	}
	var crevs []int
	for _, c := range g.common {
		if rev, ok := v.rev(c); ok {
			crevs = append(crevs, rev)
		}
	}
	return v.outgoingBetween(crevs, hrevs), partHeads, nil
}

// outgoingBetween is ancestors(heads) - ancestors(commonHeads).
func (v *view) outgoingBetween(commonHeads, heads []int) *outgoing {
	o := &outgoing{common: v.ancestors(commonHeads), missing: v.ancestors(heads)}
	for rev := range o.missing {
		if o.missing[rev] && o.common[rev] {
			o.missing[rev] = false
		}
		if o.missing[rev] {
			o.n++
		}
	}
	return o
}

// outgoingFromRoots is discovery.outgoing with missingroots: the
// changesets descending from roots (inclusive) that are ancestors of
// heads, and what that implies (nodesbetween's heads, the parents outside
// as common heads).
func (v *view) outgoingFromRoots(roots, heads []int) *outgoing {
	below := v.ancestors(heads)
	desc := make([]bool, v.n)
	for _, r := range roots {
		if r == -1 {
			for rev := range desc {
				desc[rev] = true
			}
			break
		}
		desc[r] = true
	}
	for rev := 0; rev < v.n; rev++ {
		if desc[rev] || !v.served[rev] {
			continue
		}
		p1, p2 := v.parents(rev)
		desc[rev] = p1 >= 0 && desc[p1] || p2 >= 0 && desc[p2]
	}
	var commonHeads, newHeads []int
	for rev := 0; rev < v.n; rev++ {
		if !desc[rev] || !below[rev] {
			continue
		}
		p1, p2 := v.parents(rev)
		for _, p := range []int{p1, p2} {
			if p >= 0 && !(desc[p] && below[p]) {
				commonHeads = append(commonHeads, p)
			}
		}
	}
	for _, h := range heads {
		if desc[h] && below[h] {
			newHeads = append(newHeads, h)
		}
	}
	return v.outgoingBetween(commonHeads, newHeads)
}

// cgVersion is the version exchange._getbundlechangegrouppart picks: the
// highest both sides support, "01" without a list (and then no version
// parameter).
func (s *Server) cgVersion(b2caps Bundle2Caps) (version string, param bool, err error) {
	remote := b2caps["changegroup"]
	if len(remote) == 0 {
		return changegroup.Version1, false, nil
	}
	ours := s.bundle2Caps()["changegroup"]
	for _, v := range remote {
		if contains(ours, v) && v > version {
			version = v
		}
	}
	if version == "" {
		return "", false, &abortError{msg: msgNoCommonCgVersion}
	}
	return version, true, nil
}

// writeChangegroupPart adds the changegroup part of a plan.
func (s *Server) writeChangegroupPart(ctx context.Context, v *view, bw *bundle2.Writer, plan *bundlePlan) error {
	var man []bundle2.Param
	if plan.cgParam {
		man = append(man, bundle2.Param{Name: "version", Value: plan.cgVersion})
	}
	adv := []bundle2.Param{{Name: "nbchanges", Value: fmt.Sprint(plan.out.n)}}
	pw, err := bw.NewPart("changegroup", true, man, adv)
	if err != nil {
		return err
	}
	cw, err := changegroup.NewWriter(pw, plan.cgVersion)
	if err != nil {
		return err
	}
	if err := changegroup.GenerateOutgoing(ctx, v.r, cw, plan.out.missing, plan.out.common); err != nil {
		return err
	}
	return pw.Close()
}

// obsMarkersPart is exchange._getbundleobsmarkerpart's payload: the
// markers relevant to ::heads, sorted, in the highest format both sides
// know; nil when there are none.
func (v *view) obsMarkersPart(heads []int, b2caps Bundle2Caps) ([]byte, error) {
	data, err := fs.ReadFile(v.r.Store.FS(), "obsstore")
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	_, all, err := store.ParseObsstore(data)
	if err != nil {
		return nil, fmt.Errorf("obsstore: %w", err)
	}
	var nodes [][]byte
	for rev, ok := range v.ancestors(heads) {
		if ok {
			n := v.r.Node(rev)
			nodes = append(nodes, n[:])
		}
	}
	markers := store.RelevantMarkers(all, nodes)
	if len(markers) == 0 {
		return nil, nil
	}
	store.SortMarkers(markers)
	version := -1
	for _, c := range b2caps["obsmarkers"] {
		switch c {
		case "V0":
			version = max(version, 0)
		case "V1":
			version = 1
		}
	}
	if version < 0 {
		return nil, &abortError{msg: msgObsNoCommonFormat}
	}
	return store.EncodeObsMarkers(markers, true, version)
}

// getbundle10 answers a getbundle without bundle2 capabilities: a bare
// cg1 stream (exchange.getbundlechunks' bundle10 case).
func (s *Server) getbundle10(ctx context.Context, w *logRecorder, g *getbundleArgs, pc protoCaps) {
	if g.bundlecaps != nil && !g.flag("cg", true) {
		s.hgError(w, msgBundle10NeedsCg+"\n")
		return
	}
	v, err := s.open()
	if err != nil {
		s.serverError(w, "getbundle", err)
		return
	}
	defer v.close()
	out, _, err := v.computeOutgoing(g, true)
	var abort *abortError
	if errors.As(err, &abort) {
		s.hgError(w, abort.msg+"\n")
		return
	}
	s.sendChangegroup(ctx, w, v, pc, out, "getbundle")
}

// sendChangegroup answers with a bare cg1 stream of out.
func (s *Server) sendChangegroup(ctx context.Context, w *logRecorder, v *view, pc protoCaps, out *outgoing, cmd string) {
	body, err := s.streamResponse(w, pc, false)
	if err == nil {
		var cw *changegroup.Writer
		if cw, err = changegroup.NewWriter(body, changegroup.Version1); err == nil {
			err = changegroup.GenerateOutgoing(ctx, v.r, cw, out.missing, out.common)
		}
		if cerr := body.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.logError("%s: %v", cmd, err)
		abortResponse()
	}
}

// legacyChangegroup is the changegroup (roots) and changegroupsubset
// (bases, heads) commands: a bare cg1 stream of the changesets between.
func (s *Server) legacyChangegroup(ctx context.Context, w *logRecorder, cmd string, args map[string]string, pc protoCaps) {
	rootsArg := args["roots"]
	if cmd == "changegroupsubset" {
		rootsArg = args["bases"]
	}
	roots, err := DecodeNodes(rootsArg)
	if err == nil && cmd == "changegroupsubset" {
		var heads []string
		if heads, err = DecodeNodes(args["heads"]); err == nil {
			args["heads"] = strings.Join(heads, " ")
		}
	}
	if err != nil {
		s.plain(w, http.StatusBadRequest, "0\n"+cmd+": "+err.Error()+"\n")
		return
	}
	v, err := s.open()
	if err != nil {
		s.serverError(w, cmd, err)
		return
	}
	defer v.close()
	resolve := func(nodes []string) ([]int, bool) {
		var revs []int
		for _, n := range nodes {
			if n == NullHex {
				revs = append(revs, -1)
				continue
			}
			rev, ok := v.rev(n)
			if !ok {
				return nil, false
			}
			revs = append(revs, rev)
		}
		return revs, true
	}
	rrevs, ok := resolve(roots)
	heads := v.heads()
	if ok && cmd == "changegroupsubset" {
		hn, _ := DecodeNodes(args["heads"])
		heads, ok = resolve(hn)
	}
	if !ok {
		s.hgError(w, "unknown revision\n")
		return
	}
	var hs []int
	for _, h := range heads {
		if h >= 0 {
			hs = append(hs, h)
		}
	}
	s.sendChangegroup(ctx, w, v, pc, v.outgoingFromRoots(rrevs, hs), cmd)
}

// between is localrepo.between: for each "top-bottom" pair, the first
// parent chain from top towards bottom sampled at distances 1, 2, 4, ...
func (v *view) between(arg string) (string, error) {
	var b strings.Builder
	for _, pair := range strings.Fields(arg) {
		nodes := strings.Split(pair, "-")
		if len(nodes) != 2 {
			return "", fmt.Errorf("%w: between: pair %q", ErrBadRequest, truncate(pair, 100))
		}
		top, bottom := nodes[0], nodes[1]
		if _, err := DecodeNodes(top + " " + bottom); err != nil {
			return "", fmt.Errorf("%w: between: %v", ErrBadRequest, err)
		}
		var l []string
		rev := -1
		if top != NullHex {
			var ok bool
			if rev, ok = v.rev(top); !ok {
				return "", fmt.Errorf("%w: between: unknown node %s", ErrBadRequest, top)
			}
		}
		for i, f := 0, 1; rev >= 0 && v.node(rev) != bottom; i++ {
			if i == f {
				l = append(l, v.node(rev))
				f *= 2
			}
			rev, _ = v.parents(rev)
		}
		b.WriteString(EncodeNodes(l) + "\n")
	}
	return b.String(), nil
}

// branches is localrepo.branches: for each node, the first parent chain
// down to a merge or a root, as "start end p1 p2".
func (v *view) branches(arg string) (string, error) {
	nodes, err := DecodeNodes(arg)
	if err != nil {
		return "", fmt.Errorf("%w: branches: %v", ErrBadRequest, err)
	}
	var revs []int
	if len(nodes) == 0 {
		if h := v.heads(); len(h) > 0 {
			revs = append(revs, h[len(h)-1])
		}
	}
	for _, n := range nodes {
		rev, ok := v.rev(n)
		if !ok {
			return "", fmt.Errorf("%w: branches: unknown node %s", ErrBadRequest, n)
		}
		revs = append(revs, rev)
	}
	hexOf := func(rev int) string {
		if rev < 0 {
			return NullHex
		}
		return v.node(rev)
	}
	var b strings.Builder
	for _, t := range revs {
		n := t
		for {
			p1, p2 := v.parents(n)
			if p2 >= 0 || p1 < 0 {
				b.WriteString(EncodeNodes([]string{hexOf(t), hexOf(n), hexOf(p1), hexOf(p2)}) + "\n")
				break
			}
			n = p1
		}
	}
	return b.String(), nil
}
