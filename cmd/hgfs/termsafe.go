package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Terminal escapes in messages.
//
// Messages (status, notes, debug lines, warnings, aborts and their hints)
// carry text hgfs does not control: a server's output parts and ssh
// stderr, its error messages and hints, file names from a stream or a
// bundle, HTTP error pages. hg prints them raw, so a server can write to
// the user's clipboard (OSC 52), clear the screen or retitle the window.
// hgfs escapes C0 and C1 control characters and DEL in messages: bytes as
// \xNN, the C1 code points as \u00NN. Newline and tab pass, and so does a
// carriage return that ends a line (ssh and OpenSSH's own messages end
// lines with CRLF); a lone carriage return, which would let text overwrite
// what came before on the line, is escaped. Command output proper (cat,
// log, debugdata, manifest) is written as it is, as hg does: it is the
// user's data, and may be piped.

// termSafe returns s with control characters escaped (see above).
func termSafe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t':
				b.WriteByte(c)
			case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				b.WriteByte(c)
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			// Not UTF-8: a lone byte, which an 8-bit terminal may take
			// for a C1 control (0x9b is CSI).
			if c <= 0x9f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape reports whether termSafe would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && i+1 < len(s) && s[i+1] == '\n')) || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1 && c <= 0x9f) || (r >= 0x80 && r <= 0x9f) {
			return true
		}
		i += n
	}
	return false
}
