package revset

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/revlog"
)

// FileMatcher matches repository paths against hg file patterns
// (mercurial/match.py) as file() and log's FILE arguments do: "glob:"
// (the default), "relglob:", "path:", "relpath:", "rootglob:" and
// "re:"; a path also matches everything under it, a glob only what it
// names (patternmatcher's glob suffix "$"). cwd is the working directory
// relative to the root.
func FileMatcher(pats []string, cwd string) (func(string) bool, error) {
	return fileMatcher(pats, cwd, "glob", "$")
}

// PathMatcher is FileMatcher with "relpath:" as the default kind, as
// command-line FILE arguments are read.
func PathMatcher(pats []string, cwd string) (func(string) bool, error) {
	return fileMatcher(pats, cwd, "relpath", "$")
}

// fileMatcher builds the matcher; globSuffix ends glob patterns: "$"
// for patterns, "(?:/|$)" for -I/-X (includematcher), where a glob
// also matches everything under what it names.
func fileMatcher(pats []string, cwd, def, globSuffix string) (func(string) bool, error) {
	var res []string
	for _, p := range pats {
		kind, pat := def, p
		if i := strings.Index(p, ":"); i > 0 {
			switch k := p[:i]; k {
			case "re", "glob", "path", "relglob", "relpath", "rootglob", "relre", "rootfilesin", "listfile", "listfile0", "set", "include", "subinclude", "filepath":
				kind, pat = k, p[i+1:]
			}
		}
		var re string
		switch kind {
		case "glob", "relpath", "path", "rootglob":
			base := pat
			if kind != "path" && kind != "rootglob" {
				base = path.Join(cwd, pat)
			}
			c, err := canon(base)
			if err != nil {
				return nil, err
			}
			switch kind {
			case "glob":
				re = globRe(c) + globSuffix
			case "rootglob":
				re = globRe(c) + "$"
			default:
				re = regexp.QuoteMeta(c) + "(?:/|$)"
			}
			if c == "" {
				re = ""
			}
		case "relglob":
			re = "(?:|.*/)" + globRe(pat) + globSuffix
		case "re":
			re = pat
		default:
			return nil, &UnsupportedError{"the file pattern kind '" + kind + ":'"}
		}
		res = append(res, "(?:"+re+")")
	}
	if len(res) == 0 {
		return func(string) bool { return true }, nil
	}
	rx, err := regexp.Compile("^(?:" + strings.Join(res, "|") + ")")
	if err != nil {
		return nil, hgparse.Errorf("invalid pattern: %v", err)
	}
	return rx.MatchString, nil
}

// canon is pathutil.canonpath for a path already joined to the cwd.
func canon(p string) (string, error) {
	c := path.Clean("/" + p)
	if strings.HasPrefix(p, "/") || strings.HasPrefix(path.Clean(p), "..") {
		return "", &LookupError{p + " not under root"}
	}
	c = strings.TrimPrefix(c, "/")
	if c == "." {
		c = ""
	}
	return c, nil
}

// globRe is match._globre.
func globRe(pat string) string {
	var b strings.Builder
	i, n := 0, len(pat)
	group := 0
	for i < n {
		c := pat[i]
		i++
		switch {
		case c == '*':
			if i < n && pat[i] == '*' {
				i++
				if i < n && pat[i] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := i
			if j < n && (pat[j] == '!' || pat[j] == ']') {
				j++
			}
			for j < n && pat[j] != ']' {
				j++
			}
			if j >= n {
				b.WriteString(`\[`)
			} else {
				stuff := strings.ReplaceAll(pat[i:j], `\`, `\\`)
				i = j + 1
				if stuff[0] == '!' {
					stuff = "^" + stuff[1:]
				} else if stuff[0] == '^' {
					stuff = `\` + stuff
				}
				b.WriteString("[" + stuff + "]")
			}
		case c == '{':
			group++
			b.WriteString("(?:")
		case c == '}' && group > 0:
			b.WriteString(")")
			group--
		case c == ',' && group > 0:
			b.WriteString("|")
		case c == '\\':
			if i < n {
				b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
				i++
			} else {
				b.WriteString(`\\`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// fDate is revset.date with dateutil.matchdate's forms: DATE, <DATE,
// >DATE, DATE to DATE and -DAYS, for ISO-style dates (2006-02-01,
// with an optional time, 2006-02, 2006) and "UNIXTIME OFFSET".
func fDate(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	ds, err := getString(x, "date requires a string")
	if err != nil {
		return nil, err
	}
	m, err := MatchDate(ds, time.Now())
	if err != nil {
		return nil, err
	}
	return ev.matchField(subset, func(c *revlog.Changeset) []string { return []string{strconv.FormatInt(c.Time, 10)} },
		func(s string) bool { t, _ := strconv.ParseInt(s, 10, 64); return m(t) })
}

// MatchDate is dateutil.matchdate for the forms fDate documents.
func MatchDate(spec string, now time.Time) (func(int64) bool, error) {
	d := strings.TrimSpace(spec)
	switch {
	case d == "":
		return nil, &LookupError{"dates cannot consist entirely of whitespace"}
	case d[0] == '<':
		if d[1:] == "" {
			return nil, &LookupError{"invalid day spec, use '<DATE'"}
		}
		w, err := dateBound(d[1:], true)
		return func(t int64) bool { return t <= w }, err
	case d[0] == '>':
		if d[1:] == "" {
			return nil, &LookupError{"invalid day spec, use '>DATE'"}
		}
		w, err := dateBound(d[1:], false)
		return func(t int64) bool { return t >= w }, err
	case d[0] == '-':
		days, err := strconv.Atoi(d[1:])
		if err != nil {
			return nil, &LookupError{"invalid day spec: " + d[1:]}
		}
		if days < 0 {
			return nil, &LookupError{d[1:] + " must be nonnegative (see 'hg help dates')"}
		}
		w := now.Unix() - int64(days)*86400
		return func(t int64) bool { return t >= w }, nil
	}
	a, b := d, d
	if i := strings.Index(d, " to "); i >= 0 {
		a, b = d[:i], d[i+4:]
	}
	lo, err := dateBound(a, false)
	if err != nil {
		return nil, err
	}
	hi, err := dateBound(b, true)
	if err != nil {
		return nil, err
	}
	return func(t int64) bool { return t >= lo && t <= hi }, nil
}

// The date patterns are compiled on first use: every command links this
// package, and compiling them at start-up cost each a tenth of a
// millisecond.
var isoDate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?)?)?(?:\s*([+-]\d{4}|UTC|GMT|Z))?$`)
})

// otherDate is what may be one of hg's other date formats (month and day
// names, US dates, times of day): refused as unsupported rather than
// called invalid.
var otherDate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun|now|today|yesterday`)
})

var unixDate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?\d+) (-?\d+)$`) })

// dateBound parses a date as the earliest (upper false) or latest
// second it names, in local time unless an offset is given.
func dateBound(s string, upper bool) (int64, error) {
	s = strings.TrimSpace(s)
	if m := unixDate().FindStringSubmatch(s); m != nil {
		t, _ := strconv.ParseInt(m[1], 10, 64)
		return t, nil
	}
	m := isoDate().FindStringSubmatch(s)
	if m == nil {
		if !otherDate().MatchString(s) {
			return 0, hgparse.Errorf("invalid date: '%s'", s)
		}
		return 0, &UnsupportedError{"the date format of '" + s + "'"}
	}
	num := func(i, lo, hi int) int {
		if m[i] == "" {
			if upper {
				return hi
			}
			return lo
		}
		v, _ := strconv.Atoi(m[i])
		return v
	}
	y, mo := num(1, 0, 0), num(2, 1, 12)
	hh, mm, ss := num(4, 0, 23), num(5, 0, 59), num(6, 0, 59)
	loc := time.Local
	switch z := m[7]; {
	case z == "UTC" || z == "GMT" || z == "Z":
		loc = time.UTC
	case z != "":
		h, _ := strconv.Atoi(z[1:3])
		mi, _ := strconv.Atoi(z[3:5])
		off := h*3600 + mi*60
		if z[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	if mo < 1 || mo > 12 || hh > 23 || mm > 59 || ss > 61 {
		return 0, &LookupError{"invalid date: '" + s + "'"}
	}
	day := num(3, 1, 0)
	if m[3] == "" && upper {
		// The last day of the month: 31, 30, 29 or 28, as hg tries them.
		day = time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	}
	t := time.Date(y, time.Month(mo), day, hh, mm, ss, 0, loc)
	if t.Day() != day {
		return 0, &LookupError{"invalid date: '" + s + "'"}
	}
	return t.Unix(), nil
}

// IncludeMatcher matches what hg's -I or -X patterns name: glob
// patterns by default, relative to cwd (match.match's include).
func IncludeMatcher(pats []string, cwd string) (func(string) bool, error) {
	return fileMatcher(pats, cwd, "glob", "(?:/|$)")
}
