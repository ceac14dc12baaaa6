package wireproto

// The commands whose responses are bytes, assembled whole:
// capabilities, hello, batch, heads, known, listkeys, branchmap, lookup,
// between, protocaps (mercurial/wireprotov1server.py). They are the
// same whatever the transport: answer serves HTTP and ssh alike, and the
// stream commands (server_stream.go) write to whatever writer the
// transport hands them.

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/streamclone"
)

// wireCommand is a version 1 command as wireprotov1server.py declares it.
type wireCommand struct {
	// args is the argument spec: names, and "*" for any others (which
	// the ssh transport sends as a counted group).
	args string
	push bool // needs push permission
}

// wireCommands are the commands hg 6.3 and 7 declare (keep in sync with
// wireprotov1server.py @wireprotocommand): the ssh transport reads a
// command's arguments by its spec, and answers a name not listed here as
// hg does an unknown command.
var wireCommands = map[string]wireCommand{
	"batch":                    {args: "cmds *"},
	"between":                  {args: "pairs"},
	"branchmap":                {},
	"branches":                 {args: "nodes"},
	"capabilities":             {},
	"changegroup":              {args: "roots"},
	"changegroupsubset":        {args: "bases heads"},
	"clonebundles":             {},
	"clonebundles_manifest":    {args: "*"},
	"debugwireargs":            {args: "one two *"},
	"get_cached_bundle_inline": {args: "path"},
	"getbundle":                {args: "*"},
	"heads":                    {},
	"hello":                    {},
	"known":                    {args: "nodes *"},
	"listkeys":                 {args: "namespace"},
	"lookup":                   {args: "key"},
	"protocaps":                {args: "caps"},
	"pushkey":                  {args: "namespace key old new", push: true},
	"stream_out":               {},
	"unbundle":                 {args: "heads", push: true},
}

// oobError is hg's ooberror: a message the client prints (HTTP:
// application/hg-error; ssh: the text on stderr and an empty line).
type oobError struct{ msg string }

func (e *oobError) Error() string { return e.msg }

// errNotServed is a command hg knows that hgfs serve does not implement.
var errNotServed = errors.New("not served")

// answer runs one bytes command on a fresh view of the repository.
// Errors are ErrBadRequest for the client's mistakes, errNotServed, or
// the server's own.
func (s *Server) answer(cmd string, args map[string]string, pc protoCaps) (string, error) {
	v, err := s.open()
	if err != nil {
		return "", err
	}
	defer v.close()
	switch cmd {
	case "capabilities":
		return s.capabilities(v, pc)
	case "hello":
		// wireprotov1server.hello: RFC 822-like lines.
		caps, err := s.capabilities(v, pc)
		return "capabilities: " + caps + "\n", err
	case "batch":
		return s.batch(v, args, pc)
	case "protocaps":
		// The transport keeps what the client said (ServeSSH).
		return "OK", nil
	}
	return s.simple(v, cmd, args)
}

// allowStream is streamclone.Allowed with the server's settings.
func (s *Server) allowStream(v *view) (bool, error) {
	return streamclone.Allowed(v.r.Store, s.cfg.Uncompressed, s.cfg.UncompressedAllowSecret)
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

// capabilities is wireprotov1server._capabilities plus the transport's
// (wireprotoserver.httpv1protocolhandler.addcapabilities, or
// sshv1protocolhandler's "protocaps"), with the push ones too (unbundle,
// unbundlehash, pushkey): a client pushing gets the server's refusal
// (refusePush over HTTP, an out-of-band error over ssh) rather than
// "destination does not support the unbundle wire protocol command", as
// from an hg serve that does not allow pushes.
func (s *Server) capabilities(v *view, pc protoCaps) (string, error) {
	caps := []string{"lookup", "branchmap", "pushkey", "known", "getbundle", "batch", "changegroupsubset",
		"unbundle=HG10GZ,HG10BZ,HG10UN", "unbundlehash"}
	stream, err := s.allowStream(v)
	if err != nil {
		return "", err
	}
	if stream {
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
	caps = append(caps, s.cloneBundleCaps()...)
	caps = append(caps, "bundle2="+bundle2.Quote(s.bundle2Caps().Encode()))
	if pc.ssh {
		caps = append(caps, "protocaps")
	} else {
		caps = append(caps, fmt.Sprintf("httpheader=%d", s.cfg.MaxHTTPHeaderLen))
		caps = append(caps, "httpmediatype=0.1rx,0.1tx,0.2tx")
		caps = append(caps, "compression="+strings.Join(serverEngines, ","))
	}
	sort.Strings(caps)
	return strings.Join(caps, " "), nil
}

// batchable lists the commands a batch may hold: those returning bytes.
var batchable = map[string]bool{"heads": true, "known": true, "listkeys": true, "branchmap": true, "lookup": true, "capabilities": true,
	"between": true, "branches": true}

// batch runs each command and joins the escaped results with ';'.
func (s *Server) batch(v *view, args map[string]string, pc protoCaps) (string, error) {
	calls, err := parseBatch(args["cmds"])
	if err != nil {
		return "", err
	}
	res := make([]string, 0, len(calls))
	for _, c := range calls {
		var out string
		switch {
		case c.name == "capabilities":
			out, err = s.capabilities(v, pc)
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
	case "clonebundles", "clonebundles_manifest":
		return s.cloneBundles(cmd)
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
	if _, known := wireCommands[cmd]; known {
		return "", fmt.Errorf("%w: %s", errNotServed, cmd)
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
