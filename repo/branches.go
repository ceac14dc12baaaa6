package repo

import (
	"sort"
)

// Branch is one named branch as hg's branchmap (mercurial/branchmap.py)
// describes it over the visible changesets.
type Branch struct {
	Name   string
	Heads  []int  // visible changesets with no visible child on the branch, increasing
	Closed []bool // Closed[i]: Heads[i] closes the branch
	Tip    int    // the tipmost open head, else the tipmost head (localrepo.branchtip)
}

// AllClosed reports whether every head of the branch is closed.
func (b *Branch) AllClosed() bool {
	for _, c := range b.Closed {
		if !c {
			return false
		}
	}
	return true
}

// Branches returns every named branch with a visible changeset, sorted
// by name. It reads every visible changeset once, on first use.
func (r *Repo) Branches() ([]Branch, error) {
	r.branchOnce.Do(func() { r.branches, r.branchErr = r.loadBranches() })
	return r.branches, r.branchErr
}

func (r *Repo) loadBranches() ([]Branch, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	n := r.cl.Len()
	branchOf := make([]string, n)
	closed := make([]bool, n)
	for rev := 0; rev < n; rev++ {
		if m.hidden[rev] {
			continue
		}
		c, err := r.Changeset(rev)
		if err != nil {
			return nil, err
		}
		branchOf[rev] = c.Branch()
		_, closed[rev] = c.Extra["close"]
	}
	// A branch head has no visible child on its own branch.
	hasBranchChild := make([]bool, n)
	for rev := 0; rev < n; rev++ {
		if m.hidden[rev] {
			continue
		}
		e := r.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < n && !m.hidden[p] && branchOf[p] == branchOf[rev] {
				hasBranchChild[p] = true
			}
		}
	}
	byName := map[string]*Branch{}
	for rev := 0; rev < n; rev++ {
		if hasBranchChild[rev] || m.hidden[rev] {
			continue
		}
		b := byName[branchOf[rev]]
		if b == nil {
			b = &Branch{Name: branchOf[rev]}
			byName[b.Name] = b
		}
		b.Heads = append(b.Heads, rev)
		b.Closed = append(b.Closed, closed[rev])
	}
	out := make([]Branch, 0, len(byName))
	for _, b := range byName {
		b.Tip = b.Heads[len(b.Heads)-1]
		for i := len(b.Heads) - 1; i >= 0; i-- {
			if !b.Closed[i] {
				b.Tip = b.Heads[i]
				break
			}
		}
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// branch returns the named branch, if it has a visible changeset.
func (r *Repo) branch(name string) (*Branch, error) {
	bs, err := r.Branches()
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(bs), func(i int) bool { return bs[i].Name >= name })
	if i < len(bs) && bs[i].Name == name {
		return &bs[i], nil
	}
	return nil, nil
}

// BranchHeads returns the visible heads of a named branch in increasing
// rev order: its changesets with no visible child on the same branch.
func (r *Repo) BranchHeads(name string) ([]int, error) {
	b, err := r.branch(name)
	if b == nil || err != nil {
		return nil, err
	}
	return b.Heads, nil
}
