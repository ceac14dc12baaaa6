package wireproto

// The repository as a server shows it: hg serves the "served" view
// (repoview.py filtertable), which hides obsolete-and-hidden changesets
// and secret ones (with their descendants, which are secret too).

import (
	"encoding/hex"
	"strings"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// view is one request's look at the repository.
type view struct {
	r      *repo.Repo
	served []bool // by rev
	n      int
}

func (s *Server) open() (*view, error) {
	r, err := repo.Open(s.root)
	if err != nil {
		return nil, err
	}
	r.Store.Walkers = s.cfg.StoreWalkers
	n := r.Changelog().Len()
	v := &view{r: r, n: n, served: make([]bool, n)}
	vis, err := r.Visible()
	if err != nil {
		r.Close()
		return nil, err
	}
	for _, rev := range vis {
		if rev >= 0 && rev < n && r.Phase(rev) < repo.Secret {
			v.served[rev] = true
		}
	}
	return v, nil
}

func (v *view) close() { v.r.Close() }

// rev resolves a hex node in the served view.
func (v *view) rev(hexNode string) (int, bool) {
	node, err := revlog.ParseNode(hexNode)
	if err != nil {
		return 0, false
	}
	rev, ok := v.r.Changelog().Rev(node)
	if !ok || rev < 0 || rev >= v.n || !v.served[rev] {
		return 0, false
	}
	return rev, true
}

func (v *view) node(rev int) string { return v.r.Changelog().Entry(rev).Node.String() }

func (v *view) parents(rev int) (int, int) {
	e := v.r.Changelog().Entry(rev)
	return e.P1, e.P2
}

// heads returns the served heads in increasing rev order (hg's
// repo.heads() is in decreasing order of rev; see headsResponse).
func (v *view) heads() []int {
	hasChild := make([]bool, v.n)
	for rev := 0; rev < v.n; rev++ {
		if !v.served[rev] {
			continue
		}
		p1, p2 := v.parents(rev)
		for _, p := range []int{p1, p2} {
			if p >= 0 && p < v.n {
				hasChild[p] = true
			}
		}
	}
	var out []int
	for rev := 0; rev < v.n; rev++ {
		if v.served[rev] && !hasChild[rev] {
			out = append(out, rev)
		}
	}
	return out
}

// ancestors marks revs and all their ancestors.
func (v *view) ancestors(revs []int) []bool {
	seen := make([]bool, v.n)
	stack := append([]int(nil), revs...)
	for len(stack) > 0 {
		rev := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if rev < 0 || rev >= v.n || seen[rev] {
			continue
		}
		seen[rev] = true
		p1, p2 := v.parents(rev)
		stack = append(stack, p1, p2)
	}
	return seen
}

// bookmarks is bookmarks.listbinbookmarks: bookmarks whose node is in the
// served view, without local divergent ones ("name@remote").
func (v *view) bookmarks() (map[string]string, error) {
	marks, err := v.r.Bookmarks()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, node := range marks {
		if isDivergent(name) {
			continue
		}
		if _, ok := v.rev(node.String()); ok {
			out[name] = node.String()
		}
	}
	return out, nil
}

// isDivergent is bookmarks.isdivergent: "name@suffix", not "name@".
func isDivergent(name string) bool {
	return strings.Contains(name, "@") && !strings.HasSuffix(name, "@")
}

// phaseRoots reads the store's phaseroots (store.PhaseRoots) as
// phases.py does, ignoring unknown nodes: hex nodes by phase.
func (v *view) phaseRoots() (map[int][]string, error) {
	all, err := v.r.Store.ReadPhaseRoots()
	if err != nil {
		return nil, err
	}
	roots := map[int][]string{}
	for p, nodes := range all {
		for _, n := range nodes {
			if _, ok := v.r.Changelog().Rev(revlog.Node(n)); ok {
				roots[p] = append(roots[p], hex.EncodeToString(n[:]))
			}
		}
	}
	return roots, nil
}

// listPhases is phases.listphases: draft roots still draft, and
// "publishing" for a publishing repository.
func (v *view) listPhases(publishing bool) (map[string]string, error) {
	keys := map[string]string{}
	roots, err := v.phaseRoots()
	if err != nil {
		return nil, err
	}
	for _, h := range roots[int(repo.Draft)] {
		node, _ := revlog.ParseNode(h)
		if rev, ok := v.r.Changelog().Rev(node); ok && v.r.Phase(rev) <= repo.Draft {
			keys[h] = "1"
		}
	}
	if publishing {
		keys["publishing"] = "True"
	}
	return keys, nil
}

// branchHeads maps each branch to its heads in the served view (open and
// closed, as the branchmap holds them), in increasing rev order.
func (v *view) branchHeads() (map[string][]int, error) {
	branchOf := make([]string, v.n)
	hasChildSameBranch := make([]bool, v.n)
	for rev := 0; rev < v.n; rev++ {
		if !v.served[rev] {
			continue
		}
		cs, err := v.r.Changeset(rev)
		if err != nil {
			return nil, err
		}
		branchOf[rev] = cs.Branch()
	}
	for rev := 0; rev < v.n; rev++ {
		if !v.served[rev] {
			continue
		}
		p1, p2 := v.parents(rev)
		for _, p := range []int{p1, p2} {
			if p >= 0 && p < v.n && branchOf[p] == branchOf[rev] {
				hasChildSameBranch[p] = true
			}
		}
	}
	out := map[string][]int{}
	for rev := 0; rev < v.n; rev++ {
		if v.served[rev] && !hasChildSameBranch[rev] {
			out[branchOf[rev]] = append(out[branchOf[rev]], rev)
		}
	}
	return out, nil
}

func hexNodes(v *view, revs []int) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = v.node(r)
	}
	return out
}

func rawNode(h string) [20]byte {
	var n [20]byte
	hex.Decode(n[:], []byte(h))
	return n
}
