package revset

import (
	"strings"

	"github.com/hgfs/hgfs/internal/hgparse"
)

// elements is revsetlang.py's table.
var elements = map[string]hgparse.Element{
	"(":      {Bind: 21, Prefix: &hgparse.Action{Op: "group", Bind: 1, End: ")"}, Infix: &hgparse.Action{Op: "func", Bind: 1, End: ")"}},
	"[":      {Bind: 21, Infix: &hgparse.Action{Op: "subscript", Bind: 1, End: "]"}},
	"#":      {Bind: 21, Infix: &hgparse.Action{Op: "relation", Bind: 21}},
	"##":     {Bind: 20, Infix: &hgparse.Action{Op: "_concat", Bind: 20}},
	"~":      {Bind: 18, Infix: &hgparse.Action{Op: "ancestor", Bind: 18}},
	"^":      {Bind: 18, Infix: &hgparse.Action{Op: "parent", Bind: 18}, Suffix: "parentpost"},
	"-":      {Bind: 5, Prefix: &hgparse.Action{Op: "negate", Bind: 19}, Infix: &hgparse.Action{Op: "minus", Bind: 5}},
	"::":     {Bind: 17, Primary: "dagrangeall", Prefix: &hgparse.Action{Op: "dagrangepre", Bind: 17}, Infix: &hgparse.Action{Op: "dagrange", Bind: 17}, Suffix: "dagrangepost"},
	"..":     {Bind: 17, Primary: "dagrangeall", Prefix: &hgparse.Action{Op: "dagrangepre", Bind: 17}, Infix: &hgparse.Action{Op: "dagrange", Bind: 17}, Suffix: "dagrangepost"},
	":":      {Bind: 15, Primary: "rangeall", Prefix: &hgparse.Action{Op: "rangepre", Bind: 15}, Infix: &hgparse.Action{Op: "range", Bind: 15}, Suffix: "rangepost"},
	"not":    {Bind: 10, Prefix: &hgparse.Action{Op: "not", Bind: 10}},
	"!":      {Bind: 10, Prefix: &hgparse.Action{Op: "not", Bind: 10}},
	"and":    {Bind: 5, Infix: &hgparse.Action{Op: "and", Bind: 5}},
	"&":      {Bind: 5, Infix: &hgparse.Action{Op: "and", Bind: 5}},
	"%":      {Bind: 5, Infix: &hgparse.Action{Op: "only", Bind: 5}, Suffix: "onlypost"},
	"or":     {Bind: 4, Infix: &hgparse.Action{Op: "or", Bind: 4}},
	"|":      {Bind: 4, Infix: &hgparse.Action{Op: "or", Bind: 4}},
	"+":      {Bind: 4, Infix: &hgparse.Action{Op: "or", Bind: 4}},
	"=":      {Bind: 3, Infix: &hgparse.Action{Op: "keyvalue", Bind: 3}},
	",":      {Bind: 2, Infix: &hgparse.Action{Op: "list", Bind: 2}},
	")":      {},
	"]":      {},
	"symbol": {Primary: "symbol"},
	"string": {Primary: "string"},
	"end":    {},
}

func isSymInit(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '@' || c >= 128
}

func isSym(c byte) bool { return isSymInit(c) || c == '-' || c == '/' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokenize is revsetlang.tokenize; lookup (may be nil) tells whether a
// string names a revision, for old-style ranges and names with "-".
func tokenize(program string, lookup func(string) (bool, error)) ([]hgparse.Token, error) {
	var toks []hgparse.Token
	emit := func(typ, val string, pos int) { toks = append(toks, hgparse.Token{Type: typ, Value: val, Pos: pos}) }
	if program != "" && lookup != nil {
		parts := strings.SplitN(program, ":", 2)
		ok := true
		for _, p := range parts {
			if p == "" {
				continue
			}
			found, err := lookup(p)
			if err != nil {
				return nil, err
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			if parts[0] != "" {
				emit("symbol", parts[0], 0)
			}
			if len(parts) > 1 {
				s := len(parts[0])
				emit(":", "", s)
				if parts[1] != "" {
					emit("symbol", parts[1], s+1)
				}
			}
			emit("end", "", len(program))
			return toks, nil
		}
	}
	pos, l := 0, len(program)
	for pos < l {
		c := program[pos]
		switch {
		case isSpace(c):
		case c == ':' && strings.HasPrefix(program[pos:], "::"):
			emit("::", "", pos)
			pos++
		case c == '.' && strings.HasPrefix(program[pos:], ".."):
			emit("..", "", pos)
			pos++
		case c == '#' && strings.HasPrefix(program[pos:], "##"):
			emit("##", "", pos)
			pos++
		case strings.IndexByte("()[]#:=,-|&+!~^%", c) >= 0:
			emit(string(c), "", pos)
		case c == '"' || c == '\'' || c == 'r' && (strings.HasPrefix(program[pos:], "r'") || strings.HasPrefix(program[pos:], `r"`)):
			raw := false
			if c == 'r' {
				raw = true
				pos++
				c = program[pos]
			}
			pos++
			s := pos
			found := false
			for pos < l {
				d := program[pos]
				if d == '\\' {
					pos += 2
					continue
				}
				if d == c {
					v := program[s:pos]
					if !raw {
						var err error
						if v, err = hgparse.Unescape(v); err != nil {
							return nil, err
						}
					}
					emit("string", v, s)
					found = true
					break
				}
				pos++
			}
			if !found {
				return nil, &hgparse.ParseError{Msg: "unterminated string", Pos: s}
			}
		case isSymInit(c):
			s := pos
			pos++
			for pos < l {
				d := program[pos]
				if !isSym(d) {
					break
				}
				if d == '.' && program[pos-1] == '.' {
					pos--
					break
				}
				pos++
			}
			sym := program[s:pos]
			switch {
			case sym == "and" || sym == "or" || sym == "not":
				emit(sym, "", s)
			case strings.Contains(sym, "-"):
				if lookup != nil {
					found, err := lookup(sym)
					if err != nil {
						return nil, err
					}
					if found {
						emit("symbol", sym, s)
						break
					}
				}
				parts := strings.Split(sym, "-")
				for _, p := range parts[:len(parts)-1] {
					if p != "" {
						emit("symbol", p, s)
					}
					s += len(p)
					emit("-", "", s)
					s++
				}
				if last := parts[len(parts)-1]; last != "" {
					emit("symbol", last, s)
				}
			default:
				emit("symbol", sym, s)
			}
			pos--
		default:
			return nil, &hgparse.ParseError{Msg: "syntax error in revset '" + program + "'", Pos: pos}
		}
		pos++
	}
	emit("end", "", pos)
	return toks, nil
}

// Parse parses a revset as revsetlang.parse does, lookup (may be nil)
// telling which strings name revisions. Errors are *hgparse.ParseError,
// with hg's hint pointing at the position.
func Parse(spec string, lookup func(string) (bool, error)) (*hgparse.Node, error) {
	n, err := parse(spec, lookup)
	if pe, ok := err.(*hgparse.ParseError); ok && pe.Pos >= 0 && pe.Hint == "" {
		s := strings.ReplaceAll(spec, "\n", " ")
		pe.Hint = s + "\n" + strings.Repeat(" ", pe.Pos+1) + "^ here"
	}
	return n, err
}

func parse(spec string, lookup func(string) (bool, error)) (*hgparse.Node, error) {
	if strings.HasPrefix(spec, "revset(") && strings.HasSuffix(spec, ")") {
		lookup = nil
	}
	toks, err := tokenize(spec, lookup)
	if err != nil {
		return nil, err
	}
	tree, pos, err := hgparse.Parse(elements, toks)
	if err != nil {
		return nil, err
	}
	if pos != len(spec) {
		return nil, &hgparse.ParseError{Msg: "invalid token", Pos: pos}
	}
	if tree, err = hgparse.SimplifyInfix(tree, "list", "or"); err != nil {
		return nil, err
	}
	return fixops(tree), nil
}

func node(op string, kids ...*hgparse.Node) *hgparse.Node {
	return &hgparse.Node{Op: op, Kids: kids}
}

// fixops is revsetlang._fixops.
func fixops(x *hgparse.Node) *hgparse.Node {
	if x == nil || x.Kids == nil {
		return x
	}
	switch x.Op {
	case "parent":
		post := node("parentpost", x.Kids[0])
		if r := x.Kids[1]; r != nil {
			switch r.Op {
			case "dagrangepre":
				return fixops(node("dagrange", post, r.Kids[0]))
			case "dagrangeall":
				return fixops(node("dagrangepost", post))
			case "rangepre":
				return fixops(node("range", post, r.Kids[0]))
			case "rangeall":
				return fixops(node("rangepost", post))
			}
		}
	case "or":
		return node("or", fixops(node("list", x.Kids...)))
	case "subscript":
		if x.Kids[0] != nil && x.Kids[0].Op == "relation" {
			return fixops(node("relsubscript", x.Kids[0].Kids[0], x.Kids[0].Kids[1], x.Kids[1]))
		}
	}
	kids := make([]*hgparse.Node, len(x.Kids))
	for i, k := range x.Kids {
		kids[i] = fixops(k)
	}
	return &hgparse.Node{Op: x.Op, Value: x.Value, Kids: kids, Pos: x.Pos}
}

// foldConcat is revsetlang.foldconcat.
func foldConcat(x *hgparse.Node) (*hgparse.Node, error) {
	if x == nil || x.Kids == nil {
		return x, nil
	}
	if x.Op == "_concat" {
		var b strings.Builder
		pending := []*hgparse.Node{x}
		for len(pending) > 0 {
			e := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			switch {
			case e != nil && e.Op == "_concat":
				for i := len(e.Kids) - 1; i >= 0; i-- {
					pending = append(pending, e.Kids[i])
				}
			case e != nil && (e.Op == "string" || e.Op == "symbol"):
				b.WriteString(e.Value)
			default:
				op := "None"
				if e != nil {
					op = e.Op
				}
				return nil, hgparse.Errorf("\"##\" can't concatenate \"%s\" element", op)
			}
		}
		return hgparse.Leaf("string", b.String(), x.Pos), nil
	}
	kids := make([]*hgparse.Node, len(x.Kids))
	for i, k := range x.Kids {
		var err error
		if kids[i], err = foldConcat(k); err != nil {
			return nil, err
		}
	}
	return &hgparse.Node{Op: x.Op, Value: x.Value, Kids: kids, Pos: x.Pos}, nil
}

func sym(name string) *hgparse.Node { return hgparse.Leaf("symbol", name, 0) }

func fn(name string, args ...*hgparse.Node) *hgparse.Node {
	var a *hgparse.Node
	switch len(args) {
	case 0:
	case 1:
		a = args[0]
	default:
		a = node("list", args...)
	}
	return node("func", sym(name), a)
}

// analyze is revsetlang._analyze: pseudo operations become real ones.
func analyze(x *hgparse.Node) (*hgparse.Node, error) {
	if x == nil {
		return nil, nil
	}
	k := x.Kids
	switch x.Op {
	case "minus":
		return analyze(node("and", k[0], node("not", k[1])))
	case "only":
		return analyze(fn("only", k[0], k[1]))
	case "onlypost":
		return analyze(fn("only", k[0]))
	case "dagrangeall":
		return nil, hgparse.Errorf("can't use '::' in this context")
	case "dagrangepre":
		return analyze(fn("ancestors", k[0]))
	case "dagrangepost":
		return analyze(fn("descendants", k[0]))
	case "negate":
		if k[0] == nil || k[0].Op != "string" && k[0].Op != "symbol" {
			return nil, hgparse.Errorf("can't negate that")
		}
		return hgparse.Leaf("string", "-"+k[0].Value, x.Pos), nil
	case "string", "symbol":
		return x, nil
	case "rangeall":
		return node("rangeall"), nil
	case "group":
		return analyze(k[0])
	case "keyvalue":
		v, err := analyze(k[1])
		if err != nil {
			return nil, err
		}
		return node(x.Op, k[0], v), nil
	case "func":
		a, err := analyze(k[1])
		if err != nil {
			return nil, err
		}
		return node(x.Op, k[0], a), nil
	}
	kids := make([]*hgparse.Node, len(k))
	for i, c := range k {
		var err error
		if kids[i], err = analyze(c); err != nil {
			return nil, err
		}
	}
	return &hgparse.Node{Op: x.Op, Kids: kids, Pos: x.Pos}, nil
}
