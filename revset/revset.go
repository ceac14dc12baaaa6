// Package revset evaluates Mercurial's revision set language
// (mercurial/revsetlang.py and revset.py) over a repo.Repo: the
// operators, the predicates people type (see Functions) and hg's result
// order, so that `hgfs log -r SPEC` lists what `hg log -r SPEC` lists,
// in the same order.
//
// The predicates hg has and this package does not are refused by name
// (ErrUnsupported), never ignored. Parsing goes through
// internal/hgparse; the input is untrusted and its nesting bounded.
package revset

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// UnsupportedError names a part of hg's revset language hgfs does not
// evaluate.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string {
	return e.What + " is not supported by hgfs"
}

// LookupError is hg's RepoLookupError raised by a predicate ("branch 'x'
// does not exist"): an abort, not a parse error.
type LookupError struct{ Msg string }

func (e *LookupError) Error() string { return e.Msg }

// Options are what a revset needs beyond the repository.
type Options struct {
	// Cwd is the working directory relative to the repository root
	// ("" at the root), for file() patterns.
	Cwd string
}

// Evaluator evaluates revsets against one repository; it caches the
// changesets it reads.
type Evaluator struct {
	r     *repo.Repo
	opts  Options
	n     int
	cs    map[int]*revlog.Changeset
	depth int
}

// New returns an Evaluator for r.
func New(r *repo.Repo, opts Options) *Evaluator {
	return &Evaluator{r: r, opts: opts, n: r.Changelog().Len(), cs: map[int]*revlog.Changeset{}}
}

// lookup is revset.lookupfn: whether symbol names a visible revision.
// An ambiguous prefix is an error there, as in hg.
func (ev *Evaluator) lookup(symbol string) (bool, error) {
	_, err := ev.r.Lookup(symbol)
	if errors.Is(err, repo.ErrAmbiguous) {
		return false, err
	}
	return err == nil, nil
}

// Revs evaluates specs as scmutil.revrange does (their union, in hg's
// order): the revisions `hg log -r SPEC...` lists.
func (ev *Evaluator) Revs(specs []string) ([]int, error) {
	tree, err := ev.compile(specs)
	if err != nil || tree == nil {
		return nil, err
	}
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	s, err := ev.eval(full, tree, defineOrder)
	if err != nil {
		return nil, err
	}
	return s.revs, nil
}

// Filter keeps the revisions of revs (in their order) that the specs
// select, as a matcher applied to a subset does (hg log's -k, -b, -u).
func (ev *Evaluator) Filter(revs []int, specs []string) ([]int, error) {
	tree, err := ev.compile(specs)
	if err != nil || tree == nil {
		return nil, err
	}
	s, err := ev.eval(newSet(revs, false), tree, followOrder)
	if err != nil {
		return nil, err
	}
	return s.revs, nil
}

func (ev *Evaluator) compile(specs []string) (*hgparse.Node, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	var trees []*hgparse.Node
	for _, s := range specs {
		if s == "" {
			return nil, hgparse.Errorf("empty query")
		}
	}
	for _, s := range specs {
		t, err := Parse(s, ev.lookup)
		if err != nil {
			return nil, err
		}
		trees = append(trees, t)
	}
	tree := trees[0]
	if len(trees) > 1 {
		tree = node("or", node("list", trees...))
	}
	tree, err := foldConcat(tree)
	if err != nil {
		return nil, err
	}
	return analyze(tree)
}

type order int

const (
	anyOrder order = iota
	defineOrder
	followOrder
)

// set is an ordered smartset; full marks fullreposet (which also
// admits the null revision as a symbol).
type set struct {
	revs []int
	in   map[int]bool
	full bool
}

func newSet(revs []int, full bool) *set { return &set{revs: revs, full: full} }

func (s *set) has(rev int) bool {
	if s.in == nil {
		s.in = make(map[int]bool, len(s.revs))
		for _, r := range s.revs {
			s.in[r] = true
		}
	}
	return s.in[rev]
}

// filter keeps s's order.
func (s *set) filter(keep func(int) bool) *set {
	var out []int
	for _, r := range s.revs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return newSet(out, false)
}

// and is smartset's "s & o": s's order.
func (s *set) and(o *set) *set { return s.filter(o.has) }

func (s *set) minus(o *set) *set { return s.filter(func(r int) bool { return !o.has(r) }) }

// plus is addset: s, then o's revisions not in s.
func (s *set) plus(o *set) *set {
	out := append([]int(nil), s.revs...)
	for _, r := range o.revs {
		if !s.has(r) {
			out = append(out, r)
		}
	}
	return newSet(out, false)
}

func memberSet(m map[int]bool) *set {
	revs := make([]int, 0, len(m))
	for r := range m {
		revs = append(revs, r)
	}
	sort.Ints(revs)
	return &set{revs: revs, in: m}
}

func (ev *Evaluator) full() (*set, error) {
	vis, err := ev.r.Visible()
	if err != nil {
		return nil, err
	}
	return newSet(vis, true), nil
}

func (ev *Evaluator) changeset(rev int) (*revlog.Changeset, error) {
	if c, ok := ev.cs[rev]; ok {
		return c, nil
	}
	c, err := ev.r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	ev.cs[rev] = c
	return c, nil
}

// filterErr is filter with a predicate that reads changesets.
func (s *set) filterErr(keep func(int) (bool, error)) (*set, error) {
	var out []int
	for _, r := range s.revs {
		ok, err := keep(r)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return newSet(out, false), nil
}

func (ev *Evaluator) eval(subset *set, x *hgparse.Node, ord order) (*set, error) {
	if x == nil {
		return nil, hgparse.Errorf("missing argument")
	}
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > hgparse.MaxDepth {
		return nil, hgparse.Errorf("expression nested too deeply")
	}
	k := x.Kids
	switch x.Op {
	case "string", "symbol":
		return ev.stringSet(subset, x.Value)
	case "range", "rangepre", "rangepost", "rangeall":
		return ev.rangeSet(subset, x, ord)
	case "dagrange":
		full, err := ev.full()
		if err != nil {
			return nil, err
		}
		roots, err := ev.eval(full, k[0], defineOrder)
		if err != nil {
			return nil, err
		}
		heads, err := ev.eval(full, k[1], defineOrder)
		if err != nil {
			return nil, err
		}
		return subset.and(memberSet(ev.reachable(roots, heads))), nil
	case "and":
		yo := followOrder
		if ord == anyOrder {
			yo = anyOrder
		}
		a, err := ev.eval(subset, k[0], ord)
		if err != nil {
			return nil, err
		}
		return ev.eval(a, k[1], yo)
	case "or":
		xs := hgparse.List(k[0])
		if len(xs) == 0 {
			return newSet(nil, false), nil
		}
		if ord == followOrder {
			full, err := ev.full()
			if err != nil {
				return nil, err
			}
			o, err := ev.orList(full, xs, anyOrder)
			if err != nil {
				return nil, err
			}
			return subset.and(o), nil
		}
		return ev.orList(subset, xs, ord)
	case "not":
		o, err := ev.eval(subset, k[0], anyOrder)
		if err != nil {
			return nil, err
		}
		return subset.minus(o), nil
	case "parentpost":
		return ev.parentsOf(subset, k[0], func(r int) []int { p1, _ := ev.r.Parents(r); return []int{p1} })
	case "parent":
		n, err := getInteger(k[1], "^ expects a number 0, 1, or 2")
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 2 {
			return nil, hgparse.Errorf("^ expects a number 0, 1, or 2")
		}
		return ev.parentsOf(subset, k[0], func(r int) []int {
			p1, p2 := ev.r.Parents(r)
			switch n {
			case 0:
				return []int{r}
			case 1:
				return []int{p1}
			}
			return []int{p2}
		})
	case "ancestor":
		n, err := getInteger(k[1], "~ expects a number")
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, hgparse.Errorf("~ expects a number")
		}
		return ev.parentsOf(subset, k[0], func(r int) []int {
			for i := 0; i < n && r >= 0; i++ {
				r, _ = ev.r.Parents(r)
			}
			return []int{r}
		})
	case "func":
		return ev.call(subset, k[0], k[1], ord)
	case "list":
		return nil, &hgparse.ParseError{Msg: "can't use a list in this context", Pos: -1, Hint: `see 'hg help "revsets.x or y"'`}
	case "keyvalue":
		return nil, hgparse.Errorf("can't use a key-value pair in this context")
	case "subscript":
		return nil, hgparse.Errorf("can't use a subscript in this context")
	case "relation", "relsubscript":
		return nil, &UnsupportedError{"the revset relation operator '#'"}
	}
	return nil, hgparse.Errorf("invalid operator %s", x.Op)
}

func (ev *Evaluator) orList(subset *set, xs []*hgparse.Node, ord order) (*set, error) {
	if len(xs) == 1 {
		return ev.eval(subset, xs[0], ord)
	}
	p := len(xs) / 2
	a, err := ev.orList(subset, xs[:p], ord)
	if err != nil {
		return nil, err
	}
	b, err := ev.orList(subset, xs[p:], ord)
	if err != nil {
		return nil, err
	}
	return a.plus(b), nil
}

// parentsOf evaluates x over the whole repository and maps each member
// to revisions (nullrev dropped), intersected with subset.
func (ev *Evaluator) parentsOf(subset *set, x *hgparse.Node, f func(int) []int) (*set, error) {
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	s, err := ev.eval(full, x, defineOrder)
	if err != nil {
		return nil, err
	}
	m := map[int]bool{}
	for _, r := range s.revs {
		for _, p := range f(r) {
			if p != revlog.NullRev {
				m[p] = true
			}
		}
	}
	return subset.and(memberSet(m)), nil
}

// stringSet is revset.stringset.
func (ev *Evaluator) stringSet(subset *set, symbol string) (*set, error) {
	if symbol == "" {
		return nil, hgparse.Errorf("empty string is not a valid revision")
	}
	rev, err := ev.r.Lookup(symbol)
	if errors.Is(err, repo.ErrAmbiguous) {
		// revsymbol's AmbiguousPrefixLookupError, not lookupfn's.
		return nil, &LookupError{"00changelog@" + symbol + ": ambiguous identifier"}
	}
	if err != nil {
		return nil, err
	}
	if subset.has(rev) || rev == revlog.NullRev && subset.full {
		return newSet([]int{rev}, false), nil
	}
	return newSet(nil, false), nil
}

func (ev *Evaluator) rangeSet(subset *set, x *hgparse.Node, ord order) (*set, error) {
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	tip := ev.n - 1
	m, n := 0, tip
	var a, b *hgparse.Node
	switch x.Op {
	case "range":
		a, b = x.Kids[0], x.Kids[1]
	case "rangepre":
		b = x.Kids[0]
	case "rangepost":
		a = x.Kids[0]
	}
	if a != nil {
		s, err := ev.eval(full, a, defineOrder)
		if err != nil {
			return nil, err
		}
		if len(s.revs) == 0 {
			return newSet(nil, false), nil
		}
		m = s.revs[0]
	}
	if b != nil {
		s, err := ev.eval(full, b, defineOrder)
		if err != nil {
			return nil, err
		}
		if len(s.revs) == 0 {
			return newSet(nil, false), nil
		}
		n = s.revs[len(s.revs)-1]
	}
	if x.Op == "range" && (a == nil || b == nil) {
		return nil, hgparse.Errorf("missing argument")
	}
	var r []int
	switch {
	case m == n:
		r = []int{m}
	case m < n:
		for i := m; i <= n; i++ {
			if i < 0 || !ev.r.Hidden(i) {
				r = append(r, i)
			}
		}
	default:
		for i := m; i >= n; i-- {
			if i < 0 || !ev.r.Hidden(i) {
				r = append(r, i)
			}
		}
	}
	rs := newSet(r, false)
	if ord == defineOrder {
		// hg's spanset starts at the null revision when asked, and
		// fullreposet & span keeps it.
		return rs.filter(func(rev int) bool { return subset.has(rev) || rev == revlog.NullRev && subset.full }), nil
	}
	return subset.and(rs), nil
}

// reachable is dagop.reachableroots with includepath: the revisions
// that are descendants of a root and ancestors of a head.
func (ev *Evaluator) reachable(roots, heads *set) map[int]bool {
	out := map[int]bool{}
	if len(roots.revs) == 0 || len(heads.revs) == 0 {
		return out
	}
	minroot := roots.revs[0]
	for _, r := range roots.revs {
		minroot = min(minroot, r)
	}
	anc := ev.ancestors(heads.revs, -1)
	for r := minroot; r < ev.n; r++ {
		if r < 0 || !anc[r] {
			continue
		}
		if roots.has(r) {
			out[r] = true
			continue
		}
		p1, p2 := ev.r.Parents(r)
		if p1 >= 0 && out[p1] || p2 >= 0 && out[p2] {
			out[r] = true
		}
	}
	return out
}

// ancestors returns revs and their ancestors (within depth generations
// when depth >= 0).
func (ev *Evaluator) ancestors(revs []int, depth int) map[int]bool {
	seen := map[int]bool{}
	gen := map[int]int{}
	stack := []int{}
	for _, r := range revs {
		if r >= 0 && !seen[r] {
			seen[r] = true
			stack = append(stack, r)
		}
	}
	// Breadth-first by generation for depth limits; a plain walk
	// otherwise.
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if depth >= 0 && gen[r] >= depth {
			continue
		}
		p1, p2 := ev.r.Parents(r)
		for _, p := range []int{p1, p2} {
			if p < 0 {
				continue
			}
			if g, ok := gen[p]; seen[p] && (!ok || g <= gen[r]+1) {
				continue
			}
			seen[p] = true
			gen[p] = gen[r] + 1
			stack = append(stack, p)
		}
	}
	return seen
}

func (ev *Evaluator) descendants(roots []int, depth int) map[int]bool {
	out := map[int]bool{}
	gen := map[int]int{}
	if len(roots) == 0 {
		return out
	}
	first := ev.n
	for _, r := range roots {
		if r >= -1 {
			first = min(first, r)
			out[r] = true
			gen[r] = 0
		}
	}
	for r := max(first+1, 0); r < ev.n; r++ {
		if ev.r.Hidden(r) {
			continue
		}
		p1, p2 := ev.r.Parents(r)
		g := -1
		for _, p := range []int{p1, p2} {
			if out[p] && (g < 0 || gen[p]+1 < g) {
				g = gen[p] + 1
			}
		}
		if g >= 0 && !out[r] && (depth < 0 || g <= depth) {
			out[r] = true
			gen[r] = g
		}
	}
	delete(out, revlog.NullRev)
	return out
}

func getString(x *hgparse.Node, msg string) (string, error) {
	if x != nil && (x.Op == "string" || x.Op == "symbol") {
		return x.Value, nil
	}
	return "", hgparse.Errorf("%s", msg)
}

func getInteger(x *hgparse.Node, msg string) (int, error) {
	s, err := getString(x, msg)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, hgparse.Errorf("%s", msg)
	}
	return n, nil
}

func getArgs(x *hgparse.Node, lo, hi int, msg string) ([]*hgparse.Node, error) {
	l := hgparse.List(x)
	if len(l) < lo || hi >= 0 && len(l) > hi {
		return nil, hgparse.Errorf("%s", msg)
	}
	return l, nil
}

// lower is encoding.lower for UTF-8 text, ASCII-only for other bytes.
func lower(s string) string {
	if utf8.ValidString(s) {
		return strings.ToLower(s)
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// stringMatcher is stringutil.stringmatcher: "re:" and "literal:"
// prefixes, literal by default.
func stringMatcher(pattern string, caseSensitive bool) (kind, pat string, match func(string) bool, err error) {
	kind, pat = "literal", pattern
	if p, ok := strings.CutPrefix(pattern, "re:"); ok {
		kind, pat = "re", p
	} else if p, ok := strings.CutPrefix(pattern, "literal:"); ok {
		pat = p
	}
	if kind == "re" {
		src := pat
		if !caseSensitive {
			src = "(?i)" + src
		}
		re, rerr := regexp.Compile(src)
		if rerr != nil {
			return "", "", nil, hgparse.Errorf("invalid regular expression: %v", rerr)
		}
		return kind, pat, re.MatchString, nil
	}
	if caseSensitive {
		return kind, pat, func(s string) bool { return s == pat }, nil
	}
	ipat := lower(pat)
	return kind, pat, func(s string) bool { return lower(s) == ipat }, nil
}

// substringMatcher is revset._substringmatcher.
func substringMatcher(pattern string, caseSensitive bool) (func(string) bool, error) {
	kind, pat, match, err := stringMatcher(pattern, caseSensitive)
	if err != nil || kind != "literal" {
		return match, err
	}
	if !caseSensitive {
		ipat := lower(pat)
		return func(s string) bool { return strings.Contains(lower(s), ipat) }, nil
	}
	return func(s string) bool { return strings.Contains(s, pat) }, nil
}

// errorsAsLookup reports whether err is a revision lookup failure (what
// present() swallows).
func errorsAsLookup(err error) bool {
	var le *repo.LookupError
	var ple *LookupError
	return errors.As(err, &le) || errors.As(err, &ple)
}

// ErrorLine is the first line hg prints for a revset error: "hg: parse
// error...: msg" for parse errors, "abort: msg" otherwise.
func ErrorLine(err error) string {
	var pe *hgparse.ParseError
	if errors.As(err, &pe) {
		if pe.Pos >= 0 {
			return fmt.Sprintf("hg: parse error at %d: %s", pe.Pos, pe.Msg)
		}
		return "hg: parse error: " + pe.Msg
	}
	return "abort: " + err.Error()
}
