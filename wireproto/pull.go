package wireproto

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// Known asks which of nodes the server has, in order (the "known" command,
// wireprotov1server.known: one '0' or '1' byte per node). Callers batch:
// each node costs 41 bytes of request arguments.
func (p *HTTPPeer) Known(ctx context.Context, nodes []string) ([]bool, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	if !p.caps.Has("known") {
		return nil, unsupportedf("cannot discover changes; remote repository does not support the 'known' capability")
	}
	data, err := p.call(ctx, "known", map[string]string{"nodes": EncodeNodes(nodes)}, false)
	if err != nil {
		return nil, err
	}
	return decodeKnown(data, len(nodes))
}

// Known implements Peer.
func (p *SSHPeer) Known(ctx context.Context, nodes []string) ([]bool, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	if !p.caps.Has("known") {
		return nil, unsupportedf("cannot discover changes; remote repository does not support the 'known' capability")
	}
	data, err := p.withCtx(ctx, func() ([]byte, error) {
		// known's spec is "nodes *" (wireprotov1server.py).
		return p.callStar("known", []sshArg{{"nodes", EncodeNodes(nodes)}}, map[string]string{})
	})
	if err != nil {
		return nil, err
	}
	return decodeKnown(data, len(nodes))
}

// decodeKnown parses a known reply: exactly n bytes of '0'/'1' (hg's client
// accepts a trailing newline from old servers; so do we).
func decodeKnown(data []byte, n int) ([]bool, error) {
	s := strings.TrimSuffix(string(data), "\n")
	if len(s) != n {
		return nil, fmt.Errorf("%w: known: %d answers for %d nodes", ErrProtocol, len(s), n)
	}
	out := make([]bool, n)
	for i := 0; i < n; i++ {
		switch s[i] {
		case '1':
			out[i] = true
		case '0':
		default:
			return nil, fmt.Errorf("%w: unexpected response: %q", ErrProtocol, truncate(s, 100))
		}
	}
	return out, nil
}

// PullBundle2Caps is what a pulling client advertises: ClientBundle2Caps
// plus the changegroup versions package changegroup decodes (hg's client
// sends changegroup=01,02 and 03 where enabled; the server picks the
// highest version both sides support).
func PullBundle2Caps() Bundle2Caps {
	c := ClientBundle2Caps()
	c["changegroup"] = []string{"01", "02", "03"}
	return c
}

// PullArgs returns getbundle's arguments for a changegroup pull of heads
// given the nodes both sides have (common; nil means none, sent as the
// null node), as exchange._pullbundle2 builds them: bundlecaps, common,
// heads, cg=1, phases=1 when the server sends phase-heads parts (else
// listkeys=phases), bookmarks=1 when it sends binary bookmarks (else
// listkeys=bookmarks).
func PullArgs(server Bundle2Caps, common, heads []string) map[string]string {
	bundlecaps := []string{"HG20", "bundle2=" + bundle2.Quote(PullBundle2Caps().Encode())}
	sort.Strings(bundlecaps)
	if len(common) == 0 {
		common = []string{NullHex}
	}
	args := map[string]string{
		"bundlecaps": strings.Join(bundlecaps, ","),
		"common":     EncodeNodes(common),
		"heads":      EncodeNodes(heads),
		"cg":         "1",
	}
	var listkeys []string
	if server.HasValue("phases", "heads") {
		args["phases"] = "1"
	} else {
		listkeys = append(listkeys, "phases")
	}
	if server.Has("bookmarks") {
		args["bookmarks"] = "1"
	} else {
		listkeys = append(listkeys, "bookmarks")
	}
	if len(listkeys) > 0 {
		args["listkeys"] = strings.Join(listkeys, ",")
	}
	return args
}
