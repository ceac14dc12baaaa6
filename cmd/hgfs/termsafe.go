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
	var b strings.Builder
	last := 0 // s[last:i] is still to be copied
	for i := 0; i < len(s); {
		esc, n := escapeAt(s, i)
		if esc != "" {
			b.WriteString(s[last:i])
			b.WriteString(esc)
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return s // nothing escaped: no copy
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapeAt returns what the character at s[i] becomes ("" if it stays)
// and its length in bytes.
func escapeAt(s string, i int) (string, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c == '\n' || c == '\t':
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
		case c < 0x20 || c == 0x7f:
			return fmt.Sprintf(`\x%02x`, c), 1
		}
		return "", 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && n == 1 && c <= 0x9f:
		// Not UTF-8: a lone byte, which an 8-bit terminal may take for a
		// C1 control (0x9b is CSI).
		return fmt.Sprintf(`\x%02x`, c), 1
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf(`\u%04x`, r), n
	}
	return "", n
}
