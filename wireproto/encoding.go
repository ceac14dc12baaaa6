package wireproto

// Value encodings of the v1 wire protocol (mercurial/wireprototypes.py):
// node lists are 40-digit hex joined by spaces. listkeys responses
// (pushkey data) and URL quoting (Python's urllib.parse.quote, safe "/",
// and its lenient unquote) are package bundle2's, whose parameters and
// capabilities use the same.

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
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
// 40 hex digits (wireprototypes.decodelist, which unhexlifies). Its error
// names the bad node only: a client reading a response wraps it in
// ErrProtocol, a server reading arguments answers a bad request.
func DecodeNodes(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, " ")
	for _, p := range parts {
		if !ValidHex(p) {
			return nil, fmt.Errorf("bad node %q", truncate(p, 64))
		}
	}
	return parts, nil
}

// decodeKeys parses a listkeys response (bundle2.DecodeKeys); what does
// not parse is ErrProtocol.
func decodeKeys(data []byte) (map[string]string, error) {
	keys, err := bundle2.DecodeKeys(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return keys, nil
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
		return strings.ReplaceAll(bundle2.Quote(s), "/", "%2F")
	}
	parts := strings.Split(s, " ")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(bundle2.Quote(p), "/", "%2F")
	}
	return strings.Join(parts, "+")
}
