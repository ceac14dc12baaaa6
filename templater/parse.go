// Package templater is Mercurial's template language
// (mercurial/templater.py, templatekw.py, templatefilters.py,
// templatefuncs.py) for `hgfs log -T`: literal text with {expressions},
// the changeset keywords, filters (|), functions, the % operator over
// lists, and string escapes, printing what hg prints.
//
// Keywords, filters and functions hg has and this package does not are
// refused by name (an *UnsupportedError) rather than printed empty.
// Templates are untrusted input: parsing goes through internal/hgparse
// with bounded nesting.
package templater

import (
	"strings"

	"github.com/hgfs/hgfs/internal/hgparse"
)

var elements = map[string]hgparse.Element{
	"(":        {Bind: 20, Prefix: &hgparse.Action{Op: "group", Bind: 1, End: ")"}, Infix: &hgparse.Action{Op: "func", Bind: 1, End: ")"}},
	".":        {Bind: 18, Infix: &hgparse.Action{Op: ".", Bind: 18}},
	"%":        {Bind: 15, Infix: &hgparse.Action{Op: "%", Bind: 15}},
	"|":        {Bind: 15, Infix: &hgparse.Action{Op: "|", Bind: 15}},
	"*":        {Bind: 5, Infix: &hgparse.Action{Op: "*", Bind: 5}},
	"/":        {Bind: 5, Infix: &hgparse.Action{Op: "/", Bind: 5}},
	"+":        {Bind: 4, Infix: &hgparse.Action{Op: "+", Bind: 4}},
	"-":        {Bind: 4, Prefix: &hgparse.Action{Op: "negate", Bind: 19}, Infix: &hgparse.Action{Op: "-", Bind: 4}},
	"=":        {Bind: 3, Infix: &hgparse.Action{Op: "keyvalue", Bind: 3}},
	",":        {Bind: 2, Infix: &hgparse.Action{Op: "list", Bind: 2}},
	")":        {},
	"integer":  {Primary: "integer"},
	"symbol":   {Primary: "symbol"},
	"string":   {Primary: "string"},
	"template": {Primary: "template"},
	"end":      {},
}

// scanner holds the nesting depth of quoted templates.
type scanner struct {
	depth int
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tokenize is templater.tokenize from start to the closing term ('}'
// or, with term 0, the end).
func (sc *scanner) tokenize(program string, start, end int, term byte) ([]hgparse.Token, []*hgparse.Node, error) {
	var toks []hgparse.Token
	var subs []*hgparse.Node // parsed template for each "template" token, in order
	pos := start
	for pos < end {
		c := program[pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
		case strings.IndexByte("(=,).%|+-*/", c) >= 0:
			toks = append(toks, hgparse.Token{Type: string(c), Pos: pos})
		case c == '"' || c == '\'':
			s := pos + 1
			data, npos, err := sc.parseTemplate(program, s, end, c)
			if err != nil {
				return nil, nil, err
			}
			toks = append(toks, hgparse.Token{Type: "template", Pos: s})
			subs = append(subs, data)
			pos = npos - 1
		case c == 'r' && pos+1 < end && (program[pos+1] == '\'' || program[pos+1] == '"'):
			q := program[pos+1]
			s := pos + 2
			pos = s
			found := false
			for pos < end {
				d := program[pos]
				if d == '\\' {
					pos += 2
					continue
				}
				if d == q {
					toks = append(toks, hgparse.Token{Type: "string", Value: program[s:pos], Pos: s})
					found = true
					break
				}
				pos++
			}
			if !found {
				return nil, nil, &hgparse.ParseError{Msg: "unterminated string", Pos: s}
			}
		case isDigit(c):
			s := pos
			for pos < end && isDigit(program[pos]) {
				pos++
			}
			toks = append(toks, hgparse.Token{Type: "integer", Value: program[s:pos], Pos: s})
			pos--
		case c == '\\' && pos+1 < end && (program[pos+1] == '\'' || program[pos+1] == '"'):
			return nil, nil, &UnsupportedError{"escaped quoted strings (\\\" inside a template expression)"}
		case isAlnum(c) || c == '_':
			s := pos
			pos++
			for pos < end && (isAlnum(program[pos]) || program[pos] == '_') {
				pos++
			}
			toks = append(toks, hgparse.Token{Type: "symbol", Value: program[s:pos], Pos: s})
			pos--
		case term != 0 && c == term:
			toks = append(toks, hgparse.Token{Type: "end", Pos: pos})
			return toks, subs, nil
		default:
			return nil, nil, &hgparse.ParseError{Msg: "syntax error", Pos: pos}
		}
		pos++
	}
	if term != 0 {
		return nil, nil, &hgparse.ParseError{Msg: "unterminated template expansion", Pos: start}
	}
	toks = append(toks, hgparse.Token{Type: "end", Pos: pos})
	return toks, subs, nil
}

// parseTemplate is templater._parsetemplate + _unnesttemplatelist: the
// template from start up to the closing quote (none at top level); it
// returns the tree and the position after the closing quote.
func (sc *scanner) parseTemplate(tmpl string, start, stop int, quote byte) (*hgparse.Node, int, error) {
	sc.depth++
	defer func() { sc.depth-- }()
	if sc.depth > 100 {
		return nil, 0, &hgparse.ParseError{Msg: "template nested too deeply", Pos: start}
	}
	var parts []*hgparse.Node
	pos := start
	lit := func(s string, at int) error {
		u, err := hgparse.Unescape(s)
		if err != nil {
			return err
		}
		parts = append(parts, hgparse.Leaf("string", u, at))
		return nil
	}
	for pos < stop {
		n := -1
		for i := pos; i < stop; i++ {
			if tmpl[i] == '{' || quote != 0 && tmpl[i] == quote {
				n = i
				break
			}
		}
		if n < 0 {
			if err := lit(tmpl[pos:stop], pos); err != nil {
				return nil, 0, err
			}
			pos = stop
			break
		}
		c := tmpl[n]
		bs := (n - pos) - len(strings.TrimRight(tmpl[pos:n], `\`))
		if bs%2 == 1 {
			u, err := hgparse.Unescape(tmpl[pos : n-1])
			if err != nil {
				return nil, 0, err
			}
			parts = append(parts, hgparse.Leaf("string", u+string(c), pos))
			pos = n + 1
			continue
		}
		if n > pos {
			if err := lit(tmpl[pos:n], pos); err != nil {
				return nil, 0, err
			}
		}
		if quote != 0 && c == quote {
			return unnest(parts), n + 1, nil
		}
		toks, subs, err := sc.tokenize(tmpl, n+1, stop, '}')
		if err != nil {
			return nil, 0, err
		}
		tree, end, err := hgparse.Parse(elements, toks)
		if err != nil {
			return nil, 0, err
		}
		// Flatten before filling in the quoted templates: each was
		// flattened when it was parsed, and SimplifyInfix takes only
		// the parser's binary nodes (hg's tokens carry quoted templates
		// already parsed, which its parser never looks into).
		if tree, err = hgparse.SimplifyInfix(tree, "list"); err != nil {
			return nil, 0, err
		}
		fillTemplates(tree, &subs)
		if end >= len(tmpl) || tmpl[end] != '}' {
			return nil, 0, &hgparse.ParseError{Msg: "invalid token", Pos: end}
		}
		parts = append(parts, tree)
		pos = end + 1
	}
	if quote != 0 {
		return nil, 0, &hgparse.ParseError{Msg: "unterminated string", Pos: start}
	}
	return unnest(parts), pos, nil
}

// fillTemplates replaces the parser's "template" leaves, in token order,
// by the quoted templates the tokenizer parsed.
func fillTemplates(n *hgparse.Node, subs *[]*hgparse.Node) {
	if n == nil {
		return
	}
	// Leaves appear left to right in a pre-order walk, as their
	// tokens did.
	if n.Op == "template" && n.Kids == nil && n.Value == "" && len(*subs) > 0 {
		s := (*subs)[0]
		*subs = (*subs)[1:]
		*n = *s
		return
	}
	for _, k := range n.Kids {
		fillTemplates(k, subs)
	}
}

func unnest(parts []*hgparse.Node) *hgparse.Node {
	switch {
	case len(parts) == 0:
		return hgparse.Leaf("string", "", 0)
	case len(parts) == 1 && parts[0].Op == "string":
		return parts[0]
	}
	return &hgparse.Node{Op: "template", Kids: parts}
}

// Parse parses a template; errors are *hgparse.ParseError with hg's
// hint pointing at the position.
func Parse(tmpl string) (*Template, error) {
	sc := &scanner{}
	tree, _, err := sc.parseTemplate(tmpl, 0, len(tmpl), 0)
	if err != nil {
		if pe, ok := err.(*hgparse.ParseError); ok && pe.Pos >= 0 && pe.Hint == "" {
			off := strings.Count(tmpl[:min(pe.Pos, len(tmpl))], "\n")
			pe.Hint = strings.ReplaceAll(tmpl, "\n", `\n`) + "\n" + strings.Repeat(" ", pe.Pos+1+off) + "^ here"
		}
		return nil, err
	}
	return &Template{root: tree}, nil
}
