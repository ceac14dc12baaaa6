package exchange

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/hgfs/hgfs/revlog"
)

// Discovery finds the changesets a local repository and a remote have in
// common, with the remote's "heads" and "known" commands, as setdiscovery
// does in spirit: ask about the local heads first, then sample the
// undecided ancestors (heads of the undecided set plus their ancestors at
// exponentially growing distances) until every local changeset is known
// to be common or missing. Each answer decides whole subgraphs: a known
// changeset makes its ancestors common, an unknown one makes its
// descendants missing. The samples are at most knownBatch nodes, so a
// round is one small request.
//
// The result need not be minimal for correctness: getbundle sends the
// ancestors of the remote heads that are not ancestors of common, and the
// apply skips revisions already present.

// knownBatch is the most nodes sent in one known request (hg's
// setdiscovery samples 200 at a time).
const knownBatch = 200

// Remote is what discovery needs of a peer.
type Remote interface {
	Heads(ctx context.Context) ([]string, error)
	Known(ctx context.Context, nodes []string) ([]bool, error)
}

// DiscoveryResult is the outcome of FindCommon.
type DiscoveryResult struct {
	// Common are the heads of the common set (hex); empty when nothing is
	// shared (the caller sends the null node).
	Common []string
	// RemoteHeads are the remote's heads (hex), what a pull asks for.
	RemoteHeads []string
	// Incoming reports whether some remote head is missing locally.
	Incoming bool
	// Rounds is the number of known requests made.
	Rounds int
}

// FindCommon runs discovery between the local changelog cl and remote.
func FindCommon(ctx context.Context, cl graph, remote Remote) (*DiscoveryResult, error) {
	heads, err := remote.Heads(ctx)
	if err != nil {
		return nil, err
	}
	res := &DiscoveryResult{}
	for _, h := range heads {
		if h == nullHex {
			continue // an empty remote reports the null head
		}
		res.RemoteHeads = append(res.RemoteHeads, h)
	}
	n := cl.Len()
	for _, h := range res.RemoteHeads {
		node, err := parseHex(h)
		if err != nil {
			return nil, err
		}
		if _, ok := cl.Rev(node); !ok {
			res.Incoming = true
		}
	}
	if n == 0 {
		return res, nil
	}
	// state: 0 undecided, 1 common, 2 missing on the remote.
	state := make([]byte, n)
	markCommon := func(r int) {
		stack := []int{r}
		for len(stack) > 0 {
			r := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if r < 0 || state[r] == 1 {
				continue
			}
			state[r] = 1
			e := cl.Entry(r)
			stack = append(stack, e.P1, e.P2)
		}
	}
	// Remote heads we have are common, with their ancestors.
	for _, h := range res.RemoteHeads {
		node, _ := parseHex(h)
		if r, ok := cl.Rev(node); ok {
			markCommon(r)
		}
	}
	for {
		sample := sampleUndecided(cl, state)
		if len(sample) == 0 {
			break
		}
		nodes := make([]string, len(sample))
		for i, r := range sample {
			nodes[i] = cl.Node(r).String()
		}
		known, err := remote.Known(ctx, nodes)
		if err != nil {
			return nil, err
		}
		res.Rounds++
		if len(known) != len(sample) {
			return nil, fmt.Errorf("known: %d answers for %d nodes", len(known), len(sample))
		}
		for i, r := range sample {
			if known[i] {
				markCommon(r)
			}
		}
		// Every unknown sample and its undecided descendants are missing:
		// one forward pass for the whole round.
		first := n
		for i, r := range sample {
			if !known[i] && state[r] == 0 {
				state[r] = 2
				first = min(first, r)
			}
		}
		for c := first + 1; c < n; c++ {
			if state[c] != 0 {
				continue
			}
			e := cl.Entry(c)
			if (e.P1 >= 0 && state[e.P1] == 2) || (e.P2 >= 0 && state[e.P2] == 2) {
				state[c] = 2
			}
		}
	}
	// Heads of the common set.
	isParent := make([]bool, n)
	for r := 0; r < n; r++ {
		if state[r] != 1 {
			continue
		}
		e := cl.Entry(r)
		if e.P1 >= 0 {
			isParent[e.P1] = true
		}
		if e.P2 >= 0 {
			isParent[e.P2] = true
		}
	}
	for r := 0; r < n; r++ {
		if state[r] == 1 && !isParent[r] {
			res.Common = append(res.Common, cl.Node(r).String())
		}
	}
	return res, nil
}

// sampleUndecided picks up to knownBatch undecided revisions: the heads of
// the undecided set first, then, walking first parents from each, the
// undecided ancestors at distance 1, 2, 4, 8...
func sampleUndecided(cl graph, state []byte) []int {
	n := len(state)
	hasUndecidedChild := make([]bool, n)
	any := false
	for r := 0; r < n; r++ {
		if state[r] != 0 {
			continue
		}
		any = true
		e := cl.Entry(r)
		if e.P1 >= 0 {
			hasUndecidedChild[e.P1] = true
		}
		if e.P2 >= 0 {
			hasUndecidedChild[e.P2] = true
		}
	}
	if !any {
		return nil
	}
	picked := map[int]bool{}
	var sample []int
	pick := func(r int) {
		if !picked[r] && len(sample) < knownBatch {
			picked[r] = true
			sample = append(sample, r)
		}
	}
	var heads []int
	for r := n - 1; r >= 0; r-- {
		if state[r] == 0 && !hasUndecidedChild[r] {
			heads = append(heads, r)
			pick(r)
		}
	}
	for _, h := range heads {
		dist, next := 0, 1
		for r := h; r >= 0 && state[r] == 0 && len(sample) < knownBatch; r = cl.Entry(r).P1 {
			if dist == next {
				pick(r)
				next *= 2
			}
			dist++
		}
	}
	return sample
}

const nullHex = "0000000000000000000000000000000000000000"

func parseHex(h string) (revlog.Node, error) {
	var n revlog.Node
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(n) {
		return n, fmt.Errorf("bad node %q from remote", h)
	}
	copy(n[:], b)
	return n, nil
}
