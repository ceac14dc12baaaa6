package revset

import (
	"sort"
	"strings"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

type predicate func(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error)

var predicates map[string]predicate

// hgPredicates are the documented predicates of hg 6.3's revset.py that
// this package does not evaluate: they are refused by name.
var hgPredicates = []string{
	"ancestor", "bisect", "bisected", "bundle", "branchpoint", "commonancestors",
	"conflictlocal", "conflictother", "contains", "converted", "destination", "diffcontains",
	"contentdivergent", "expectsize", "extdata", "extinct", "extra", "filelog",
	"followlines", "hidden", "matching", "named", "nodefromfile",
	"obsolete", "origin", "outgoing", "phasedivergent", "remote", "revset",
	"stack", "subrepo", "successors", "orphan", "unstable", "wdir", "precursors",
	"predecessors", "allprecursors", "allpredecessors", "allsuccessors", "divergent",
	"_destupdate", "_destmerge",
}

func init() {
	predicates = map[string]predicate{
		"adds":        statusPred("adds"),
		"modifies":    statusPred("modifies"),
		"removes":     statusPred("removes"),
		"grep":        fGrep,
		"follow":      fFollow,
		"all":         fAll,
		"ancestors":   fAncestors,
		"author":      fUser,
		"bookmark":    fBookmark,
		"branch":      fBranch,
		"children":    fChildren,
		"closed":      fClosed,
		"date":        fDate,
		"desc":        fDesc,
		"descendants": fDescendants,
		"draft":       phasePred("draft", repo.Draft),
		"file":        fFile,
		"first":       fLimit,
		"head":        fHead,
		"heads":       fHeads,
		"id":          fID,
		"keyword":     fKeyword,
		"last":        fLast,
		"limit":       fLimit,
		"max":         fMinMax(true),
		"merge":       fMerge,
		"min":         fMinMax(false),
		"none":        fNone,
		"not":         fNot,
		"only":        fOnly,
		"p1":          fParent(1),
		"p2":          fParent(2),
		"parents":     fParent(0),
		"present":     fPresent,
		"public":      phasePred("public", repo.Public),
		"rev":         fRev,
		"reverse":     fReverse,
		"roots":       fRoots,
		"secret":      phasePred("secret", repo.Secret),
		"sort":        fSort,
		"tag":         fTag,
		"tagged":      fTag,
		"user":        fUser,
		"_notpublic":  fNotPublic,
	}
}

// Functions lists the predicates Evaluator knows, sorted.
func Functions() []string {
	var out []string
	for k := range predicates {
		if !strings.HasPrefix(k, "_") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (ev *Evaluator) call(subset *set, name, arg *hgparse.Node, ord order) (*set, error) {
	if name == nil || name.Op != "symbol" {
		return nil, hgparse.Errorf("not a symbol")
	}
	if f, ok := predicates[name.Value]; ok {
		return f(ev, subset, arg, ord)
	}
	for _, h := range hgPredicates {
		if h == name.Value {
			return nil, &UnsupportedError{"the revset predicate " + h + "()"}
		}
	}
	var known []string
	for k := range predicates {
		if !strings.HasPrefix(k, "_") {
			known = append(known, k)
		}
	}
	known = append(known, hgPredicates...)
	var names []string
	for _, k := range known {
		if !strings.HasPrefix(k, "_") {
			names = append(names, k)
		}
	}
	return nil, &hgparse.ParseError{Msg: "unknown identifier: " + name.Value, Pos: -1,
		Hint: hgparse.SimilarityHint(hgparse.Similar(names, name.Value))}
}

func (ev *Evaluator) fullEval(x *hgparse.Node) (*set, error) {
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	return ev.eval(full, x, defineOrder)
}

func fAll(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if _, err := getArgs(x, 0, 0, "all takes no arguments"); err != nil {
		return nil, err
	}
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	return subset.and(full), nil
}

func fNone(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if _, err := getArgs(x, 0, 0, "none takes no arguments"); err != nil {
		return nil, err
	}
	return newSet(nil, false), nil
}

func fNot(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	o, err := ev.eval(subset, x, anyOrder)
	if err != nil {
		return nil, err
	}
	return subset.minus(o), nil
}

func depthArgs(x *hgparse.Node, name string) (*hgparse.Node, int, int, error) {
	a, err := hgparse.BuildArgs(hgparse.List(x), name, hgparse.SplitArgSpec("set depth startdepth"), "keyvalue", "symbol")
	if err != nil {
		return nil, 0, 0, err
	}
	set, ok := a.Named["set"]
	if !ok {
		return nil, 0, 0, hgparse.Errorf("%s takes at least 1 argument", name)
	}
	start, stop := -1, -1
	if s, ok := a.Named["startdepth"]; ok {
		n, err := getInteger(s, name+" expects an integer startdepth")
		if err != nil {
			return nil, 0, 0, err
		}
		if n < 0 {
			return nil, 0, 0, hgparse.Errorf("negative startdepth")
		}
		start = n
	}
	if d, ok := a.Named["depth"]; ok {
		n, err := getInteger(d, name+" expects an integer depth")
		if err != nil {
			return nil, 0, 0, err
		}
		if n < 0 {
			return nil, 0, 0, hgparse.Errorf("negative depth")
		}
		stop = n
	}
	return set, start, stop, nil
}

func fAncestors(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	arg, start, depth, err := depthArgs(x, "ancestors")
	if err != nil {
		return nil, err
	}
	if start >= 0 {
		return nil, &UnsupportedError{"ancestors(startdepth=)"}
	}
	heads, err := ev.fullEval(arg)
	if err != nil {
		return nil, err
	}
	return subset.and(memberSet(ev.ancestors(heads.revs, depth))), nil
}

func fDescendants(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	arg, start, depth, err := depthArgs(x, "descendants")
	if err != nil {
		return nil, err
	}
	if start >= 0 {
		return nil, &UnsupportedError{"descendants(startdepth=)"}
	}
	roots, err := ev.fullEval(arg)
	if err != nil {
		return nil, err
	}
	return subset.and(memberSet(ev.descendants(roots.revs, depth))), nil
}

func (ev *Evaluator) headsOf(revs []int) map[int]bool {
	h := map[int]bool{}
	for _, r := range revs {
		h[r] = true
	}
	delete(h, revlog.NullRev)
	for _, r := range revs {
		p1, p2 := ev.r.Parents(r)
		delete(h, p1)
		delete(h, p2)
	}
	return h
}

func fHeads(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	if ord == defineOrder {
		ord = followOrder
	}
	full, err := ev.full()
	if err != nil {
		return nil, err
	}
	in, err := ev.eval(full, x, ord)
	if err != nil {
		return nil, err
	}
	return subset.and(memberSet(ev.headsOf(in.revs))), nil
}

func fRoots(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	s, err := ev.fullEval(x)
	if err != nil {
		return nil, err
	}
	roots := s.filter(func(r int) bool {
		p1, p2 := ev.r.Parents(r)
		return !(p1 >= 0 && s.has(p1)) && !(p2 >= 0 && s.has(p2))
	})
	return subset.and(roots), nil
}

func fChildren(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	s, err := ev.fullEval(x)
	if err != nil {
		return nil, err
	}
	if len(s.revs) == 0 {
		return newSet(nil, false), nil
	}
	minrev := s.revs[0]
	for _, r := range s.revs {
		minrev = min(minrev, r)
	}
	return subset.filter(func(r int) bool {
		if r <= minrev {
			return false
		}
		p1, p2 := ev.r.Parents(r)
		return p1 != revlog.NullRev && s.has(p1) || p2 != revlog.NullRev && s.has(p2)
	}), nil
}

func fParent(which int) predicate {
	return func(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
		if x == nil {
			p, err := ev.r.WorkingParent()
			if err != nil {
				return nil, err
			}
			if which == 2 {
				return nil, &UnsupportedError{"p2() of the working directory"}
			}
			if p >= 0 {
				return subset.and(newSet([]int{p}, false)), nil
			}
			return newSet(nil, false), nil
		}
		return ev.parentsOf(subset, x, func(r int) []int {
			p1, p2 := ev.r.Parents(r)
			switch which {
			case 1:
				return []int{p1}
			case 2:
				return []int{p2}
			}
			return []int{p1, p2}
		})
	}
}

func fMinMax(isMax bool) predicate {
	return func(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
		s, err := ev.fullEval(x)
		if err != nil {
			return nil, err
		}
		if len(s.revs) == 0 {
			return newSet(nil, false), nil
		}
		m := s.revs[0]
		for _, r := range s.revs {
			if isMax && r > m || !isMax && r < m {
				m = r
			}
		}
		if subset.has(m) {
			return newSet([]int{m}, false), nil
		}
		return newSet(nil, false), nil
	}
}

func fRev(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	s, err := getString(x, "rev requires a number")
	if err != nil {
		return nil, err
	}
	n, err := getInteger(hgparse.Leaf("string", s, 0), "rev expects a number")
	if err != nil {
		return nil, err
	}
	if n >= ev.n || n < -1 || n >= 0 && ev.r.Hidden(n) {
		return newSet(nil, false), nil
	}
	return subset.and(newSet([]int{n}, false)), nil
}

func fID(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	args, err := getArgs(x, 1, 1, "id requires one argument")
	if err != nil {
		return nil, err
	}
	n, err := getString(args[0], "id requires a string")
	if err != nil {
		return nil, err
	}
	rev := -2
	if len(n) == 40 {
		if node, err := revlog.ParseNode(n); err == nil {
			if r, ok := ev.r.Changelog().Rev(node); ok {
				rev = r
			}
		}
	} else if n != "" && len(n) < 40 && strings.Trim(n, "0123456789abcdef") == "" {
		if r, err := ev.r.Changelog().LookupPrefix(n); err == nil {
			rev = r
		}
	}
	if rev < 0 || ev.r.Hidden(rev) {
		return newSet(nil, false), nil
	}
	return subset.and(newSet([]int{rev}, false)), nil
}

func fMerge(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if _, err := getArgs(x, 0, 0, "merge takes no arguments"); err != nil {
		return nil, err
	}
	return subset.filter(func(r int) bool { _, p2 := ev.r.Parents(r); return p2 != revlog.NullRev }), nil
}

func phasePred(name string, p repo.Phase) predicate {
	return func(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
		if _, err := getArgs(x, 0, 0, name+" takes no arguments"); err != nil {
			return nil, err
		}
		return subset.filter(func(r int) bool { return r >= 0 && ev.r.Phase(r) == p }), nil
	}
}

func fNotPublic(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	return subset.filter(func(r int) bool { return r >= 0 && ev.r.Phase(r) != repo.Public }), nil
}

func fPresent(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	s, err := ev.eval(subset, x, ord)
	if err != nil && errorsAsLookup(err) {
		return newSet(nil, false), nil
	}
	return s, err
}

func fReverse(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	s, err := ev.eval(subset, x, ord)
	if err != nil {
		return nil, err
	}
	if ord == defineOrder {
		out := make([]int, len(s.revs))
		for i, r := range s.revs {
			out[len(out)-1-i] = r
		}
		return newSet(out, false), nil
	}
	return s, nil
}

func fLimit(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	a, err := hgparse.BuildArgs(hgparse.List(x), "limit", hgparse.SplitArgSpec("set n offset"), "keyvalue", "symbol")
	if err != nil {
		return nil, err
	}
	setArg, ok := a.Named["set"]
	if !ok {
		return nil, hgparse.Errorf("limit requires one to three arguments")
	}
	lim, ofs := 1, 0
	if n, ok := a.Named["n"]; ok {
		if lim, err = getInteger(n, "limit expects a number"); err != nil {
			return nil, err
		}
	}
	if lim < 0 {
		return nil, hgparse.Errorf("negative number to select")
	}
	if o, ok := a.Named["offset"]; ok {
		if ofs, err = getInteger(o, "limit expects a number"); err != nil {
			return nil, err
		}
	}
	if ofs < 0 {
		return nil, hgparse.Errorf("negative offset")
	}
	os, err := ev.fullEval(setArg)
	if err != nil {
		return nil, err
	}
	lo, hi := min(ofs, len(os.revs)), min(ofs+lim, len(os.revs))
	ls := newSet(append([]int(nil), os.revs[lo:hi]...), false)
	if ord == followOrder && lim > 1 {
		return subset.and(ls), nil
	}
	return ls.and(subset), nil
}

func fLast(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	l, err := getArgs(x, 1, 2, "last requires one or two arguments")
	if err != nil {
		return nil, err
	}
	lim := 1
	if len(l) == 2 {
		if lim, err = getInteger(l[1], "last expects a number"); err != nil {
			return nil, err
		}
	}
	if lim < 0 {
		return nil, hgparse.Errorf("negative number to select")
	}
	os, err := ev.fullEval(l[0])
	if err != nil {
		return nil, err
	}
	n := len(os.revs)
	ls := newSet(append([]int(nil), os.revs[max(n-lim, 0):]...), false)
	if ord == followOrder && lim > 1 {
		return subset.and(ls), nil
	}
	return ls.and(subset), nil
}

func fSort(ev *Evaluator, subset *set, x *hgparse.Node, ord order) (*set, error) {
	a, err := hgparse.BuildArgs(hgparse.List(x), "sort", hgparse.SplitArgSpec("set keys topo.firstbranch random.seed"), "keyvalue", "symbol")
	if err != nil {
		return nil, err
	}
	setArg, ok := a.Named["set"]
	if !ok {
		return nil, hgparse.Errorf("sort requires one or two arguments")
	}
	keys := "rev"
	if k, ok := a.Named["keys"]; ok {
		if keys, err = getString(k, "sort spec must be a string"); err != nil {
			return nil, err
		}
	}
	type keyflag struct {
		k   string
		rev bool
	}
	var kf []keyflag
	for _, k := range strings.Fields(keys) {
		fk := k
		rev := strings.HasPrefix(k, "-")
		k = strings.TrimPrefix(k, "-")
		switch k {
		case "rev", "branch", "desc", "user", "author", "date", "node":
		case "topo", "random":
			return nil, &UnsupportedError{"sort key '" + k + "'"}
		default:
			return nil, hgparse.Errorf("unknown sort key '%s'", fk)
		}
		kf = append(kf, keyflag{k, rev})
	}
	if _, ok := a.Named["topo.firstbranch"]; ok {
		return nil, hgparse.Errorf("topo.firstbranch can only be used when using the topo sort key")
	}
	s, err := ev.eval(subset, setArg, ord)
	if err != nil {
		return nil, err
	}
	if len(kf) == 0 || ord != defineOrder {
		return s, nil
	}
	revs := append([]int(nil), s.revs...)
	if len(kf) == 1 && kf[0].k == "rev" {
		sort.Ints(revs)
		if kf[0].rev {
			sort.Sort(sort.Reverse(sort.IntSlice(revs)))
		}
		return newSet(revs, false), nil
	}
	var ferr error
	for i := len(kf) - 1; i >= 0; i-- {
		k := kf[i]
		less := func(a, b int) int {
			if k.k == "date" || k.k == "rev" {
				var x, y int64
				if k.k == "rev" {
					x, y = int64(a), int64(b)
				} else {
					ca, e1 := ev.changeset(a)
					cb, e2 := ev.changeset(b)
					if e1 != nil || e2 != nil {
						ferr = firstErr(e1, e2)
						return 0
					}
					x, y = ca.Time, cb.Time
				}
				switch {
				case x < y:
					return -1
				case x > y:
					return 1
				}
				return 0
			}
			sa, e1 := ev.sortString(a, k.k)
			sb, e2 := ev.sortString(b, k.k)
			if e1 != nil || e2 != nil {
				ferr = firstErr(e1, e2)
				return 0
			}
			return strings.Compare(sa, sb)
		}
		sort.SliceStable(revs, func(i, j int) bool {
			c := less(revs[i], revs[j])
			if k.rev {
				return c > 0
			}
			return c < 0
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	return newSet(revs, false), nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (ev *Evaluator) sortString(rev int, key string) (string, error) {
	if key == "node" {
		n := ev.r.Node(rev)
		return string(n[:]), nil
	}
	c, err := ev.changeset(rev)
	if err != nil {
		return "", err
	}
	switch key {
	case "branch":
		return c.Branch(), nil
	case "desc":
		return c.Description, nil
	}
	return c.User, nil
}

// matchField filters subset by a changeset field.
func (ev *Evaluator) matchField(subset *set, field func(*revlog.Changeset) []string, match func(string) bool) (*set, error) {
	return subset.filterErr(func(r int) (bool, error) {
		c, err := ev.changeset(r)
		if err != nil {
			return false, err
		}
		for _, f := range field(c) {
			if match(f) {
				return true, nil
			}
		}
		return false, nil
	})
}

func fUser(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	n, err := getString(x, "author requires a string")
	if err != nil {
		return nil, err
	}
	m, err := substringMatcher(n, false)
	if err != nil {
		return nil, err
	}
	return ev.matchField(subset, func(c *revlog.Changeset) []string { return []string{c.User} }, m)
}

func fDesc(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	n, err := getString(x, "desc requires a string")
	if err != nil {
		return nil, err
	}
	m, err := substringMatcher(n, false)
	if err != nil {
		return nil, err
	}
	return ev.matchField(subset, func(c *revlog.Changeset) []string { return []string{c.Description} }, m)
}

func fKeyword(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	n, err := getString(x, "keyword requires a string")
	if err != nil {
		return nil, err
	}
	kw := lower(n)
	return ev.matchField(subset, func(c *revlog.Changeset) []string {
		return append(append([]string(nil), c.Files...), c.User, c.Description)
	}, func(s string) bool { return strings.Contains(lower(s), kw) })
}

func fClosed(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if _, err := getArgs(x, 0, 0, "closed takes no arguments"); err != nil {
		return nil, err
	}
	return subset.filterErr(func(r int) (bool, error) {
		c, err := ev.changeset(r)
		if err != nil {
			return false, err
		}
		_, ok := c.Extra["close"]
		return ok, nil
	})
}

func fHead(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if _, err := getArgs(x, 0, 0, "head takes no arguments"); err != nil {
		return nil, err
	}
	bs, err := ev.r.Branches()
	if err != nil {
		return nil, err
	}
	m := map[int]bool{}
	for _, b := range bs {
		for _, h := range b.Heads {
			m[h] = true
		}
	}
	return subset.and(memberSet(m)), nil
}

func (ev *Evaluator) branchOf(r int) (string, error) {
	c, err := ev.changeset(r)
	if err != nil {
		return "", err
	}
	return c.Branch(), nil
}

func fBranch(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if b, err := getString(x, ""); err == nil {
		kind, pat, match, err := stringMatcher(b, true)
		if err != nil {
			return nil, err
		}
		if kind == "literal" {
			bs, err := ev.r.Branches()
			if err != nil {
				return nil, err
			}
			for _, br := range bs {
				if br.Name == pat {
					return ev.filterBranch(subset, match)
				}
			}
			if strings.HasPrefix(b, "literal:") {
				return nil, &LookupError{"branch '" + pat + "' does not exist"}
			}
		} else {
			return ev.filterBranch(subset, match)
		}
	}
	s, err := ev.fullEval(x)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, r := range s.revs {
		b, err := ev.branchOf(r)
		if err != nil {
			return nil, err
		}
		names[b] = true
	}
	return subset.filterErr(func(r int) (bool, error) {
		if s.has(r) {
			return true, nil
		}
		b, err := ev.branchOf(r)
		return names[b], err
	})
}

func (ev *Evaluator) filterBranch(subset *set, match func(string) bool) (*set, error) {
	return subset.filterErr(func(r int) (bool, error) {
		b, err := ev.branchOf(r)
		return match(b), err
	})
}

func fBookmark(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	args, err := getArgs(x, 0, 1, "bookmark takes one or no arguments")
	if err != nil {
		return nil, err
	}
	bms, err := ev.r.Bookmarks()
	if err != nil {
		return nil, err
	}
	m := map[int]bool{}
	add := func(n revlog.Node) error {
		if n == revlog.NullNode {
			return nil
		}
		r, ok := ev.r.Changelog().Rev(n)
		if !ok {
			return &repo.LookupError{Symbol: n.String(), Err: repo.ErrUnknownRevision}
		}
		m[r] = true
		return nil
	}
	if len(args) == 0 {
		for _, n := range bms {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	} else {
		bm, err := getString(args[0], "the argument to bookmark must be a string")
		if err != nil {
			return nil, err
		}
		kind, pat, match, err := stringMatcher(bm, true)
		if err != nil {
			return nil, err
		}
		if kind == "literal" {
			if bm == pat && pat == "." {
				if a, err := ev.r.ActiveBookmark(); err == nil && a != "" {
					pat = a
				}
			}
			n, ok := bms[pat]
			if !ok {
				return nil, &LookupError{"bookmark '" + pat + "' does not exist"}
			}
			if err := add(n); err != nil {
				return nil, err
			}
		} else {
			for name, n := range bms {
				if match(name) {
					if err := add(n); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	delete(m, revlog.NullRev)
	return subset.and(memberSet(m)), nil
}

func fTag(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	args, err := getArgs(x, 0, 1, "tag takes one or no arguments")
	if err != nil {
		return nil, err
	}
	tags, err := ev.r.Tags()
	if err != nil {
		return nil, err
	}
	m := map[int]bool{}
	if len(args) == 0 {
		for name, n := range tags {
			if name != "tip" {
				if r, ok := ev.r.Changelog().Rev(n); ok {
					m[r] = true
				}
			}
		}
	} else {
		p, err := getString(args[0], "the argument to tag must be a string")
		if err != nil {
			return nil, err
		}
		kind, pat, match, err := stringMatcher(p, true)
		if err != nil {
			return nil, err
		}
		if kind == "literal" {
			n, ok := tags[pat]
			if !ok {
				return nil, &LookupError{"tag '" + pat + "' does not exist"}
			}
			if r, ok := ev.r.Changelog().Rev(n); ok {
				m[r] = true
			}
		} else {
			for name, n := range tags {
				if match(name) {
					if r, ok := ev.r.Changelog().Rev(n); ok {
						m[r] = true
					}
				}
			}
		}
	}
	return subset.and(memberSet(m)), nil
}

func fOnly(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	args, err := getArgs(x, 1, 2, "only takes one or two arguments")
	if err != nil {
		return nil, err
	}
	include, err := ev.fullEval(args[0])
	if err != nil {
		return nil, err
	}
	var exclude []int
	if len(args) == 1 {
		if len(include.revs) == 0 {
			return newSet(nil, false), nil
		}
		desc := ev.descendants(include.revs, -1)
		heads, err := ev.r.Heads()
		if err != nil {
			return nil, err
		}
		for _, h := range heads {
			if !desc[h] && !include.has(h) {
				exclude = append(exclude, h)
			}
		}
	} else {
		ex, err := ev.fullEval(args[1])
		if err != nil {
			return nil, err
		}
		exclude = ex.revs
	}
	inc := ev.ancestors(include.revs, -1)
	exc := ev.ancestors(exclude, -1)
	for r := range exc {
		delete(inc, r)
	}
	return subset.and(memberSet(inc)), nil
}

func fFile(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	pat, err := getString(x, "file requires a pattern")
	if err != nil {
		return nil, err
	}
	m, err := FileMatcher([]string{pat}, ev.opts.Cwd)
	if err != nil {
		return nil, err
	}
	return ev.matchField(subset, func(c *revlog.Changeset) []string { return c.Files }, m)
}
