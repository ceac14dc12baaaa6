package repo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/revlog"
)

// Lookup errors, wrapped in *LookupError.
var (
	// ErrUnknownRevision means no changeset answers to the symbol.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrAmbiguous means a node prefix matches several changesets.
	ErrAmbiguous = errors.New("ambiguous revision identifier")
	// ErrHidden means the symbol names a hidden (obsolete) changeset.
	ErrHidden = errors.New("hidden revision")
)

// LookupError is a failed Lookup; its message is hg's.
type LookupError struct {
	Symbol string
	Err    error
	Detail string // for ErrHidden: "is pruned", "was rewritten as: 1234567890ab"
}

func (e *LookupError) Error() string {
	switch e.Err {
	case ErrAmbiguous:
		return "ambiguous revision identifier: " + e.Symbol
	case ErrHidden:
		if e.Detail != "" {
			return fmt.Sprintf("hidden revision '%s' %s", e.Symbol, e.Detail)
		}
		return fmt.Sprintf("hidden revision '%s'", e.Symbol)
	}
	return fmt.Sprintf("unknown revision '%s'", e.Symbol)
}

func (e *LookupError) Unwrap() error { return e.Err }

// Hint is the hint line hg prints after the error, if any.
func (e *LookupError) Hint() string {
	if e.Err == ErrHidden {
		return "use --hidden to access hidden revisions"
	}
	return ""
}

// Lookup resolves a single revision symbol to a rev as
// mercurial/scmutil.py revsymbol does on the visible repository.
func (r *Repo) Lookup(symbol string) (int, error) {
	m, err := r.getMeta()
	if err != nil {
		return 0, err
	}
	rev, err := r.lookupUnfiltered(m, symbol)
	if err != nil {
		return 0, err
	}
	if rev >= 0 && m.hidden[rev] {
		return 0, r.hiddenError(m, symbol, rev)
	}
	return rev, nil
}

func (r *Repo) lookupUnfiltered(m *meta, symbol string) (int, error) {
	n := r.cl.Len()
	switch symbol {
	case "null":
		return revlog.NullRev, nil
	case "tip":
		return m.tip, nil
	case ".":
		return r.WorkingParent()
	}
	if v, err := strconv.Atoi(symbol); err == nil && strconv.Itoa(v) == symbol {
		if v < 0 {
			v += n
		}
		if v >= 0 && v < n {
			return v, nil
		}
		if v == -1 {
			return revlog.NullRev, nil
		}
	}
	if len(symbol) == 40 {
		if node, err := revlog.ParseNode(symbol); err == nil {
			if rev, ok := r.rev(node); ok {
				return rev, nil
			}
			if node == revlog.NullNode {
				return revlog.NullRev, nil
			}
		}
	}
	if node, ok := m.bookmarks[symbol]; ok {
		if rev, ok := r.rev(node); ok {
			return rev, nil
		}
	}
	tm, err := r.getTags()
	if err != nil {
		return 0, err
	}
	if node, ok := tm.tags[symbol]; ok {
		if rev, ok := r.rev(node); ok {
			return rev, nil
		}
	}
	if rev, ok, err := r.branchTip(symbol); err != nil {
		return 0, err
	} else if ok {
		return rev, nil
	}
	if rev, err := r.prefixMatch(symbol); err != nil {
		return 0, err
	} else if rev != notFound {
		return rev, nil
	}
	return 0, &LookupError{Symbol: symbol, Err: ErrUnknownRevision}
}

const notFound = -2

// prefixMatch resolves a hex node prefix over every changeset (hidden ones
// included, as hg's _partialmatch does) and the null node.
func (r *Repo) prefixMatch(symbol string) (int, error) {
	prefix := strings.TrimPrefix(symbol, "x")
	if symbol == "" || len(prefix) > 40 || strings.Trim(prefix, "0123456789abcdef") != "" {
		return notFound, nil
	}
	if prefix == "" { // "x": every node matches
		if r.cl.Len() > 0 {
			return 0, &LookupError{Symbol: symbol, Err: ErrAmbiguous}
		}
		return revlog.NullRev, nil
	}
	rev, err := r.cl.LookupPrefix(prefix)
	switch {
	case errors.Is(err, revlog.ErrAmbiguous):
		return 0, &LookupError{Symbol: symbol, Err: ErrAmbiguous}
	case errors.Is(err, revlog.ErrNotFound):
		return notFound, nil
	case err != nil:
		return 0, err
	}
	return rev, nil
}

// branchTip returns the tipmost open visible head of branch (the tipmost
// head if all are closed), as localrepo.branchtip does.
func (r *Repo) branchTip(branch string) (int, bool, error) {
	b, err := r.branch(branch)
	if b == nil || err != nil {
		return 0, false, err
	}
	return b.Tip, true, nil
}

// hiddenError explains why rev is hidden, as obsutil._getfilteredreason.
func (r *Repo) hiddenError(m *meta, symbol string, rev int) error {
	node := r.Node(rev)
	e := &LookupError{Symbol: symbol, Err: ErrHidden}
	if m.pruned[node] && m.succs[node] == nil {
		e.Detail = "is pruned"
		return e
	}
	// Follow single-successor rewrites to a live changeset.
	cur, seen := node, map[revlog.Node]bool{}
	for !seen[cur] {
		seen[cur] = true
		s := m.succs[cur]
		if len(s) != 1 {
			break
		}
		cur = s[0]
		if crev, ok := r.rev(cur); ok && !m.obsolete[crev] {
			e.Detail = "was rewritten as: " + cur.Short()
			break
		}
	}
	return e
}

// LookupRange resolves a revision argument as hg log -r would for the
// forms hgfs supports: a symbol, or "A:B" / ":B" / "A:" (inclusive,
// ascending or descending). Hidden revisions inside a range are skipped.
func (r *Repo) LookupRange(spec string) ([]int, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	rev, err := r.Lookup(spec)
	if err == nil {
		return []int{rev}, nil
	}
	var le *LookupError
	if !errors.As(err, &le) || le.Err != ErrUnknownRevision {
		return nil, err
	}
	a, b, isRange := strings.Cut(spec, ":")
	if !isRange || strings.Contains(b, ":") {
		if parts := strings.Split(spec, "-"); len(parts) > 1 && !slices.Contains(parts, "") {
			// hg's revset tokenizer splits an unknown "a-b" at the "-"
			// and reports the first operand it cannot resolve.
			for _, part := range parts {
				if _, perr := r.Lookup(part); perr != nil {
					return nil, perr
				}
			}
		}
		return nil, err
	}
	start, end := 0, m.tip
	if a != "" {
		if start, err = r.Lookup(a); err != nil {
			return nil, err
		}
	}
	if b != "" {
		if end, err = r.Lookup(b); err != nil {
			return nil, err
		}
	}
	var revs []int
	step := 1
	if start > end {
		step = -1
	}
	for rev := start; ; rev += step {
		if rev < 0 || !m.hidden[rev] {
			revs = append(revs, rev)
		}
		if rev == end {
			break
		}
	}
	return revs, nil
}
