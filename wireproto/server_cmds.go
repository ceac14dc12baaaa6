package wireproto

// The small commands: capabilities, batch, heads, known, listkeys,
// branchmap, lookup (mercurial/wireprotov1server.py). Their responses are
// bytes, assembled whole.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// allowStream is streamclone.allowservergeneration: streaming must be
// enabled, and secret changesets (which a raw copy of the store cannot
// hide) forbid it unless server.uncompressedallowsecret.
func (s *Server) allowStream(v *view) bool {
	if !s.cfg.Uncompressed {
		return false
	}
	if v.hasSecret() {
		return s.cfg.UncompressedAllowSecret
	}
	return true
}

// bundle2Caps is bundle2.getrepocaps(role=b'server') limited to what a
// read-only server does: no push parts (checkheads, digests, pushkey,
// remote-changegroup) and no cache parts (hgtagsfnodes).
func (s *Server) bundle2Caps() Bundle2Caps {
	caps := Bundle2Caps{
		"HG20":        nil,
		"bookmarks":   nil,
		"changegroup": {"01", "02"},
		"error":       {"abort", "unsupportedcontent", "pushraced", "pushkey"},
		"listkeys":    nil,
		"phases":      {"heads"},
	}
	if s.cfg.Changegroup3 {
		caps["changegroup"] = append(caps["changegroup"], "03")
	}
	if s.cfg.ExchangeMarkers {
		caps["obsmarkers"] = []string{"V0", "V1"}
	}
	if s.cfg.Uncompressed && s.cfg.Bundle2Stream {
		caps["stream"] = []string{"v2"}
	}
	return caps
}

// capabilities is wireprotov1server._capabilities plus the HTTP
// protocol's (wireprotoserver.httpv1protocolhandler.addcapabilities),
// with the push ones too (unbundle, unbundlehash, pushkey): a client
// pushing gets the server's refusal (refusePush) rather than "destination
// does not support the unbundle wire protocol command", as from an hg
// serve that does not allow pushes.
func (s *Server) capabilities(v *view) (string, error) {
	caps := []string{"lookup", "branchmap", "pushkey", "known", "getbundle", "batch", "changegroupsubset",
		"unbundle=HG10GZ,HG10BZ,HG10UN", "unbundlehash"}
	if s.allowStream(v) {
		if s.cfg.PreferUncompressed {
			caps = append(caps, "stream-preferred")
		}
		reqs := v.r.Store.Requirements.Streamed().List()
		if len(reqs) == 0 || len(reqs) == 1 && reqs[0] == "revlogv1" {
			caps = append(caps, "stream")
		} else {
			sort.Strings(reqs)
			caps = append(caps, "streamreqs="+strings.Join(reqs, ","))
		}
	}
	caps = append(caps, "bundle2="+bundle2.Quote(s.bundle2Caps().Encode()))
	caps = append(caps, fmt.Sprintf("httpheader=%d", s.cfg.MaxHTTPHeaderLen))
	caps = append(caps, "httpmediatype=0.1rx,0.1tx,0.2tx")
	caps = append(caps, "compression="+strings.Join(serverEngines, ","))
	sort.Strings(caps)
	return strings.Join(caps, " "), nil
}

// batchable lists the commands a batch may hold: those returning bytes.
var batchable = map[string]bool{"heads": true, "known": true, "listkeys": true, "branchmap": true, "lookup": true, "capabilities": true,
	"between": true, "branches": true}

// batch runs each command and joins the escaped results with ';'.
func (s *Server) batch(v *view, args map[string]string) (string, error) {
	calls, err := parseBatch(args["cmds"])
	if err != nil {
		return "", err
	}
	res := make([]string, 0, len(calls))
	for _, c := range calls {
		var out string
		switch {
		case c.name == "capabilities":
			out, err = s.capabilities(v)
		case batchable[c.name]:
			out, err = s.simple(v, c.name, c.args)
		case pushCommands[c.name]:
			return "", fmt.Errorf("%w: batch: %s requires push permission", ErrBadRequest, c.name)
		default:
			return "", fmt.Errorf("%w: batch: command %q cannot be batched", ErrBadRequest, truncate(c.name, 64))
		}
		if err != nil {
			return "", err
		}
		res = append(res, escapeBatchArg(out))
	}
	return strings.Join(res, ";"), nil
}

// simple runs one of the bytes-returning commands.
func (s *Server) simple(v *view, cmd string, args map[string]string) (string, error) {
	switch cmd {
	case "heads":
		h := v.heads()
		// repo.heads() lists the highest rev first.
		for i, j := 0, len(h)-1; i < j; i, j = i+1, j-1 {
			h[i], h[j] = h[j], h[i]
		}
		return EncodeNodes(hexNodes(v, h)) + "\n", nil
	case "known":
		nodes, err := DecodeNodes(args["nodes"])
		if err != nil {
			return "", fmt.Errorf("%w: known: %v", ErrBadRequest, err)
		}
		var b strings.Builder
		for _, n := range nodes {
			if _, ok := v.rev(n); ok {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String(), nil
	case "listkeys":
		keys, err := s.listKeys(v, args["namespace"])
		if err != nil {
			return "", err
		}
		return string(bundle2.EncodeKeys(keys)), nil
	case "branchmap":
		bh, err := v.branchHeads()
		if err != nil {
			return "", err
		}
		names := make([]string, 0, len(bh))
		for b := range bh {
			names = append(names, b)
		}
		sort.Strings(names)
		lines := make([]string, len(names))
		for i, b := range names {
			lines[i] = bundle2.Quote(b) + " " + EncodeNodes(hexNodes(v, bh[b]))
		}
		return strings.Join(lines, "\n"), nil
	case "between":
		return v.between(args["pairs"])
	case "branches":
		return v.branches(args["nodes"])
	case "lookup":
		key := args["key"]
		if key == "tip" {
			// The served view's tip: secret changesets may be above it.
			h := v.heads()
			if len(h) == 0 {
				return "1 " + NullHex + "\n", nil
			}
			return "1 " + v.node(h[len(h)-1]) + "\n", nil
		}
		rev, err := v.r.Lookup(key)
		if err != nil {
			return "0 " + err.Error() + "\n", nil
		}
		if rev < 0 || rev >= v.n {
			return "1 " + NullHex + "\n", nil
		}
		if !v.served[rev] {
			return fmt.Sprintf("0 filtered revision '%s' (not in 'served' subset)\n", key), nil
		}
		return "1 " + v.node(rev) + "\n", nil
	}
	return "", fmt.Errorf("%w: unknown command %q", ErrBadRequest, truncate(cmd, 64))
}

// listKeys is repo.listkeys for the pushkey namespaces hg registers
// (mercurial/pushkey.py _namespaces).
func (s *Server) listKeys(v *view, namespace string) (map[string]string, error) {
	switch namespace {
	case "namespaces":
		// "obsolete" is listed by hg only with obsolescence exchange
		// enabled, which hgfs serve does not offer over listkeys.
		return map[string]string{"bookmarks": "", "namespaces": "", "phases": ""}, nil
	case "bookmarks":
		return v.bookmarks()
	case "phases":
		return v.listPhases(s.cfg.Publishing)
	}
	// "obsolete" (base85 markers for pre-bundle2 clients) is not
	// implemented: bundle2 clients get the obsstore in the stream.
	return map[string]string{}, nil
}
