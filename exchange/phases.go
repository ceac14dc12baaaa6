package exchange

import (
	"sort"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// phaseRoots is the store's phaseroots file (store.PhaseRoots) as the
// session moves phases: per phase, the nodes that are roots of that
// phase. Lines naming unknown nodes are kept as they are (hg's
// filterunknown drops them when it writes; hg reads them harmlessly).
type phaseRoots struct {
	roots map[int]map[revlog.Node]bool
	dirty bool
}

func readPhaseRoots(st *store.Store) (*phaseRoots, error) {
	roots, err := st.ReadPhaseRoots()
	if err != nil {
		return nil, err
	}
	p := &phaseRoots{roots: map[int]map[revlog.Node]bool{}}
	for ph, nodes := range roots {
		for _, n := range nodes {
			p.add(ph, revlog.Node(n))
		}
	}
	return p, nil
}

func (p *phaseRoots) add(phase int, n revlog.Node) {
	if p.roots[phase] == nil {
		p.roots[phase] = map[revlog.Node]bool{}
	}
	p.roots[phase][n] = true
}

// format is the file's content (store.PhaseRoots.Format).
func (p *phaseRoots) format() []byte {
	roots := store.PhaseRoots{}
	for ph, nodes := range p.roots {
		for n := range nodes {
			roots[ph] = append(roots[ph], [20]byte(n))
		}
	}
	return roots.Format()
}

// graph is the changelog's parent graph.
type graph interface {
	Len() int
	Entry(rev int) revlog.Entry
	Rev(n revlog.Node) (int, bool)
	Node(rev int) revlog.Node
}

// rootRevs returns the revisions of phase ph's roots known to cl.
func (p *phaseRoots) rootRevs(cl graph, ph int) map[int]bool {
	out := map[int]bool{}
	for n := range p.roots[ph] {
		if r, ok := cl.Rev(n); ok {
			out[r] = true
		}
	}
	return out
}

// phaseOf computes every revision's phase: the highest phase among the
// roots that are ancestors of it (itself included).
func (p *phaseRoots) phaseOf(cl graph) []int {
	n := cl.Len()
	ph := make([]int, n)
	var phases []int
	for k := range p.roots {
		phases = append(phases, k)
	}
	sort.Ints(phases)
	for _, k := range phases {
		for r := range p.rootRevs(cl, k) {
			if k > ph[r] {
				ph[r] = k
			}
		}
	}
	// Revisions are topologically ordered: parents come first.
	for r := 0; r < n; r++ {
		e := cl.Entry(r)
		if e.P1 >= 0 && ph[e.P1] > ph[r] {
			ph[r] = ph[e.P1]
		}
		if e.P2 >= 0 && ph[e.P2] > ph[r] {
			ph[r] = ph[e.P2]
		}
	}
	return ph
}

// descendants returns the set of revisions descending from (or equal to)
// any of from.
func descendants(cl graph, from map[int]bool) []bool {
	n := cl.Len()
	in := make([]bool, n)
	minRev := n
	for r := range from {
		in[r] = true
		if r < minRev {
			minRev = r
		}
	}
	for r := minRev + 1; r < n; r++ {
		e := cl.Entry(r)
		if (e.P1 >= 0 && in[e.P1]) || (e.P2 >= 0 && in[e.P2]) {
			in[r] = true
		}
	}
	return in
}

// rootsOf returns the members of set whose parents are outside it
// (revset roots()).
func rootsOf(cl graph, set []bool) map[int]bool {
	out := map[int]bool{}
	for r, in := range set {
		if !in {
			continue
		}
		e := cl.Entry(r)
		if (e.P1 >= 0 && set[e.P1]) || (e.P2 >= 0 && set[e.P2]) {
			continue
		}
		out[r] = true
	}
	return out
}

func (p *phaseRoots) setRoots(cl graph, ph int, revs map[int]bool) {
	old := p.rootRevs(cl, ph)
	same := len(old) == len(revs)
	for r := range revs {
		if !old[r] {
			same = false
		}
	}
	if same {
		return
	}
	nodes := map[revlog.Node]bool{}
	// Unknown nodes are dropped, as hg's filterunknown does on write.
	for r := range revs {
		nodes[cl.Node(r)] = true
	}
	p.roots[ph] = nodes
	p.dirty = true
}

// registerNew puts new revisions in phase target (phasecache.registernew →
// _retractboundary). Public needs nothing: no root makes a revision public.
func (p *phaseRoots) registerNew(cl graph, target int, revs []int) {
	if target <= Public {
		return
	}
	phase := p.phaseOf(cl)
	var newRoots []int
	for _, r := range revs {
		if phase[r] < target {
			newRoots = append(newRoots, r)
		}
	}
	if len(newRoots) == 0 {
		return
	}
	current := p.rootRevs(cl, target)
	minNew := newRoots[0]
	for _, r := range newRoots {
		current[r] = true
		if r < minNew {
			minNew = r
		}
	}
	above := map[int]bool{}
	final := map[int]bool{}
	for r := range current {
		if r >= minNew {
			above[r] = true
		} else {
			final[r] = true
		}
	}
	for r := range rootsOf(cl, descendants(cl, above)) {
		final[r] = true
	}
	p.setRoots(cl, target, final)
}

// advance makes the ancestors of heads (included) at most phase target
// (phasecache.advanceboundary): for each phase above target, its roots
// become the roots of what descends from them minus those ancestors.
func (p *phaseRoots) advance(cl graph, target int, heads []int) {
	n := cl.Len()
	anc := make([]bool, n)
	for _, h := range heads {
		if h >= 0 && h < n {
			anc[h] = true
		}
	}
	for r := n - 1; r >= 0; r-- {
		if !anc[r] {
			continue
		}
		e := cl.Entry(r)
		if e.P1 >= 0 {
			anc[e.P1] = true
		}
		if e.P2 >= 0 {
			anc[e.P2] = true
		}
	}
	var phases []int
	for k := range p.roots {
		if k > target {
			phases = append(phases, k)
		}
	}
	sort.Ints(phases)
	// Roots that leave a phase above target without reaching public
	// become roots of target (advanceboundary's delroots, retracted).
	var delRoots []int
	for _, k := range phases {
		olds := p.rootRevs(cl, k)
		if len(olds) == 0 {
			continue
		}
		set := descendants(cl, olds)
		changed := false
		for r := range set {
			if set[r] && anc[r] {
				set[r] = false
				changed = true
			}
		}
		if !changed {
			continue
		}
		roots := rootsOf(cl, set)
		for r := range olds {
			if !roots[r] {
				delRoots = append(delRoots, r)
			}
		}
		p.setRoots(cl, k, roots)
	}
	if target != Public && len(delRoots) > 0 {
		sort.Ints(delRoots)
		p.registerNew(cl, target, delRoots)
	}
}

// AdvancePhase moves the ancestors of heads (changelog nodes; unknown ones
// are ignored, as hg filters them) to phase target, as a phase-heads part
// or a pull from a publishing server does.
func (s *Session) AdvancePhase(target int, heads []revlog.Node) {
	defer s.guard()
	var revs []int
	for _, h := range heads {
		if r, ok := s.cl.Rev(h); ok {
			revs = append(revs, r)
		}
	}
	if len(revs) > 0 {
		s.phases.advance(s.cl, target, revs)
	}
}
