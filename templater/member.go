package templater

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/revlog"
)

// ctxScope is the scope of another changeset (a ctxValue's, or a
// revset() item's).
func (sc *scope) ctxScope(rev int) (*scope, error) {
	inner := &scope{env: sc.env, rev: rev}
	if rev >= 0 {
		cs, err := sc.env.Repo.Changeset(rev)
		if err != nil {
			return nil, err
		}
		inner.cs = cs
	} else {
		inner.cs = nullChangeset()
	}
	return inner, nil
}

// member is the '.' operator (templateutil's getmember): a changeset's
// keyword, a dictionary's value, a date's unixtime or tzoffset.
func (sc *scope) member(left, right *hgparse.Node) (any, error) {
	if right == nil || right.Op != "symbol" {
		return nil, hgparse.Errorf("expected a symbol, got '%s'", opName(right))
	}
	v, err := sc.eval(left)
	if err != nil {
		return nil, err
	}
	m, err := sc.getMember(v, right.Value)
	if pe, ok := err.(*hgparse.ParseError); ok && pe.Hint == "" && left != nil && left.Op == "symbol" {
		pe.Hint = "keyword '" + left.Value + "' does not support member operation"
	}
	return m, err
}

// getMember is getmember of hg's wrapped values.
func (sc *scope) getMember(v any, key string) (any, error) {
	switch v := v.(type) {
	case ctxValue:
		inner, err := sc.ctxScope(v.rev)
		if err != nil {
			return nil, err
		}
		return inner.keyword(key)
	case *list:
		// A dictionary: items with a "key" (extras).
		for _, it := range v.items {
			k, ok := it["key"]
			if !ok {
				return nil, hgparse.Errorf("%s is not a dictionary", pyRepr(v))
			}
			if stringify(k) == key {
				return it["value"], nil
			}
		}
		if len(v.items) > 0 {
			return nil, nil
		}
		return nil, nil
	case date:
		switch key {
		case "unixtime":
			return v.t, nil
		case "tzoffset":
			return v.tz, nil
		}
		return nil, hgparse.Errorf("invalid member '%s'", key)
	}
	return nil, hgparse.Errorf("%s is not a dictionary", pyRepr(v))
}

// pyRepr is how hg's messages show a value (pycompat.byterepr without
// its b prefix).
func pyRepr(v any) string {
	switch v := v.(type) {
	case int, int64:
		return stringify(v)
	case *list:
		return "[" + v.String() + "]"
	}
	s := stringify(v)
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		return "\"" + s + "\""
	}
	return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
}

// pySub is re.sub(pattern, repl, src) as hg's sub() runs it: Python's
// replacement syntax (\1, \g<1>, \g<name>, \n...) over Go's regexp.
func pySub(pat, repl, src string) (any, error) {
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, hgparse.Errorf("sub got an invalid pattern: %s", pat)
	}
	names := re.SubexpNames()
	type piece struct {
		lit   string
		group int // -1: a literal
	}
	var pieces []piece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			pieces = append(pieces, piece{lit.String(), -1})
			lit.Reset()
		}
	}
	bad := func() (any, error) { return nil, hgparse.Errorf("sub got an invalid replacement: %s", repl) }
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		i++
		if i >= len(repl) {
			return bad()
		}
		c = repl[i]
		switch {
		case c >= '0' && c <= '9':
			j := i
			for j < len(repl) && j < i+2 && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(repl[i:j])
			if n > re.NumSubexp() {
				return bad()
			}
			flush()
			pieces = append(pieces, piece{group: n})
			i = j - 1
		case c == 'g':
			end := strings.IndexByte(repl[i:], '>')
			if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
				return bad()
			}
			name := repl[i+2 : i+end]
			n, err := strconv.Atoi(name)
			if err != nil {
				n = -1
				for k, nm := range names {
					if nm == name && name != "" {
						n = k
					}
				}
			}
			if n < 0 || n > re.NumSubexp() {
				return bad()
			}
			flush()
			pieces = append(pieces, piece{group: n})
			i += end
		default:
			esc := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v", '\\': "\\"}
			if e, ok := esc[c]; ok {
				lit.WriteString(e)
			} else if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
				return bad()
			} else {
				lit.WriteByte('\\')
				lit.WriteByte(c)
			}
		}
	}
	flush()
	var out strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
		out.WriteString(src[last:m[0]])
		for _, p := range pieces {
			if p.group < 0 {
				out.WriteString(p.lit)
			} else if m[2*p.group] >= 0 {
				out.WriteString(src[m[2*p.group]:m[2*p.group+1]])
			}
		}
		last = m[1]
	}
	out.WriteString(src[last:])
	return out.String(), nil
}

// formatSpec is revsetlang.formatspec for the conversions revset()
// templates use: %d, %s, %r, %n and %%.
func formatSpec(q string, args []any) (string, error) {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] != '%' {
			b.WriteByte(q[i])
			continue
		}
		i++
		if i >= len(q) {
			return "", hgparse.Errorf("incomplete revspec format character")
		}
		if q[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if len(args) == 0 {
			return "", hgparse.Errorf("missing argument for revspec")
		}
		a := args[0]
		args = args[1:]
		switch q[i] {
		case 'd':
			n, err := toInt(a, "invalid argument for revspec")
			if err != nil {
				return "", err
			}
			b.WriteString("rev(" + strconv.Itoa(n) + ")")
		case 's':
			b.WriteString("'" + escapeStr(stringify(a)) + "'")
		case 'r':
			b.WriteString("(" + stringify(a) + ")")
		case 'n':
			b.WriteString("'" + stringify(a) + "'")
		default:
			return "", &UnsupportedError{"revset() with %" + string(q[i])}
		}
	}
	if len(args) > 0 {
		return "", hgparse.Errorf("too many revspec arguments specified")
	}
	return b.String(), nil
}

// escapeStr is stringutil.escapestr for revset quoting.
func escapeStr(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString("\\\\")
		case c == '\'':
			b.WriteString("\\'")
		case c == '\n':
			b.WriteString("\\n")
		case c == '\t':
			b.WriteString("\\t")
		case c == '\r':
			b.WriteString("\\r")
		case c < 0x20 || c >= 0x7f:
			b.WriteString("\\x" + strconv.FormatInt(int64(c)|0x100, 16)[1:])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// nullChangeset is the null revision's changeset (hg's nullrev context:
// no user, description or files, date 0 0, branch default).
func nullChangeset() *revlog.Changeset { return &revlog.Changeset{} }
