package bundle2

import (
	"strconv"
	"strings"
)

// Quote is Python's urllib.parse.quote(s, safe='/'), which hg uses for
// bundle2 stream parameters, the stream2 requirements parameter and the
// wire protocol's capabilities (package wireproto uses this one): all
// bytes but ASCII letters, digits, "_.-~" and "/" become %XX (upper-case).
func Quote(s string) string { return QuoteSafe(s, "/") }

// QuoteSafe is Python's urllib.parse.quote(s, safe): Quote with the bytes
// of safe, instead of "/", also left as they are (hg's url class quotes
// each part of a URL with its own).
func QuoteSafe(s, safe string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '_' || c == '.' || c == '-' || c == '~' || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Unquote is Python's urllib.parse.unquote_to_bytes: %XX sequences are
// decoded, malformed ones are kept as they are (never an error).
func Unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			// With base 16, ParseUint takes hex digits only (no sign,
			// prefix or underscore).
			if c, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(c))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
