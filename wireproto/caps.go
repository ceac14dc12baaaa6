package wireproto

// Capabilities, as the v1 "capabilities" command (HTTP) and the "hello"
// command's "capabilities:" line (ssh) return them:
//
//	batch branchmap bundle2=HG20%0Abookmarks%0A... httpheader=1024 ...
//
// Space-separated tokens; a token "name=value" carries a value, a bare token
// is a flag. The bundle2 capability's value is a URL-quoted blob of lines
// "key" or "key=v1,v2" whose keys and values are themselves URL-quoted
// (mercurial/bundle2.py encodecaps/decodecaps).

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// Caps is a server's capability set: name to value ("" for a flag).
type Caps map[string]string

// maxCaps bounds how many capabilities a server may advertise; real servers
// send about twenty.
const maxCaps = 4096

// ParseCaps parses a capabilities response (space or newline separated).
func ParseCaps(data []byte) (Caps, error) {
	caps := Caps{}
	for _, tok := range strings.Fields(string(data)) {
		if len(caps) >= maxCaps {
			return nil, fmt.Errorf("%w: more than %d capabilities", ErrProtocol, maxCaps)
		}
		name, value, _ := strings.Cut(tok, "=")
		if name == "" {
			return nil, fmt.Errorf("%w: capability %q has no name", ErrProtocol, truncate(tok, 64))
		}
		if _, dup := caps[name]; !dup {
			caps[name] = value
		}
	}
	return caps, nil
}

// Has reports whether the server advertises name, with or without a value.
func (c Caps) Has(name string) bool {
	_, ok := c[name]
	return ok
}

// Get returns the value of name ("" for a flag) and whether it is present.
func (c Caps) Get(name string) (string, bool) {
	v, ok := c[name]
	return v, ok
}

// String renders the set as the capabilities command does: sorted,
// space-separated.
func (c Caps) String() string {
	toks := make([]string, 0, len(c))
	for k, v := range c {
		if v == "" {
			toks = append(toks, k)
		} else {
			toks = append(toks, k+"="+v)
		}
	}
	sort.Strings(toks)
	return strings.Join(toks, " ")
}

// Bundle2 decodes the server's "bundle2" capability; a server without one
// yields an empty set.
func (c Caps) Bundle2() (Bundle2Caps, error) {
	v, ok := c["bundle2"]
	if !ok {
		return Bundle2Caps{}, nil
	}
	return DecodeBundle2Caps(bundle2.Unquote(v))
}

// Bundle2Caps is a decoded bundle2 capability blob: key to values.
type Bundle2Caps map[string][]string

// Has reports whether key is present.
func (b Bundle2Caps) Has(key string) bool {
	_, ok := b[key]
	return ok
}

// HasValue reports whether key lists value (e.g. "stream" lists "v2").
func (b Bundle2Caps) HasValue(key, value string) bool {
	for _, v := range b[key] {
		if v == value {
			return true
		}
	}
	return false
}

// DecodeBundle2Caps decodes an (already unquoted) bundle2 capability blob,
// as bundle2.decodecaps does.
func DecodeBundle2Caps(blob string) (Bundle2Caps, error) {
	caps := Bundle2Caps{}
	for _, line := range splitLines(blob) {
		if line == "" {
			continue
		}
		if len(caps) >= maxCaps {
			return nil, fmt.Errorf("%w: more than %d bundle2 capabilities", ErrProtocol, maxCaps)
		}
		key, vals, hasVals := strings.Cut(line, "=")
		var list []string
		if hasVals {
			for _, v := range strings.Split(vals, ",") {
				list = append(list, bundle2.Unquote(v))
			}
		}
		caps[bundle2.Unquote(key)] = list
	}
	return caps, nil
}

// Encode renders the set as bundle2.encodecaps does: sorted keys, quoted
// keys and values, one per line (not yet quoted as a whole).
func (b Bundle2Caps) Encode() string {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		line := bundle2.Quote(k)
		if vals := b[k]; len(vals) > 0 {
			q := make([]string, len(vals))
			for i, v := range vals {
				q[i] = bundle2.Quote(v)
			}
			line += "=" + strings.Join(q, ",")
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// splitLines splits as Python's bytes.splitlines does for the separators
// that matter here (\n, \r\n, \r).
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
