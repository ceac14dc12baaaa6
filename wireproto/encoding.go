package wireproto

// Value encodings of the v1 wire protocol (mercurial/wireprototypes.py,
// mercurial/pushkey.py): node lists are 40-digit hex joined by spaces,
// listkeys responses are "key\tvalue" lines, and URL quoting follows
// Python's urllib.parse.quote (safe "/") and unquote (lenient).

import (
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/streamclone"
)

// NullHex is the null node in hex, which a clone sends as "common".
const NullHex = "0000000000000000000000000000000000000000"

// ValidHex reports whether s is a full 40-digit lowercase hex node.
func ValidHex(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// EncodeNodes joins hex nodes with spaces (wireprototypes.encodelist).
func EncodeNodes(nodes []string) string { return strings.Join(nodes, " ") }

// DecodeNodes parses a space-separated hex node list; every node must be
// 40 hex digits (wireprototypes.decodelist, which unhexlifies).
func DecodeNodes(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, " ")
	for _, p := range parts {
		if !ValidHex(p) {
			return nil, fmt.Errorf("%w: bad node %q", ErrProtocol, truncate(p, 64))
		}
	}
	return parts, nil
}

// DecodeKeys parses a listkeys response: "key\tvalue" lines
// (pushkey.decodekeys).
func DecodeKeys(data []byte) (map[string]string, error) {
	keys := map[string]string{}
	for _, line := range splitLines(string(data)) {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok || strings.Contains(v, "\t") {
			return nil, fmt.Errorf("%w: listkeys line %q is not key<TAB>value", ErrProtocol, truncate(line, 64))
		}
		keys[k] = v
	}
	return keys, nil
}

// Quote is Python's urllib.parse.quote(s, safe="/"): everything but
// letters, digits, "_.-~/" is %XX-escaped. It is streamclone.Quote (the
// same quoting serves bundle2 parameters and capabilities).
func Quote(s string) string { return streamclone.Quote(s) }

// Unquote is Python's urllib.parse.unquote for bytes (streamclone.Unquote):
// %XX sequences are decoded and malformed ones are kept literally. It
// never fails; the error is for future strictness and keeps call sites
// honest.
func Unquote(s string) (string, error) { return streamclone.Unquote(s), nil }

// formEncode is Python's urlencode(sorted(pairs)) as the HTTP peer sends
// arguments: quote_plus of keys and values, "&"-joined, sorted by key.
func formEncode(args map[string]string) string {
	keys := sortedKeys(args)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = quotePlus(k) + "=" + quotePlus(args[k])
	}
	return strings.Join(parts, "&")
}

func quotePlus(s string) string {
	if !strings.Contains(s, " ") {
		return strings.ReplaceAll(Quote(s), "/", "%2F")
	}
	parts := strings.Split(s, " ")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(Quote(p), "/", "%2F")
	}
	return strings.Join(parts, "+")
}
