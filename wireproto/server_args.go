package wireproto

// Request argument decoding for the server side (mercurial/hgweb and
// wireprotoserver.py httpv1protocolhandler._args, wireprotov1server.py
// batch, wireprototypes.py unescapebatcharg):
//
//	GET /?cmd=<name>[&<more args, Mercurial < 1.9>]
//	X-HgArg-1: <urlencoded args, chunk 1>
//	X-HgArg-2: <chunk 2> ...            (concatenated, then parsed as a query)
//	X-HgProto-1: 0.1 0.2 comp=zstd,zlib,none
//
//	batch's "cmds" argument:
//	  cmd1 k=v,k2=v2;cmd2 k=v
//	  with ':' ',' ';' '=' inside names and values escaped as
//	  ':c' ':o' ':s' ':e'.
//
// Everything here is untrusted: sizes are bounded before anything is
// allocated, and malformed input is an ErrBadRequest, never a panic.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// ErrBadRequest means a client sent a malformed or oversized request.
var ErrBadRequest = errors.New("bad request")

// Limits on request arguments. Real clients send at most a few KiB (a
// getbundle with its heads, common nodes and bundle2 capabilities); the
// node lists of a discovery "known" batch are the largest.
const (
	// maxArgBytes bounds all arguments of one request together.
	maxArgBytes = 1 << 20
	// maxArgHeaders bounds the number of X-HgArg-N headers.
	maxArgHeaders = 4096
	// maxBatchCommands bounds the commands in one batch.
	maxBatchCommands = 64
)

// decodeHeaderValue reassembles a value split over numbered headers
// prefix-1, prefix-2, ... (wireprotoserver.decodevaluefromheaders),
// stopping at the first missing number.
func decodeHeaderValue(h http.Header, prefix string, max int) (string, error) {
	var b strings.Builder
	for i := 1; ; i++ {
		vals, ok := h[http.CanonicalHeaderKey(prefix+"-"+strconv.Itoa(i))]
		if !ok || len(vals) == 0 {
			break
		}
		if i > maxArgHeaders {
			return "", fmt.Errorf("%w: more than %d %s headers", ErrBadRequest, maxArgHeaders, prefix)
		}
		if b.Len()+len(vals[0]) > max {
			return "", fmt.Errorf("%w: %s headers exceed %d bytes", ErrBadRequest, prefix, max)
		}
		b.WriteString(vals[0])
	}
	return b.String(), nil
}

// requestArgs returns the command's arguments: the query string's (less
// "cmd"), then the X-HgArg headers' which win, as hg's _args does. Only
// the first value of a repeated name counts.
func requestArgs(r *http.Request) (map[string]string, error) {
	if len(r.URL.RawQuery) > maxArgBytes {
		return nil, fmt.Errorf("%w: query string exceeds %d bytes", ErrBadRequest, maxArgBytes)
	}
	args := map[string]string{}
	if err := parseQuery(r.URL.RawQuery, args); err != nil {
		return nil, err
	}
	delete(args, "cmd")
	hv, err := decodeHeaderValue(r.Header, "X-HgArg", maxArgBytes)
	if err != nil {
		return nil, err
	}
	hdr := map[string]string{}
	if err := parseQuery(hv, hdr); err != nil {
		return nil, err
	}
	for k, v := range hdr {
		args[k] = v
	}
	return args, nil
}

// parseQuery parses an urlencoded query (parse_qs with
// keep_blank_values), keeping the first value of each name.
func parseQuery(q string, into map[string]string) error {
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return fmt.Errorf("%w: argument name %q: %v", ErrBadRequest, truncate(k, 64), err)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return fmt.Errorf("%w: argument %q: %v", ErrBadRequest, truncate(key, 64), err)
		}
		if _, dup := into[key]; !dup {
			into[key] = val
		}
	}
	return nil
}

// protoCaps is what the client said of itself: over HTTP, X-HgProto-1
// ("0.1 0.2 comp=zstd,zlib,none"); over ssh, the protocaps command.
type protoCaps struct {
	v02  bool
	comp []string // client engines, in its order of preference
	ssh  bool     // the request came over ssh (hg's proto.name "ssh-v1")
}

func parseProtoCaps(h http.Header) (protoCaps, error) {
	v, err := decodeHeaderValue(h, "X-HgProto", 64<<10)
	if err != nil {
		return protoCaps{}, err
	}
	pc := protoCaps{v02: contains(strings.Split(v, " "), "0.2"), comp: parseCompCaps(v)}
	return pc, nil
}

// batchCall is one command of a batch.
type batchCall struct {
	name string
	args map[string]string
}

// unescapeBatchArg is wireprototypes.unescapebatcharg.
func unescapeBatchArg(s string) string {
	if !strings.Contains(s, ":") {
		return s
	}
	s = strings.ReplaceAll(s, ":e", "=")
	s = strings.ReplaceAll(s, ":s", ";")
	s = strings.ReplaceAll(s, ":o", ",")
	return strings.ReplaceAll(s, ":c", ":")
}

// escapeBatchArg is wireprototypes.escapebatcharg.
func escapeBatchArg(s string) string {
	if !strings.ContainsAny(s, ":,;=") {
		return s
	}
	s = strings.ReplaceAll(s, ":", ":c")
	s = strings.ReplaceAll(s, ",", ":o")
	s = strings.ReplaceAll(s, ";", ":s")
	return strings.ReplaceAll(s, "=", ":e")
}

// parseBatch decodes batch's cmds argument as wireprotov1server.batch does:
// "op args" pairs split on ';', args split on ',', each "name=value".
func parseBatch(cmds string) ([]batchCall, error) {
	if len(cmds) > maxArgBytes {
		return nil, fmt.Errorf("%w: batch exceeds %d bytes", ErrBadRequest, maxArgBytes)
	}
	var calls []batchCall
	for _, pair := range strings.Split(cmds, ";") {
		if len(calls) == maxBatchCommands {
			return nil, fmt.Errorf("%w: more than %d commands in a batch", ErrBadRequest, maxBatchCommands)
		}
		op, args, ok := strings.Cut(pair, " ")
		if !ok {
			return nil, fmt.Errorf("%w: batch command %q has no argument list", ErrBadRequest, truncate(pair, 64))
		}
		c := batchCall{name: op, args: map[string]string{}}
		for _, a := range strings.Split(args, ",") {
			if a == "" {
				continue
			}
			n, v, ok := strings.Cut(a, "=")
			if !ok || strings.Contains(v, "=") {
				return nil, fmt.Errorf("%w: batch argument %q is not name=value", ErrBadRequest, truncate(a, 64))
			}
			c.args[unescapeBatchArg(n)] = unescapeBatchArg(v)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// getbundleArgs are getbundle's decoded arguments
// (wireprototypes.GETBUNDLE_ARGUMENTS; keep in sync).
type getbundleArgs struct {
	heads, common []string // hex nodes; nil when absent
	hasHeads      bool
	bundlecaps    map[string]bool
	listkeys      []string
	bools         map[string]bool // cg, stream, phases, bookmarks, obsmarkers, cbattempted
	includepats   []string
	excludepats   []string
	unknown       []string
}

var getbundleBools = map[string]bool{"bookmarks": true, "obsmarkers": true, "phases": true, "cg": true, "cbattempted": true, "stream": true}

// decodeGetbundleArgs types getbundle's arguments as
// wireprotov1server.getbundle does: "nodes" are space-separated hex,
// "csv"/"scsv" comma-separated, booleans are false only for "0" or "".
func decodeGetbundleArgs(args map[string]string) (*getbundleArgs, error) {
	g := &getbundleArgs{bools: map[string]bool{}}
	var err error
	for k, v := range args {
		switch {
		case k == "heads":
			g.hasHeads = true
			if g.heads, err = DecodeNodes(v); err != nil {
				return nil, fmt.Errorf("%w: heads: %v", ErrBadRequest, err)
			}
		case k == "common":
			if g.common, err = DecodeNodes(v); err != nil {
				return nil, fmt.Errorf("%w: common: %v", ErrBadRequest, err)
			}
		case k == "bundlecaps":
			g.bundlecaps = map[string]bool{}
			for _, c := range strings.Split(v, ",") {
				g.bundlecaps[c] = true
			}
		case k == "listkeys":
			g.listkeys = strings.Split(v, ",")
		case k == "includepats":
			g.includepats = strings.Split(v, ",")
		case k == "excludepats":
			g.excludepats = strings.Split(v, ",")
		case getbundleBools[k]:
			g.bools[k] = v != "0" && v != ""
		default:
			g.unknown = append(g.unknown, k)
		}
	}
	return g, nil
}

// flag returns a boolean argument, def when absent.
func (g *getbundleArgs) flag(name string, def bool) bool {
	if v, ok := g.bools[name]; ok {
		return v
	}
	return def
}

// bundle2 reports whether the client asked for an HG20 reply
// (exchange.bundle2requested) and returns its bundle2 capabilities.
func (g *getbundleArgs) bundle2() (bool, Bundle2Caps) {
	caps := Bundle2Caps{}
	is2 := false
	for c := range g.bundlecaps {
		if strings.HasPrefix(c, "HG2") {
			is2 = true
		}
		if blob, ok := strings.CutPrefix(c, "bundle2="); ok {
			if dec, err := DecodeBundle2Caps(bundle2.Unquote(blob)); err == nil {
				for k, v := range dec {
					caps[k] = v
				}
			}
		}
	}
	return is2, caps
}
