package repo

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/hgfs/hgfs/revlog"
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
// by name. On first use it takes each visible changeset's branch from
// hg's revision branch cache where the cache vouches for it, else reads
// the changeset.
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
	rbc := r.readRevBranchCache(n)
	for rev := 0; rev < n; rev++ {
		if m.hidden[rev] {
			continue
		}
		if name, close, ok := rbc.info(rev, r.cl.Node(rev)); ok {
			branchOf[rev], closed[rev] = name, close
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

// The revision branch cache hg keeps in .hg/cache (mercurial/branching/
// rev_cache.py in hg 7, branchmap.py revbranchcache in hg 6): rbc-names
// holds the branch names, NUL-separated, and rbc-revs one 8-byte record
// per revision, the first 4 bytes of its node and the index of its branch
// name with the top bit set when the changeset closes its branch. hg 7
// writes "-v2" files and reads "-v1" ones when it has no v2; hg 6 writes
// and reads "-v1". The record format is the same.
//
// hg uses a record only while it agrees with the changelog, and so does
// this: a record of zeros is no record; a node prefix that differs from
// the changeset's means history was rewritten from there, and hg drops
// the records from that revision on; an index past the names means the
// cache is damaged, and hg drops all of it. Either way the changesets
// are read. Without the cache, Branches read every changeset: `hgfs log
// -r SPEC` looks the whole spec up as a symbol first, as hg's tokenizer
// does, and a branch lookup read the 2,971 changesets of the real-history
// corpus (a third of the command's CPU) that hg answers from this cache.
const (
	rbcRecordSize = 8
	rbcNodeLen    = 4
	rbcCloseFlag  = 0x80000000
	rbcIndexMask  = 0x7FFFFFFF
	// maxRBCNames bounds the names file read: the cache is a cache, and
	// a larger one is ignored.
	maxRBCNames = 64 << 20
)

// revBranchCache is the part of hg's revision branch cache that agrees
// with the changelog so far (see above).
type revBranchCache struct {
	names []string
	revs  []byte
	valid int // records before this revision may be used
}

// readRevBranchCache reads the cache for a changelog of n revisions,
// "-v2" first as hg 7 does, else "-v1". A cache that cannot be read is
// no cache.
func (r *Repo) readRevBranchCache(n int) *revBranchCache {
	for _, v := range []string{"-v2", "-v1"} {
		names, err := r.readHead("cache/rbc-names"+v, maxRBCNames+1)
		if err != nil || names == nil {
			continue
		}
		c := &revBranchCache{}
		if len(names) > maxRBCNames {
			return c
		}
		if len(names) > 0 {
			for _, name := range bytes.Split(names, []byte{0}) {
				c.names = append(c.names, string(name))
			}
		}
		if n > 0 && len(c.names) > 0 {
			revs, err := r.readHead("cache/rbc-revs"+v, int64(n)*rbcRecordSize)
			if err == nil {
				c.revs = revs[:len(revs)/rbcRecordSize*rbcRecordSize]
			}
		}
		c.valid = len(c.revs) / rbcRecordSize
		return c
	}
	return &revBranchCache{}
}

// info is rev's branch and close flag from the cache, if its record
// matches node; a record that contradicts the changelog ends the cache's
// use there, as hg truncates it.
func (c *revBranchCache) info(rev int, node revlog.Node) (name string, close, ok bool) {
	if rev >= c.valid {
		return "", false, false
	}
	rec := c.revs[rev*rbcRecordSize : (rev+1)*rbcRecordSize]
	prefix, idx := rec[:rbcNodeLen], binary.BigEndian.Uint32(rec[rbcNodeLen:])
	switch {
	case [rbcNodeLen]byte(prefix) == [rbcNodeLen]byte{}:
		return "", false, false
	case !bytes.Equal(prefix, node[:rbcNodeLen]):
		c.valid = rev
		return "", false, false
	}
	close = idx&rbcCloseFlag != 0
	idx &= rbcIndexMask
	if int64(idx) >= int64(len(c.names)) {
		c.valid = 0
		return "", false, false
	}
	return c.names[idx], close, true
}
