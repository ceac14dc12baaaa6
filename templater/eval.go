package templater

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/revset"
)

// UnsupportedError names a part of hg's template language hgfs does
// not implement.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return e.What + " is not supported by hgfs" }

// Template is a parsed template.
type Template struct{ root *hgparse.Node }

// Env is what templates read: the repository and hg's verbosity.
type Env struct {
	Repo  *repo.Repo
	Debug bool
	depth int
	// latest caches latesttag's walk (templatekw's cache).
	latest       map[int]latestTag
	tagAncestors map[string]map[int]bool
}

// date is a changeset date: seconds and seconds west of UTC.
type date struct {
	t  int64
	tz int
}

// ctxValue is a changeset as a template value (hg's mappingdict with a
// ctx): p1 and p2, and the items of revset(). It prints as
// "{rev}:{node|formatnode}", and its members (the '.' operator, or a
// % template) are the changeset's keywords.
type ctxValue struct {
	rev   int
	debug bool
	node  revlog.Node
}

func (c ctxValue) String() string {
	if c.debug {
		return fmt.Sprintf("%d:%s", c.rev, c.node)
	}
	return fmt.Sprintf("%d:%s", c.rev, c.node.Short())
}

// ctxKey is the item key holding a changeset's revision in lists whose
// items are changesets (revset()).
const ctxKey = "\x00ctx"

// list is hg's hybrid list: items with a mapping each, printed joined
// by sep through their key.
type list struct {
	items []map[string]any
	key   string
	sep   string
}

func (l *list) String() string {
	parts := make([]string, len(l.items))
	for i, it := range l.items {
		parts[i] = stringify(it[l.key])
	}
	return strings.Join(parts, l.sep)
}

// scope is the keyword lookup for one changeset, with the mappings of
// enclosing % iterations on top.
type scope struct {
	env   *Env
	rev   int
	cs    *revlog.Changeset
	vars  map[string]any
	outer *scope
}

// Render evaluates the template for rev.
func (t *Template) Render(env *Env, rev int) ([]byte, error) {
	cs, err := env.Repo.Changeset(rev)
	if err != nil {
		return nil, err
	}
	sc := &scope{env: env, rev: rev, cs: cs}
	v, err := sc.eval(t.root)
	if err != nil {
		return nil, err
	}
	return []byte(stringify(v)), nil
}

func stringify(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case date:
		return fmt.Sprintf("%d.0%d", v.t, v.tz)
	case *list:
		return v.String()
	case ctxValue:
		return v.String()
	case []any:
		var b strings.Builder
		for _, x := range v {
			b.WriteString(stringify(x))
		}
		return b.String()
	}
	return fmt.Sprint(v)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case *list:
		return len(v.items) > 0
	case int:
		return true
	}
	return stringify(v) != ""
}

func (sc *scope) eval(n *hgparse.Node) (any, error) {
	if n == nil {
		return nil, hgparse.Errorf("missing argument")
	}
	sc.env.depth++
	defer func() { sc.env.depth-- }()
	if sc.env.depth > hgparse.MaxDepth {
		return nil, hgparse.Errorf("template nested too deeply")
	}
	switch n.Op {
	case "string":
		return n.Value, nil
	case "integer":
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return nil, hgparse.Errorf("integer out of range: %s", n.Value)
		}
		return v, nil
	case "template":
		var out []any
		for _, k := range n.Kids {
			v, err := sc.eval(k)
			if err != nil {
				return nil, err
			}
			out = append(out, stringify(v))
		}
		return strings.Join(func() []string {
			s := make([]string, len(out))
			for i, o := range out {
				s[i] = o.(string)
			}
			return s
		}(), ""), nil
	case "symbol":
		return sc.keyword(n.Value)
	case "group":
		return sc.eval(n.Kids[0])
	case "negate":
		v, err := sc.eval(n.Kids[0])
		if err != nil {
			return nil, err
		}
		i, err := toInt(v, "negation needs an integer argument")
		return -i, err
	case "+", "-", "*", "/":
		a, err := sc.eval(n.Kids[0])
		if err != nil {
			return nil, err
		}
		b, err := sc.eval(n.Kids[1])
		if err != nil {
			return nil, err
		}
		x, err := toInt(a, "arithmetic only defined on integers")
		if err != nil {
			return nil, err
		}
		y, err := toInt(b, "arithmetic only defined on integers")
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case "+":
			return x + y, nil
		case "-":
			return x - y, nil
		case "*":
			return x * y, nil
		}
		if y == 0 {
			return nil, hgparse.Errorf("division by zero")
		}
		q := x / y
		if (x%y != 0) && ((x < 0) != (y < 0)) {
			q--
		}
		return q, nil
	case "|":
		f := n.Kids[1]
		if f == nil || f.Op != "symbol" {
			return nil, hgparse.Errorf("expected a symbol, got '%s'", opName(f))
		}
		v, err := sc.eval(n.Kids[0])
		if err != nil {
			return nil, err
		}
		return sc.filter(f.Value, v)
	case "%":
		return sc.mapList(n.Kids[0], n.Kids[1])
	case "func":
		name := n.Kids[0]
		if name == nil || name.Op != "symbol" {
			return nil, hgparse.Errorf("not a function: %s", opName(name))
		}
		return sc.call(name.Value, hgparse.List(n.Kids[1]))
	case ".":
		return sc.member(n.Kids[0], n.Kids[1])
	case "keyvalue":
		return nil, hgparse.Errorf("can't use a key-value pair in this context")
	case "list":
		return nil, hgparse.Errorf("can't use a list in this context")
	}
	return nil, hgparse.Errorf("invalid operator %s", n.Op)
}

func opName(n *hgparse.Node) string {
	if n == nil {
		return "None"
	}
	return n.Op
}

func toInt(v any, msg string) (int, error) {
	switch v := v.(type) {
	case int:
		return v, nil
	case string:
		i, err := strconv.Atoi(v)
		if err == nil {
			return i, nil
		}
	}
	return 0, hgparse.Errorf("%s", msg)
}

// mapList is the % operator: the template applied to each item of the
// list with the item's keywords in scope.
func (sc *scope) mapList(ln, tn *hgparse.Node) (any, error) {
	v, err := sc.eval(ln)
	if err != nil {
		return nil, err
	}
	if c, ok := v.(ctxValue); ok {
		inner, err := sc.ctxScope(c.rev)
		if err != nil {
			return nil, err
		}
		r, err := inner.eval(tn)
		if err != nil {
			return nil, err
		}
		return stringify(r), nil
	}
	l, ok := v.(*list)
	if !ok {
		if ln != nil && ln.Op == "symbol" {
			return nil, hgparse.Errorf("keyword '%s' is not iterable", ln.Value)
		}
		return nil, hgparse.Errorf("%s is not iterable", stringify(v))
	}
	var b strings.Builder
	for _, it := range l.items {
		inner := &scope{env: sc.env, rev: sc.rev, cs: sc.cs, vars: it, outer: sc}
		if rev, ok := it[ctxKey].(int); ok {
			c, err := sc.ctxScope(rev)
			if err != nil {
				return nil, err
			}
			inner.rev, inner.cs, inner.outer = c.rev, c.cs, nil
		}
		// A template leaf that is a bare keyword maps through it.
		r, err := inner.eval(tn)
		if err != nil {
			return nil, err
		}
		b.WriteString(stringify(r))
	}
	return b.String(), nil
}

func (sc *scope) lookupVar(name string) (any, bool) {
	for s := sc; s != nil; s = s.outer {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func strList(key string, vals []string) *list {
	l := &list{key: key, sep: " "}
	for _, v := range vals {
		l.items = append(l.items, map[string]any{key: v})
	}
	return l
}

// keywords hg has that are not implemented here.
var hgKeywords = []string{
	"activebookmark", "bisect", "children", "diffstat", "file_copies_switch",
	"namespaces", "negrev",
	"obsfate", "obsolete", "instabilities", "peerurls", "predecessors", "successorssets",
	"reporoot", "termwidth", "whyunstable", "index",
}

func (sc *scope) keyword(name string) (any, error) {
	if v, ok := sc.lookupVar(name); ok {
		return v, nil
	}
	r, rev, cs := sc.env.Repo, sc.rev, sc.cs
	switch name {
	case "rev":
		return rev, nil
	case "node":
		return r.Node(rev).String(), nil
	case "author":
		return cs.User, nil
	case "desc":
		return cs.Description, nil
	case "date":
		return date{cs.Time, cs.TZ}, nil
	case "branch":
		return cs.Branch(), nil
	case "tags":
		tags, err := r.NodeTags(r.Node(rev))
		if err != nil {
			return nil, err
		}
		return strList("tag", tags), nil
	case "bookmarks":
		active, err := r.ActiveBookmark()
		if err != nil {
			return nil, err
		}
		// hg's items map the active bookmark too, as "active" and
		// its old name "current" (templatekw.showbookmarks).
		l := strList("bookmark", r.NodeBookmarks(r.Node(rev)))
		for _, it := range l.items {
			it["active"], it["current"] = active, active
		}
		return l, nil
	case "files":
		return strList("file", cs.Files), nil
	case "file_adds", "file_dels", "file_mods":
		mods, adds, dels, err := hgfmt.FileStatus(r, rev, cs.Files)
		if err != nil {
			return nil, err
		}
		// hg's items map "file" (its {file_add} inside % is empty).
		l := strList("file", mods)
		switch name {
		case "file_adds":
			l = strList("file", adds)
		case "file_dels":
			l = strList("file", dels)
		}
		return l, nil
	case "latesttag", "latesttagdistance", "changessincelatesttag":
		lt, err := sc.latestTags(rev)
		if err != nil {
			return nil, err
		}
		switch name {
		case "latesttagdistance":
			return lt.dist, nil
		case "changessincelatesttag":
			return sc.changesSince(rev, lt.tags[0])
		}
		l := &list{key: "latesttag", sep: ":"}
		for _, t := range lt.tags {
			n, err := sc.changesSince(rev, t)
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, map[string]any{"latesttag": t, "tag": t, "distance": lt.dist, "changes": n})
		}
		return l, nil
	case "p1", "p2":
		p1, p2 := r.Parents(rev)
		p := p1
		if name == "p2" {
			p = p2
		}
		return ctxValue{rev: p, node: r.Node(p), debug: sc.env.Debug}, nil
	case "p1rev", "p2rev", "p1node", "p2node":
		p1, p2 := r.Parents(rev)
		p := p1
		if name[1] == '2' {
			p = p2
		}
		if strings.HasSuffix(name, "rev") {
			return p, nil
		}
		return r.Node(p).String(), nil
	case "parents":
		p1, p2 := r.Parents(rev)
		var ps []int
		switch {
		case p2 != revlog.NullRev:
			ps = []int{p1, p2}
		case p1 < rev-1 || sc.env.Debug:
			ps = []int{p1}
		}
		l := &list{key: "parent", sep: ""}
		for _, p := range ps {
			l.items = append(l.items, map[string]any{
				"rev": p, "node": r.Node(p).String(), "phase": phaseOf(r, p),
				"parent": fmt.Sprintf("%d:%s ", p, r.Node(p).Short()),
			})
		}
		return l, nil
	case "phase":
		return phaseOf(r, rev), nil
	case "phaseidx":
		return int(r.Phase(rev)), nil
	case "manifest":
		mrev, err := r.ManifestRev(cs)
		if err != nil {
			return nil, err
		}
		if sc.env.Debug {
			return fmt.Sprintf("%d:%s", mrev, cs.Manifest), nil
		}
		return fmt.Sprintf("%d:%s", mrev, cs.Manifest.Short()), nil
	case "graphnode":
		return string(hgfmt.Symbol(r, rev, cs)), nil
	case "extras":
		l := &list{key: "extra", sep: ""}
		for _, e := range hgfmt.Extras(cs, rev) {
			l.items = append(l.items, map[string]any{"key": e[0], "value": e[1], "extra": e[0] + "=" + hgfmt.StringEscape(e[1])})
		}
		return l, nil
	case "file_copies":
		copies, err := fileCopies(r, rev, cs)
		if err != nil {
			return nil, err
		}
		l := &list{key: "file_copy", sep: ""}
		for _, c := range copies {
			l.items = append(l.items, map[string]any{"name": c[0], "path": c[0], "source": c[1], "file_copy": c[0] + " (" + c[1] + ")"})
		}
		return l, nil
	case "branches":
		if b := cs.Branch(); b != "default" {
			return strList("branch", []string{b}), nil
		}
		return strList("branch", nil), nil
	}
	for _, k := range hgKeywords {
		if k == name {
			return nil, &UnsupportedError{"the template keyword '" + name + "'"}
		}
	}
	// hg prints an unknown keyword as nothing.
	return "", nil
}

func phaseOf(r *repo.Repo, rev int) string {
	if rev < 0 {
		return "public"
	}
	return r.Phase(rev).String()
}

// dateStr formats d in its own zone with a Go layout, then the
// offset: "+0530" (colon false) or "+05:30".
func dateStr(d date, layout string, zone, colon bool) string {
	t := time.Unix(d.t-int64(d.tz), 0).UTC()
	s := t.Format(layout)
	if !zone {
		return s
	}
	sign := byte('+')
	if d.tz > 0 {
		sign = '-'
	}
	m := d.tz / 60
	if m < 0 {
		m = -m
	}
	if colon {
		return s + fmt.Sprintf("%c%02d:%02d", sign, m/60, m%60)
	}
	return s + fmt.Sprintf("%c%02d%02d", sign, m/60, m%60)
}

func asDate(v any, filter string) (date, error) {
	if d, ok := v.(date); ok {
		return d, nil
	}
	return date{}, hgparse.Errorf("template filter '%s' is not compatible with keyword '%s'", filter, stringify(v))
}

func person(a string) string {
	if !strings.Contains(a, "@") {
		return a
	}
	if f := strings.Index(a, "<"); f >= 0 {
		return strings.ReplaceAll(strings.Trim(a[:f], ` "`), `\"`, `"`)
	}
	return strings.ReplaceAll(a[:strings.Index(a, "@")], ".", " ")
}

func email(a string) string {
	r := strings.Index(a, ">")
	l := strings.Index(a, "<") + 1
	if r < 0 {
		return a[l:]
	}
	if r < l {
		return ""
	}
	return a[l:r]
}

func shortUser(u string) string {
	if f := strings.Index(u, "@"); f >= 0 {
		u = u[:f]
	}
	if f := strings.Index(u, "<"); f >= 0 {
		u = u[f+1:]
	}
	if f := strings.Index(u, " "); f >= 0 {
		u = u[:f]
	}
	if f := strings.Index(u, "."); f >= 0 {
		u = u[:f]
	}
	return u
}

// JSON is templatefilters.json for strings.
func JSON(s string, paranoid bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// encoding.toutf8b: an invalid byte is U+DC00+byte,
				// escaped when paranoid, else its UTF-8 bytes.
				if paranoid {
					fmt.Fprintf(&b, `\udc%02x`, c)
				} else {
					v := 0xdc00 + int(c)
					b.Write([]byte{byte(0xe0 | v>>12), byte(0x80 | (v>>6)&0x3f), byte(0x80 | v&0x3f)})
				}
				i++
				continue
			}
			if paranoid {
				if r >= 0x10000 {
					r -= 0x10000
					fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch {
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == 8:
			b.WriteString(`\b`)
		case c == 12:
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, c)
		case paranoid && c == '<':
			b.WriteString(`\u003c`)
		case paranoid && c == '>':
			b.WriteString(`\u003e`)
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}

func jsonValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		if v {
			return "true"
		}
		return "false"
	case int:
		return strconv.Itoa(v)
	case string:
		return JSON(v, true)
	case date:
		return fmt.Sprintf("[%d, %d]", v.t, v.tz)
	case *list:
		parts := make([]string, len(v.items))
		for i, it := range v.items {
			switch v.key {
			case "parent":
				parts[i] = jsonValue(it["rev"])
			case "extra":
				parts[i] = JSON(it["key"].(string), true) + ": " + jsonValue(it["value"])
			case "file_copy":
				parts[i] = JSON(it["name"].(string), true) + ": " + jsonValue(it["source"])
			default:
				parts[i] = jsonValue(it[v.key])
			}
		}
		if v.key == "extra" || v.key == "file_copy" {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return JSON(stringify(v), true)
}

var hgFilters = []string{
	"cbor", "commondir", "fill68", "fill76", "hex", "obfuscate", "permissions",
	"revescape", "shortbisect", "splitlines", "urlescape", "utf8", "localdate",
}

func (sc *scope) filter(name string, v any) (any, error) {
	s := func() string { return stringify(v) }
	switch name {
	case "short":
		x := s()
		return x[:min(12, len(x))], nil
	case "firstline":
		return hgfmt.FirstLine(s()), nil
	case "strip":
		return strings.Trim(s(), " \t\n\r\v\f"), nil
	case "lower":
		return strings.ToLower(s()), nil
	case "upper":
		return strings.ToUpper(s()), nil
	case "user":
		return shortUser(s()), nil
	case "person":
		return person(s()), nil
	case "email":
		return email(s()), nil
	case "domain":
		a := s()
		f := strings.Index(a, "@")
		if f < 0 {
			return "", nil
		}
		a = a[f+1:]
		if g := strings.Index(a, ">"); g >= 0 {
			a = a[:g]
		}
		return a, nil
	case "json":
		return jsonValue(v), nil
	case "nonempty":
		if x := s(); x != "" {
			return x, nil
		}
		return "(none)", nil
	case "escape", "xmlescape":
		x := s()
		if name == "escape" {
			x = strings.ReplaceAll(x, "\x00", "")
		}
		x = strings.ReplaceAll(x, "&", "&amp;")
		x = strings.ReplaceAll(x, "<", "&lt;")
		x = strings.ReplaceAll(x, ">", "&gt;")
		if name == "escape" {
			x = strings.ReplaceAll(x, `"`, "&quot;")
		} else {
			x = strings.ReplaceAll(x, `"`, "&quot;")
			x = strings.ReplaceAll(x, "'", "&#39;")
		}
		return x, nil
	case "addbreaks":
		return strings.ReplaceAll(s(), "\n", "<br/>\n"), nil
	case "emailuser":
		u := s()
		if f := strings.Index(u, "@"); f >= 0 {
			u = u[:f]
		}
		if f := strings.Index(u, "<"); f >= 0 {
			u = u[f+1:]
		}
		return u, nil
	case "count":
		if l, ok := v.(*list); ok {
			return len(l.items), nil
		}
		if x, ok := v.(string); ok {
			return utf8.RuneCountInString(x), nil
		}
		return nil, hgparse.Errorf("not countable")
	case "stringify":
		return s(), nil
	case "tabindent":
		return indent(s(), "\t", ""), nil
	case "stringescape":
		return hgfmt.StringEscape(s()), nil
	case "basename":
		x := s()
		return x[strings.LastIndex(x, "/")+1:], nil
	case "dirname":
		x := s()
		if i := strings.LastIndex(x, "/"); i >= 0 {
			return x[:i], nil
		}
		return "", nil
	case "age":
		d, err := asDate(v, name)
		if err != nil {
			return nil, err
		}
		return age(d, time.Now().Unix()), nil
	case "isodate", "isodatesec", "rfc822date", "rfc3339date", "shortdate", "date", "hgdate":
		d, err := asDate(v, name)
		if err != nil {
			return nil, err
		}
		switch name {
		case "isodate":
			return dateStr(d, "2006-01-02 15:04 ", true, false), nil
		case "isodatesec":
			return dateStr(d, "2006-01-02 15:04:05 ", true, false), nil
		case "rfc822date":
			return dateStr(d, "Mon, 02 Jan 2006 15:04:05 ", true, false), nil
		case "rfc3339date":
			return dateStr(d, "2006-01-02T15:04:05", true, true), nil
		case "shortdate":
			return dateStr(d, "2006-01-02", false, false), nil
		case "hgdate":
			return fmt.Sprintf("%d %d", d.t, d.tz), nil
		}
		return hgfmt.Date(d.t, d.tz), nil
	}
	for _, f := range hgFilters {
		if f == name {
			return nil, &UnsupportedError{"the template filter '" + name + "'"}
		}
	}
	return nil, hgparse.Errorf("unknown function '%s'", name)
}

// age is templatefilters.age: how long before (or after) now d is, in
// the largest unit that counts at least two (seconds always), or the
// short date beyond two years.
func age(d date, now int64) string {
	scales := []struct {
		name string
		secs int64
	}{{"year", 3600 * 24 * 365}, {"month", 3600 * 24 * 30}, {"week", 3600 * 24 * 7}, {"day", 3600 * 24}, {"hour", 3600}, {"minute", 60}, {"second", 1}}
	future := d.t > now
	var delta int64
	if future {
		delta = max(1, d.t-now)
		if delta > scales[0].secs*30 {
			return "in the distant future"
		}
	} else {
		delta = max(1, now-d.t)
		if delta > scales[0].secs*2 {
			return dateStr(d, "2006-01-02", false, false)
		}
	}
	for _, sc := range scales {
		n := delta / sc.secs
		if n >= 2 || sc.secs == 1 {
			unit := sc.name
			if n != 1 {
				unit += "s"
			}
			if future {
				return fmt.Sprintf("%d %s from now", n, unit)
			}
			return fmt.Sprintf("%d %s ago", n, unit)
		}
	}
	return ""
}

var hgFuncs = []string{
	"dict", "diff", "extdata", "files", "fill", "filter", "formatnode", "mailmap", "max", "min",
	"obsfateoperations", "obsfatedate", "obsfateusers", "obsfateverb", "relpath",
	"search", "status", "strip", "localdate", "latesttag",
}

func (sc *scope) args(args []*hgparse.Node) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		v, err := sc.eval(a)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (sc *scope) call(name string, args []*hgparse.Node) (any, error) {
	switch name {
	case "if":
		if len(args) < 2 || len(args) > 3 {
			return nil, hgparse.Errorf("if expects two or three arguments")
		}
		c, err := sc.eval(args[0])
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return sc.eval(args[1])
		}
		if len(args) == 3 {
			return sc.eval(args[2])
		}
		return "", nil
	case "ifeq":
		if len(args) < 3 || len(args) > 4 {
			return nil, hgparse.Errorf("ifeq expects three or four arguments")
		}
		v, err := sc.args(args[:2])
		if err != nil {
			return nil, err
		}
		if stringify(v[0]) == stringify(v[1]) {
			return sc.eval(args[2])
		}
		if len(args) == 4 {
			return sc.eval(args[3])
		}
		return "", nil
	case "ifcontains":
		if len(args) < 3 || len(args) > 4 {
			return nil, hgparse.Errorf("ifcontains expects three or four arguments")
		}
		v, err := sc.args(args[:2])
		if err != nil {
			return nil, err
		}
		needle, found := stringify(v[0]), false
		if l, ok := v[1].(*list); ok {
			for _, it := range l.items {
				if stringify(it[l.key]) == needle {
					found = true
				}
			}
		} else {
			found = strings.Contains(stringify(v[1]), needle)
		}
		if found {
			return sc.eval(args[2])
		}
		if len(args) == 4 {
			return sc.eval(args[3])
		}
		return "", nil
	case "join":
		if len(args) < 1 || len(args) > 2 {
			return nil, hgparse.Errorf("join expects one or two arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		sep := " "
		if len(v) == 2 {
			sep = stringify(v[1])
		}
		l, ok := v[0].(*list)
		if !ok {
			return stringify(v[0]), nil
		}
		parts := make([]string, len(l.items))
		for i, it := range l.items {
			parts[i] = stringify(it[l.key])
		}
		return strings.Join(parts, sep), nil
	case "label":
		if len(args) != 2 {
			return nil, hgparse.Errorf("label expects two arguments")
		}
		return sc.eval(args[1])
	case "separate":
		if len(args) < 1 {
			return nil, hgparse.Errorf("separate expects at least one argument")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		var parts []string
		for _, x := range v[1:] {
			if t := stringify(x); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, stringify(v[0])), nil
	case "pad":
		const maxPad = 64 << 20
		if len(args) < 2 || len(args) > 4 {
			return nil, hgparse.Errorf("pad() expects two to four arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		text := stringify(v[0])
		width, err := toInt(v[1], "pad() expects an integer width")
		if err != nil {
			return nil, err
		}
		fill, left := " ", false
		if len(v) > 2 {
			fill = stringify(v[2])
		}
		if len(v) > 3 {
			if left, err = sc.evalBool(args[3]); err != nil {
				return nil, err
			}
		}
		n := utf8.RuneCountInString(text)
		if n >= width || fill == "" {
			return text, nil
		}
		// The width is the template's to give, and a template is
		// untrusted: hg, asked for more than memory holds, aborts "out
		// of memory"; hgfs says so before allocating.
		if width-n > maxPad/len(fill) {
			return nil, hgparse.Errorf("pad() width %d is too large (at most %d bytes of padding)", width, maxPad)
		}
		p := strings.Repeat(fill, width-n)
		if left {
			return p + text, nil
		}
		return text + p, nil
	case "startswith":
		if len(args) != 2 {
			return nil, hgparse.Errorf("startswith expects two arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(stringify(v[1]), stringify(v[0])) {
			return stringify(v[1]), nil
		}
		return "", nil
	case "indent":
		if len(args) < 2 || len(args) > 3 {
			return nil, hgparse.Errorf("indent() expects two or three arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		first := stringify(v[1])
		if len(v) == 3 {
			first = stringify(v[2])
		}
		return indent(stringify(v[0]), stringify(v[1]), first), nil
	case "date":
		if len(args) < 1 || len(args) > 2 {
			return nil, hgparse.Errorf("date expects one or two arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		d, err := asDate(v[0], "date")
		if err != nil {
			return nil, hgparse.Errorf("date expects a date information")
		}
		if len(v) == 2 {
			return nil, &UnsupportedError{"date() with a format"}
		}
		return hgfmt.Date(d.t, d.tz), nil
	case "get":
		if len(args) != 2 {
			return nil, hgparse.Errorf("get() expects two arguments")
		}
		d, err := sc.eval(args[0])
		if err != nil {
			return nil, err
		}
		key, err := sc.eval(args[1])
		if err != nil {
			return nil, err
		}
		v, err := sc.getMember(d, stringify(key))
		if pe, ok := err.(*hgparse.ParseError); ok && pe.Hint == "" {
			pe.Hint = "get() expects a dict as first argument"
		}
		return v, err
	case "word":
		if len(args) < 2 || len(args) > 3 {
			return nil, hgparse.Errorf("word expects two or three arguments, got %d", len(args))
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		num, err := toInt(v[0], "word expects an integer index")
		if err != nil {
			return nil, err
		}
		var tokens []string
		if len(v) == 3 {
			sep := stringify(v[2])
			if sep == "" {
				return nil, hgparse.Errorf("word expects a non-empty separator")
			}
			tokens = strings.Split(stringify(v[1]), sep)
		} else {
			// bytes.split(None): runs of ASCII whitespace.
			tokens = strings.FieldsFunc(stringify(v[1]), func(r rune) bool {
				return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
			})
		}
		if num >= len(tokens) || num < -len(tokens) {
			return "", nil
		}
		if num < 0 {
			num += len(tokens)
		}
		return tokens[num], nil
	case "sub":
		if len(args) != 3 {
			return nil, hgparse.Errorf("sub expects three arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		return pySub(stringify(v[0]), stringify(v[1]), stringify(v[2]))
	case "revset":
		if len(args) < 1 {
			return nil, hgparse.Errorf("revset expects one or more arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		q, err := formatSpec(stringify(v[0]), v[1:])
		if err != nil {
			return nil, err
		}
		revs, err := revset.New(sc.env.Repo, revset.Options{}).Revs([]string{q})
		if err != nil {
			return nil, err
		}
		l := &list{key: "revision", sep: " "}
		for _, r := range revs {
			l.items = append(l.items, map[string]any{"revision": r, ctxKey: r})
		}
		return l, nil
	case "shortest":
		if len(args) < 1 || len(args) > 2 {
			return nil, hgparse.Errorf("shortest() expects one or two arguments")
		}
		v, err := sc.args(args)
		if err != nil {
			return nil, err
		}
		minlen := 4
		if len(v) == 2 {
			if minlen, err = toInt(v[1], "shortest() expects an integer minlength"); err != nil {
				return nil, err
			}
		}
		return shortest(sc.env.Repo, stringify(v[0]), minlen), nil
	}
	if f := sc.filterFunc(name); f {
		if len(args) != 1 {
			return nil, hgparse.Errorf("filter %s expects one argument", name)
		}
		v, err := sc.eval(args[0])
		if err != nil {
			return nil, err
		}
		return sc.filter(name, v)
	}
	for _, f := range hgFuncs {
		if f == name {
			return nil, &UnsupportedError{"the template function " + name + "()"}
		}
	}
	return nil, hgparse.Errorf("unknown function '%s'", name)
}

// evalBool is templateutil.evalboolean: a bare symbol that is not a
// keyword reads as a boolean word (True, no, ...).
func (sc *scope) evalBool(n *hgparse.Node) (bool, error) {
	if n != nil && n.Op == "symbol" {
		if _, ok := sc.lookupVar(n.Value); !ok && !isKeyword(n.Value) {
			switch strings.ToLower(n.Value) {
			case "1", "yes", "true", "on", "always":
				return true, nil
			case "0", "no", "false", "off", "never":
				return false, nil
			}
		}
	}
	v, err := sc.eval(n)
	if err != nil {
		return false, err
	}
	return truthy(v), nil
}

func isKeyword(name string) bool {
	switch name {
	case "rev", "node", "author", "desc", "date", "branch", "tags", "bookmarks", "files", "file_adds",
		"file_dels", "file_mods", "p1rev", "p2rev", "p1node", "p2node", "parents", "phase", "phaseidx",
		"manifest", "graphnode", "extras", "branches", "file_copies", "p1", "p2",
		"latesttag", "latesttagdistance", "changessincelatesttag":
		return true
	}
	return false
}

func (sc *scope) filterFunc(name string) bool {
	switch name {
	case "short", "firstline", "lower", "upper", "user", "person", "email", "domain", "json",
		"nonempty", "escape", "xmlescape", "addbreaks", "stringescape", "basename", "dirname",
		"emailuser", "count", "stringify", "tabindent",
		"isodate", "isodatesec", "rfc822date", "rfc3339date", "shortdate", "hgdate", "age":
		return true
	}
	return false
}

func indent(text, prefix, first string) string {
	lines := revlog.SplitLines([]byte(text))
	endsNL := strings.HasSuffix(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if strings.TrimSpace(string(l)) != "" {
			if i > 0 {
				b.WriteString(prefix)
			} else {
				b.WriteString(first)
			}
		}
		b.Write(l)
		if i < len(lines)-1 || endsNL {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// shortest is scmutil.shortesthexnodeidprefix for a full node: the
// shortest unique prefix of at least minlen digits, lengthened while it
// reads as a revision number.
func shortest(r *repo.Repo, hexnode string, minlen int) string {
	if len(hexnode) != 40 {
		return hexnode
	}
	if _, err := revlog.ParseNode(hexnode); err != nil {
		return hexnode
	}
	n := r.Changelog().Len()
	isRev := func(p string) bool {
		i, err := strconv.Atoi(p)
		if err != nil || p != "0" && p[0] == '0' || i >= n {
			return false
		}
		return true
	}
	for l := max(minlen, 1); l <= 40; l++ {
		p := hexnode[:l]
		if _, err := r.Changelog().LookupPrefix(p); err != nil {
			continue
		}
		for ; l <= 40 && isRev(hexnode[:l]); l++ {
		}
		return hexnode[:min(l, 40)]
	}
	return hexnode
}
