package main

import (
	"strings"

	"github.com/hgfs/hgfs/bundle2"
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
		*p = bundle2.Unquote(*p)
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
	b.WriteString(bundle2.QuoteSafe(u.user, urlSafeChars))
	if u.passwd != "" {
		b.WriteString(":" + bundle2.QuoteSafe(u.passwd, urlSafeChars))
	}
	if u.user != "" || u.passwd != "" {
		b.WriteString("@")
	}
	if strings.HasPrefix(u.host, "[") && strings.HasSuffix(u.host, "]") {
		b.WriteString(u.host)
	} else {
		b.WriteString(bundle2.QuoteSafe(u.host, "/"))
	}
	if u.port != "" {
		b.WriteString(":" + bundle2.QuoteSafe(u.port, "/"))
	}
	if u.host != "" {
		b.WriteString("/")
	}
	b.WriteString(bundle2.QuoteSafe(u.path, urlSafePathChars))
	if u.query != "" {
		b.WriteString("?" + u.query)
	}
	if u.hasFragment {
		b.WriteString("#" + bundle2.QuoteSafe(u.fragment, urlSafePathChars))
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
