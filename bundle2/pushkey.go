package bundle2

// Pushkey data: a namespace's keys as the listkeys command returns them
// and a "listkeys" part carries them (pushkey.encodekeys and decodekeys):
// "key\tvalue" lines joined by "\n", no final newline; decoding splits
// lines as bytes.splitlines does ("\n", "\r\n", "\r") and wants exactly
// one tab per line. Keys and values pass through encoding.fromlocal and
// tolocal, which are the identity for the UTF-8 hgfs works in: bytes are
// kept as they are. The "bookmarks" namespace maps names to hex nodes
// (bookmarks.listbookmarks). Keep in sync with mercurial/pushkey.py.

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
)

// EncodeKeys encodes a pushkey namespace, sorted by key.
func EncodeKeys(keys map[string]string) []byte {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, k := range names {
		lines[i] = k + "\t" + keys[k]
	}
	return []byte(strings.Join(lines, "\n"))
}

// DecodeKeys reads a pushkey namespace (at most MaxKeysPayload bytes).
// A line without exactly one tab, an empty one included, is
// ErrMalformedKeys, as hg fails on it. Errors of r pass through
// unchanged.
func DecodeKeys(r io.Reader) (map[string]string, error) {
	data, err := readKeysPayload(r, "listkeys", keysErrorf)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for len(data) > 0 {
		i := bytes.IndexAny(data, "\r\n")
		line := data
		if i >= 0 {
			line = data[:i]
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			data = data[i+1:]
		} else {
			data = nil
		}
		k, v, ok := bytes.Cut(line, []byte("\t"))
		if !ok || bytes.IndexByte(v, '\t') >= 0 {
			return nil, keysErrorf("line %q is not key<TAB>value", truncate(line, 64))
		}
		out[string(k)] = string(v)
	}
	return out, nil
}

// DecodeBookmarkKeys decodes the values of the "bookmarks" namespace:
// 40 hex digits per name, in either case (as bin() reads them). Whether a
// name is one a repository may hold is the caller's business.
func DecodeBookmarkKeys(keys map[string]string) (map[string][20]byte, error) {
	out := make(map[string][20]byte, len(keys))
	for name, h := range keys {
		var node [20]byte
		if len(h) != 2*len(node) {
			return nil, keysErrorf("bookmark %q: bad node %q", name, truncate([]byte(h), 64))
		}
		if _, err := hex.Decode(node[:], []byte(h)); err != nil {
			return nil, keysErrorf("bookmark %q: bad node %q", name, h)
		}
		out[name] = node
	}
	return out, nil
}

// keysErrorf wraps ErrMalformedKeys with context.
func keysErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedKeys, fmt.Sprintf(format, args...))
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
