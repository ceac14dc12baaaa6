// Package hgparse is Mercurial's top-down operator-precedence parser
// (mercurial/parser.py), shared by the revset language (package revset)
// and the template language (package templater): each supplies its
// tokens and its table of elements, and gets hg's parse tree back, with
// hg's error messages and positions.
//
// Input is untrusted (command-line revsets and templates): nesting is
// bounded by MaxDepth, and every failure is a *ParseError.
package hgparse

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/revlog"
)

// MaxDepth bounds the nesting of expressions, so that a hostile input
// cannot exhaust the stack.
const MaxDepth = 500

// Token is one token: its type (an element name: "symbol", "string",
// "(", "end", ...), its value for symbols and strings, and its byte
// offset in the input.
type Token struct {
	Type  string
	Value string
	Pos   int
}

// Action is a prefix or infix rule: the node it builds, the binding
// strength of its operand, and the token that must close it ("" for
// none).
type Action struct {
	Op   string
	Bind int
	End  string
}

// Element is one row of parser.py's elements table.
type Element struct {
	Bind    int
	Primary string  // node made when the token stands alone
	Prefix  *Action // rule when the token starts a term
	Infix   *Action // rule when the token follows a term
	Suffix  string  // node made when the token ends a term
}

// Node is a parse tree node as hg's tuples: Op is the first element;
// leaves ("symbol", "string", ...) carry Value, the others Kids (a kid
// may be nil where hg's tuple holds None, as in "f()").
type Node struct {
	Op    string
	Value string
	Kids  []*Node
	Pos   int
}

// Leaf makes a leaf node.
func Leaf(op, value string, pos int) *Node { return &Node{Op: op, Value: value, Pos: pos} }

// String prints the tree as hg's prettyformat does roughly; for tests
// and debugging.
func (n *Node) String() string {
	if n == nil {
		return "None"
	}
	if n.Kids == nil {
		return fmt.Sprintf("(%s %q)", n.Op, n.Value)
	}
	parts := []string{n.Op}
	for _, k := range n.Kids {
		parts = append(parts, k.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// ParseError is hg's error.ParseError: a message and, where known, the
// byte offset it refers to (-1 for none), and an optional hint.
type ParseError struct {
	Msg  string
	Pos  int
	Hint string
}

func (e *ParseError) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("at %d: %s", e.Pos, e.Msg)
	}
	return e.Msg
}

// Errorf makes a ParseError without a position.
func Errorf(format string, args ...any) *ParseError {
	return &ParseError{Msg: fmt.Sprintf(format, args...), Pos: -1}
}

// Parser parses one token stream.
type Parser struct {
	elements map[string]Element
	toks     []Token
	i        int
	depth    int
}

// Parse parses toks (which end with an "end" token) and returns the tree
// and the position of the token where parsing stopped, as parser.parse.
func Parse(elements map[string]Element, toks []Token) (*Node, int, error) {
	p := &Parser{elements: elements, toks: toks}
	n, err := p.parse(0)
	if err != nil {
		return nil, 0, err
	}
	return n, p.cur().Pos, nil
}

func (p *Parser) cur() Token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	end := 0
	if len(p.toks) > 0 {
		end = p.toks[len(p.toks)-1].Pos
	}
	return Token{Type: "end", Pos: end}
}

func (p *Parser) advance() Token {
	t := p.cur()
	p.i++
	return t
}

func (p *Parser) elem(typ string) (Element, error) {
	e, ok := p.elements[typ]
	if !ok {
		return Element{}, &ParseError{Msg: "unknown token: " + typ, Pos: p.cur().Pos}
	}
	return e, nil
}

func (p *Parser) hasNewTerm() bool {
	e := p.elements[p.cur().Type]
	return e.Primary != "" || e.Prefix != nil
}

func (p *Parser) match(m string) error {
	if t := p.cur(); t.Type != m {
		return &ParseError{Msg: "unexpected token: " + t.Type, Pos: t.Pos}
	}
	p.advance()
	return nil
}

func (p *Parser) operand(a *Action) (*Node, error) {
	var n *Node
	if a.End == "" || p.cur().Type != a.End {
		var err error
		if n, err = p.parse(a.Bind); err != nil {
			return nil, err
		}
	}
	if a.End != "" {
		if err := p.match(a.End); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *Parser) parse(bind int) (*Node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxDepth {
		return nil, &ParseError{Msg: "expression nested too deeply", Pos: p.cur().Pos}
	}
	t := p.advance()
	e, err := p.elem(t.Type)
	if err != nil {
		return nil, err
	}
	var expr *Node
	switch {
	case e.Primary != "" && !(e.Prefix != nil && p.hasNewTerm()):
		expr = Leaf(e.Primary, t.Value, t.Pos)
	case e.Prefix != nil:
		k, err := p.operand(e.Prefix)
		if err != nil {
			return nil, err
		}
		expr = &Node{Op: e.Prefix.Op, Kids: []*Node{k}, Pos: t.Pos}
	default:
		return nil, &ParseError{Msg: "not a prefix: " + t.Type, Pos: t.Pos}
	}
	for {
		ce, err := p.elem(p.cur().Type)
		if err != nil {
			return nil, err
		}
		if bind >= ce.Bind {
			break
		}
		t := p.advance()
		switch {
		case ce.Suffix != "" && !(ce.Infix != nil && p.hasNewTerm()):
			expr = &Node{Op: ce.Suffix, Kids: []*Node{expr}, Pos: t.Pos}
		case ce.Infix != nil:
			k, err := p.operand(ce.Infix)
			if err != nil {
				return nil, err
			}
			expr = &Node{Op: ce.Infix.Op, Kids: []*Node{expr, k}, Pos: t.Pos}
		default:
			return nil, &ParseError{Msg: "not an infix: " + t.Type, Pos: t.Pos}
		}
	}
	return expr, nil
}

// SimplifyInfix flattens chains of the given left-associative infix
// operators into one node each, as parser.simplifyinfixops. Like hg's,
// it takes the parser's tree, where those operators have two kids, not
// a tree it flattened already.
//
// The parser bounds its recursion but builds chains of infix operators
// ("1+1+...") in a loop, so its tree can be as deep as the input is
// long; SimplifyInfix, the first pass to recurse on it, refuses a tree
// it would leave deeper than MaxDepth, so that the passes after it need
// no bound of their own.
func SimplifyInfix(n *Node, ops ...string) (*Node, error) {
	return simplifyInfix(n, ops, 0)
}

func simplifyInfix(n *Node, ops []string, depth int) (*Node, error) {
	if n == nil || n.Kids == nil {
		return n, nil
	}
	if depth++; depth > MaxDepth {
		return nil, &ParseError{Msg: "expression nested too deeply", Pos: n.Pos}
	}
	target := false
	for _, op := range ops {
		if n.Op == op {
			target = true
		}
	}
	if !target {
		kids := make([]*Node, len(n.Kids))
		for i, k := range n.Kids {
			var err error
			if kids[i], err = simplifyInfix(k, ops, depth); err != nil {
				return nil, err
			}
		}
		return &Node{Op: n.Op, Value: n.Value, Kids: kids, Pos: n.Pos}, nil
	}
	var rev []*Node
	x := n
	for x != nil && x.Op == n.Op && len(x.Kids) == 2 {
		r, err := simplifyInfix(x.Kids[1], ops, depth)
		if err != nil {
			return nil, err
		}
		rev = append(rev, r)
		x = x.Kids[0]
	}
	l, err := simplifyInfix(x, ops, depth)
	if err != nil {
		return nil, err
	}
	rev = append(rev, l)
	kids := make([]*Node, len(rev))
	for i := range rev {
		kids[i] = rev[len(rev)-1-i]
	}
	return &Node{Op: n.Op, Kids: kids, Pos: n.Pos}, nil
}

// List returns a "list" node's items, or the node alone, or nothing for
// nil, as revsetlang.getlist and templateutil's getlist do.
func List(n *Node) []*Node {
	if n == nil {
		return nil
	}
	if n.Op == "list" {
		return n.Kids
	}
	return []*Node{n}
}

// ArgSpec is a function's argument names as parser.splitargspec reads
// "foo *bar baz **qux": positional, variadic, keyword-or-positional, and
// the catch-all of extra keywords.
type ArgSpec struct {
	Pos  []string
	Var  string
	Keys []string
	Opt  string
}

// SplitArgSpec parses an argument spec string.
func SplitArgSpec(spec string) ArgSpec {
	var a ArgSpec
	pre, post, hasOpt := strings.Cut(spec, "**")
	if hasOpt {
		a.Opt = strings.TrimSpace(post)
	}
	pos, rest, hasVar := strings.Cut(pre, "*")
	if hasVar {
		a.Pos = strings.Fields(pos)
		f := strings.Fields(rest)
		if len(f) > 0 {
			a.Var, a.Keys = f[0], f[1:]
		}
	} else {
		a.Keys = strings.Fields(pre)
	}
	return a
}

// Args is what BuildArgs returns: named arguments, the variadic ones,
// and extra keywords (for Opt).
type Args struct {
	Named map[string]*Node
	Var   []*Node
	Extra map[string]*Node
}

// BuildArgs maps a function's argument trees to names as
// parser.buildargsdict does.
func BuildArgs(trees []*Node, funcname string, spec ArgSpec, keyvalue, keynode string) (*Args, error) {
	kwstart := len(trees)
	for i, x := range trees {
		if x != nil && x.Op == keyvalue {
			kwstart = i
			break
		}
	}
	if kwstart < len(spec.Pos) {
		return nil, Errorf("%s takes at least %d positional arguments", funcname, len(spec.Pos))
	}
	if spec.Var == "" && kwstart > len(spec.Pos)+len(spec.Keys) {
		return nil, Errorf("%s takes at most %d positional arguments", funcname, len(spec.Pos)+len(spec.Keys))
	}
	a := &Args{Named: map[string]*Node{}}
	i := 0
	for ; i < len(spec.Pos); i++ {
		a.Named[spec.Pos[i]] = trees[i]
	}
	if spec.Var != "" {
		a.Var = trees[i:kwstart]
	} else {
		for _, k := range spec.Keys {
			if i >= kwstart {
				break
			}
			a.Named[k] = trees[i]
			i++
		}
	}
	if spec.Opt != "" {
		a.Extra = map[string]*Node{}
	}
	for _, x := range trees[kwstart:] {
		if x == nil || x.Op != keyvalue || x.Kids[0] == nil || x.Kids[0].Op != keynode {
			return nil, Errorf("%s got an invalid argument", funcname)
		}
		k := x.Kids[0].Value
		d := a.Named
		known := false
		for _, kk := range spec.Keys {
			if kk == k {
				known = true
			}
		}
		if !known {
			if spec.Opt == "" {
				return nil, Errorf("%s got an unexpected keyword argument '%s'", funcname, k)
			}
			d = a.Extra
		}
		if _, dup := d[k]; dup {
			return nil, Errorf("%s got multiple values for keyword argument '%s'", funcname, k)
		}
		d[k] = x.Kids[1]
	}
	return a, nil
}

// Unescape is parser.unescapestr: Python's escape_decode, its error a
// ParseError in lower case as hg words it.
func Unescape(s string) (string, error) {
	v, err := revlog.EscapeDecode(s)
	if err != nil {
		return "", Errorf("%s", strings.ToLower(err.Error()))
	}
	return v, nil
}

// Similar returns the names that difflib.SequenceMatcher rates above 0.6
// against value, as error.getsimilar does for "did you mean" hints.
func Similar(names []string, value string) []string {
	var out []string
	for _, n := range names {
		if ratio(value, n) > 0.6 {
			out = append(out, n)
		}
	}
	return out
}

// SimilarityHint is error.similarity_hint.
func SimilarityHint(similar []string) string {
	switch len(similar) {
	case 0:
		return ""
	case 1:
		return "did you mean " + similar[0] + "?"
	}
	s := append([]string(nil), similar...)
	sort.Strings(s)
	return "did you mean one of " + strings.Join(s, ", ") + "?"
}

// ratio is difflib.SequenceMatcher(None, a, b).ratio() for short strings
// (no autojunk below 200 characters).
func ratio(a, b string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	return 2 * float64(matches(a, b)) / float64(len(a)+len(b))
}

func matches(a, b string) int {
	if a == "" || b == "" {
		return 0
	}
	// Longest common block, leftmost in a then in b, as
	// find_longest_match.
	bi, bj, bk := 0, 0, 0
	for i := 0; i < len(a); i++ {
		for j := 0; j < len(b); j++ {
			k := 0
			for i+k < len(a) && j+k < len(b) && a[i+k] == b[j+k] {
				k++
			}
			if k > bk {
				bi, bj, bk = i, j, k
			}
		}
	}
	if bk == 0 {
		return 0
	}
	return bk + matches(a[:bi], b[:bj]) + matches(a[bi+bk:], b[bj+bk:])
}
