package wireproto

// Value encodings of the v1 wire protocol (mercurial/wireprototypes.py,
// mercurial/pushkey.py): node lists are 40-digit hex joined by spaces,
// listkeys responses are "key\tvalue" lines, and URL quoting follows
// Python's urllib.parse.quote (safe "/") and unquote (lenient).

import (
	"fmt"
	"strings"
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
// letters, digits, "_.-~/" is %XX-escaped.
func Quote(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// Unquote is Python's urllib.parse.unquote for bytes: %XX sequences are
// decoded and malformed ones are kept literally. It never fails; the error
// is for future strictness and keeps call sites honest.
func Unquote(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

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
