package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/wireproto"
)

// bundlePeer is a bundle file as a pull source (hg pull FILE), as hg's
// bundlerepo makes one: the local repository with the bundle's
// changesets on top. Discovery, lookup and phases answer for that
// overlay; getbundle replies with the file itself, which the pull reads
// as the bundlerepo does (exchange.PullOptions.FromBundle: changegroups
// and phase-heads only). So a pull from a bundle adds what hg's does:
// every changeset of the bundle the repository lacks, draft unless the
// bundle's phase-heads say otherwise (hg 7; hg 6.3's bundlerepo reads
// no phase-heads and leaves them all draft), no bookmark or marker.
//
// hg regenerates a changegroup of the part -r asks for, and of the
// changesets that are not secret (a bundle's changegroup with
// targetphase secret, and phase-heads that make some of them draft or
// public: hg 7's bundlerepo serves only those). hgfs applies the file as
// it is, so a pull that would leave some of the bundle's new changesets
// out is refused (GetBundle): pull without -r, unbundle the file, or
// pull from the repository it came from.
type bundlePeer struct {
	path  string // the file
	name  string // the source as given, for messages
	local *repo.Repo
	// added are the bundle's changesets the local repository lacks, in
	// the bundle's order (the overlay numbers them from the local
	// changelog's length on); parents maps each to its parents.
	added   []revlog.Node
	parents map[revlog.Node][2]revlog.Node
	// secret are the added changesets the bundle's parts make secret
	// (or a phase above): the overlay serves none of them.
	secret map[revlog.Node]bool
}

// openBundlePeer reads the changelog groups of the bundle at path (the
// first pass: the changesets and their parents), named name in
// messages, against the repository at root. The caller closes the peer.
func openBundlePeer(root, path, name string) (*bundlePeer, error) {
	local, err := repo.Open(root)
	if err != nil {
		return nil, abortf("%v", err)
	}
	p := &bundlePeer{path: path, name: name, local: local, parents: map[revlog.Node][2]revlog.Node{}}
	if err := p.scan(); err != nil {
		local.Close()
		return nil, err
	}
	return p, nil
}

func (p *bundlePeer) scan() error {
	f, err := os.Open(p.path)
	if err != nil {
		return abortf("%s: %v", p.name, errorsCause(err))
	}
	defer f.Close()
	b, err := changegroup.OpenBundle(f)
	if errors.Is(err, changegroup.ErrStreamBundle) {
		// hg 6.3 fails with a traceback on a packed1 bundle and says "No
		// changegroups found" of a v2 stream one.
		a := abortf("%s is a stream bundle: it cannot be pulled from", p.name)
		var magic [4]byte
		if _, rerr := f.ReadAt(magic[:], 0); rerr == nil && string(magic[:]) == "HGS1" {
			return a.withHint("use 'hgfs clone %s DEST'", p.name)
		}
		return a.withHint("use 'hgfs unbundle' into an empty repository, or 'hgfs clone %s DEST'", p.name)
	}
	if err != nil {
		return bundleError(p.name, err)
	}
	defer b.Close()
	cl := p.local.Changelog()
	groups := 0
	hidden := map[revlog.Node]bool{} // added in a part with targetphase secret or above
	var phaseHeads []changegroup.PhaseHead
	for {
		part, err := b.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bundleError(p.name, err)
		}
		if part.Type == "phase-heads" {
			phaseHeads = append(phaseHeads, part.PhaseHeads...)
		}
		if part.Type != "changegroup" {
			continue
		}
		groups++
		cg := part.Changegroup
		kind, _, err := cg.NextGroup()
		if err != nil {
			return bundleError(p.name, err)
		}
		if kind != changegroup.Changelog {
			return bundleError(p.name, fmt.Errorf("%w: the changegroup starts with a %s group", changegroup.ErrCorrupt, kind))
		}
		var d changegroup.Delta
		for {
			ok, err := cg.NextDelta(&d)
			if err != nil {
				return bundleError(p.name, err)
			}
			if !ok {
				break
			}
			n := revlog.Node(d.Node)
			if _, here := cl.Rev(n); here {
				continue
			}
			if _, seen := p.parents[n]; seen {
				continue
			}
			p.parents[n] = [2]revlog.Node{d.P1, d.P2}
			p.added = append(p.added, n)
			if part.TargetPhase >= int(repo.Secret) {
				hidden[n] = true
			}
		}
	}
	if groups == 0 {
		return abortf("%s: no changegroup found", p.name)
	}
	// phase-heads move changesets to a lower phase only (phases.
	// updatephases advances): the ancestors of a head below secret are
	// not secret.
	var stack []revlog.Node
	for _, h := range phaseHeads {
		if h.Phase < int(repo.Secret) {
			stack = append(stack, h.Node)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !hidden[n] {
			continue
		}
		delete(hidden, n)
		ps := p.parents[n]
		stack = append(stack, ps[0], ps[1])
	}
	p.secret = hidden
	return nil
}

func (p *bundlePeer) URL() string { return p.name }

// Capabilities are a local peer's as far as a pull uses them: getbundle
// with bundle2 changegroups, known and lookup; no branchmap (so -b and
// #BRANCH name only what lookup finds), no phases or bookmarks in the
// reply (phases come from the file's parts or listkeys).
func (p *bundlePeer) Capabilities() wireproto.Caps {
	b2 := wireproto.Bundle2Caps{"HG20": nil, "changegroup": {"01", "02", "03"}}
	return wireproto.Caps{"getbundle": "", "known": "", "lookup": "", "bundle2": bundle2.Quote(b2.Encode())}
}

// has reports whether the overlay serves n.
func (p *bundlePeer) has(n revlog.Node) bool {
	if _, ok := p.parents[n]; ok {
		return !p.secret[n]
	}
	_, ok := p.local.Changelog().Rev(n)
	return ok
}

// Heads are the overlay's: the local heads no added changeset descends
// from, and the added changesets that are no added one's parent.
func (p *bundlePeer) Heads(ctx context.Context) ([]string, error) {
	isParent := map[revlog.Node]bool{}
	for n, ps := range p.parents {
		if !p.secret[n] {
			isParent[ps[0]], isParent[ps[1]] = true, true
		}
	}
	local, err := p.local.Heads()
	if err != nil {
		return nil, err
	}
	var heads []string
	for _, r := range local {
		if n := p.local.Node(r); !isParent[n] {
			heads = append(heads, n.String())
		}
	}
	for _, n := range p.added {
		if !isParent[n] && !p.secret[n] {
			heads = append(heads, n.String())
		}
	}
	if len(heads) == 0 {
		heads = append(heads, wireproto.NullHex)
	}
	return heads, nil
}

func (p *bundlePeer) Known(ctx context.Context, nodes []string) ([]bool, error) {
	out := make([]bool, len(nodes))
	for i, h := range nodes {
		if n, err := revlog.ParseNode(h); err == nil {
			out[i] = p.has(n)
		}
	}
	return out, nil
}

// Lookup resolves key in the overlay: an added changeset by its number
// there, its full hex node or a unique prefix of it; else the local
// repository's lookup (numbers, nodes, bookmarks, tags, branches).
func (p *bundlePeer) Lookup(ctx context.Context, key string) (string, error) {
	base := p.local.Changelog().Len()
	if r, err := strconv.Atoi(key); err == nil && r >= base && r-base < len(p.added) && strconv.Itoa(r) == key {
		return p.added[r-base].String(), nil
	}
	if len(key) <= 2*revlog.NodeLen && isHex(key) {
		prefix := strings.ToLower(key)
		var found []revlog.Node
		for _, n := range p.added {
			if strings.HasPrefix(n.String(), prefix) {
				found = append(found, n)
			}
		}
		if len(found) > 1 {
			return "", fmt.Errorf("ambiguous identifier '%s'", key)
		}
		if len(found) == 1 {
			if r, err := p.local.Lookup(key); err == nil && r >= 0 {
				return "", fmt.Errorf("ambiguous identifier '%s'", key)
			}
			return found[0].String(), nil
		}
	}
	r, err := p.local.Lookup(key)
	if err != nil {
		return "", fmt.Errorf("unknown revision '%s'", key)
	}
	if r < 0 {
		return wireproto.NullHex, nil
	}
	return p.local.Node(r).String(), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// ListKeys answers phases as the overlay's listphases: not publishing,
// its draft roots (the local ones, and the added changesets none of
// whose parents was added: bundlerepo makes every added changeset
// draft). Bookmarks and markers are the local repository's own, which a
// pull leaves where they are: none are listed.
func (p *bundlePeer) ListKeys(ctx context.Context, namespace string) (map[string]string, error) {
	if namespace != "phases" {
		return map[string]string{}, nil
	}
	keys := map[string]string{"publishing": "False"}
	cl := p.local.Changelog()
	for r := 0; r < cl.Len(); r++ {
		if p.local.Phase(r) != repo.Draft {
			continue
		}
		e := cl.Entry(r)
		if (e.P1 < 0 || p.local.Phase(e.P1) == repo.Public) && (e.P2 < 0 || p.local.Phase(e.P2) == repo.Public) {
			keys[cl.Node(r).String()] = "1"
		}
	}
	for _, n := range p.added {
		ps := p.parents[n]
		if _, ok := p.parents[ps[0]]; ok {
			continue
		}
		if _, ok := p.parents[ps[1]]; ok {
			continue
		}
		keys[n.String()] = "1"
	}
	return keys, nil
}

func (p *bundlePeer) Branchmap(ctx context.Context) (map[string][]string, error) {
	return nil, errors.New("a bundle has no branchmap")
}

func (p *bundlePeer) StreamOut(ctx context.Context) (io.ReadCloser, error) {
	return nil, errors.New("a bundle cannot stream")
}

// GetBundle replies with the bundle file, when what args ask for (the
// ancestors of heads, not of common) is every changeset the bundle adds.
func (p *bundlePeer) GetBundle(ctx context.Context, args map[string]string) (io.ReadCloser, error) {
	if len(p.secret) > 0 {
		return nil, abortf("hgfs pulls all of a bundle's new changesets: %d of its %d are secret, which a pull leaves out", len(p.secret), len(p.added)).
			withHint("use 'hgfs unbundle' to apply all of it, or pull from the repository it came from")
	}
	heads, err := wireproto.DecodeNodes(args["heads"])
	if err != nil {
		return nil, err
	}
	want := map[revlog.Node]bool{}
	stack := make([]revlog.Node, 0, len(heads))
	for _, h := range heads {
		n, err := revlog.ParseNode(h)
		if err != nil {
			return nil, err
		}
		stack = append(stack, n)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ps, added := p.parents[n]
		if !added || want[n] {
			continue
		}
		want[n] = true
		stack = append(stack, ps[0], ps[1])
	}
	if left := len(p.added) - len(want); left > 0 {
		return nil, abortf("hgfs pulls all of a bundle's new changesets: the revisions asked for leave %d of its %d out", left, len(p.added)).
			withHint("pull without -r, or from the repository the bundle came from")
	}
	f, err := os.Open(p.path)
	if err != nil {
		return nil, abortf("%s: %v", p.name, errorsCause(err))
	}
	return f, nil
}

func (p *bundlePeer) Close() error { return p.local.Close() }
