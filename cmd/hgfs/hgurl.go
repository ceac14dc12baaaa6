package main

import (
	"fmt"
	"strings"
)

// hgURL is a URL split as mercurial/utils/urlutil.py's url class splits
// it, to be joined again as that class does (String): hg records and
// prints every source that way, and the joining is not the identity. It
// adds the "/" after a bare host ("http://h:8000" is "http://h:8000/")
// and writes a part's percent-escapes only where hg would need them
// ("/re%70o" is "/repo").
type hgURL struct {
	scheme, user, passwd, host, port, path, query, fragment string

	hasFragment bool // a "#", even with nothing after it
	// local: no scheme (a path, or a Windows drive or UNC path), or a
	// bundle: path; nothing but the fragment is split off, and the
	// text is written back as it came.
	local bool
}

// parseHgURL is url.__init__ (parsequery and parsefragment on). Unlike
// hg it refuses nothing (hg aborts on a file:// URL naming a host other
// than the local one): it is used to show and record sources, which
// were, or will be, opened by other means.
func parseHgURL(s string) hgURL {
	u := hgURL{local: true}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, u.fragment, u.hasFragment = s[:i], s[i+1:], true
	}
	if hasDriveLetter(s) || strings.HasPrefix(s, `\\`) {
		u.path = s
		return u
	}
	// hg's compatibility case: a bundle: path takes no host.
	if rest, ok := strings.CutPrefix(s, "bundle:"); ok {
		u.scheme, u.path = "bundle", strings.TrimPrefix(rest, "//")
		return u
	}
	if i := strings.IndexByte(s, ':'); i > 0 && isSchemeName(s[:i]) {
		u.scheme, s, u.local = s[:i], s[i+1:], false
	}
	if u.local {
		u.path = s
		return u
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, u.query = s[:i], s[i+1:]
	}
	// "//" is required to name a host.
	if rest, ok := strings.CutPrefix(s, "//"); ok {
		u.host, s, _ = strings.Cut(rest, "/")
		if u.host == "" && s != "" && !hasDriveLetter(s) {
			// file:///d is /d, but file:///d:/ is d:/.
			s = "/" + s
		}
	}
	if i := strings.LastIndexByte(u.host, '@'); i >= 0 {
		u.user, u.host = u.host[:i], u.host[i+1:]
		u.user, u.passwd, _ = strings.Cut(u.user, ":")
	}
	// A colon in a bracketed IPv6 address is no port's.
	if strings.Contains(u.host, ":") && !(strings.HasPrefix(u.host, "[") && strings.HasSuffix(u.host, "]")) {
		i := strings.LastIndexByte(u.host, ':')
		u.host, u.port = u.host[:i], u.host[i+1:]
	}
	u.path = s
	// The query stays escaped.
	for _, p := range []*string{&u.user, &u.passwd, &u.host, &u.port, &u.path, &u.fragment} {
		*p = unquote(*p)
	}
	return u
}

// String is url.__bytes__.
func (u hgURL) String() string {
	if u.local {
		s := u.path
		if u.scheme == "bundle" {
			s = "bundle:" + s
		}
		if u.fragment != "" {
			s += "#" + u.fragment
		}
		return s
	}
	var b strings.Builder
	b.WriteString(u.scheme + ":")
	if u.user != "" || u.passwd != "" || u.host != "" {
		b.WriteString("//")
	} else if u.path == "" || strings.HasPrefix(u.path, "/") || hasDriveLetter(u.path) {
		b.WriteString("//")
		if hasDriveLetter(u.path) {
			b.WriteString("/")
		}
	}
	b.WriteString(quote(u.user, urlSafeChars))
	if u.passwd != "" {
		b.WriteString(":" + quote(u.passwd, urlSafeChars))
	}
	if u.user != "" || u.passwd != "" {
		b.WriteString("@")
	}
	if strings.HasPrefix(u.host, "[") && strings.HasSuffix(u.host, "]") {
		b.WriteString(u.host)
	} else {
		b.WriteString(quote(u.host, "/"))
	}
	if u.port != "" {
		b.WriteString(":" + quote(u.port, "/"))
	}
	if u.host != "" {
		b.WriteString("/")
	}
	b.WriteString(quote(u.path, urlSafePathChars))
	if u.query != "" {
		b.WriteString("?" + u.query)
	}
	if u.hasFragment {
		b.WriteString("#" + quote(u.fragment, urlSafePathChars))
	}
	return b.String()
}

// url._safechars and url._safepchars: what quote leaves as it is in a
// user name or password, and in a path or fragment, besides letters,
// digits and "_.-~".
const (
	urlSafeChars     = "!~*'()+"
	urlSafePathChars = "/!~*'()+:\\"
)

// quote is Python's urllib.parse.quote_from_bytes.
func quote(s, safe string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("_.-~", c) >= 0 || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// unquote is Python's urllib.parse.unquote_to_bytes: a "%" not followed
// by two hex digits stays as it is.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// isSchemeName is url._matchscheme's [a-zA-Z0-9+.\-]+.
func isSchemeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// hasDriveLetter is urlutil.hasdriveletter: "c:..." (any path whose
// second byte is a colon after a letter).
func hasDriveLetter(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}
