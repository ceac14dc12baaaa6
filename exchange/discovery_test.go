package exchange

import (
	"context"
	"crypto/sha1"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hgfs/hgfs/revlog"
)

// memGraph is a changelog graph in memory.
type memGraph struct {
	parents [][2]int
	nodes   []revlog.Node
	revs    map[revlog.Node]int
}

func (g *memGraph) Len() int { return len(g.parents) }
func (g *memGraph) Entry(r int) revlog.Entry {
	return revlog.Entry{P1: g.parents[r][0], P2: g.parents[r][1], Node: g.nodes[r]}
}
func (g *memGraph) Rev(n revlog.Node) (int, bool) { r, ok := g.revs[n]; return r, ok }
func (g *memGraph) Node(r int) revlog.Node        { return g.nodes[r] }

// randomDAG makes n revisions with branches and merges; node i is
// derived from its label so two graphs can share revisions.
func randomDAG(rng *rand.Rand, n int) *memGraph {
	g := &memGraph{revs: map[revlog.Node]int{}}
	for r := 0; r < n; r++ {
		p1, p2 := r-1, -1
		if r > 0 && rng.IntN(5) == 0 {
			p1 = rng.IntN(r) // a branch point
		}
		if r > 2 && rng.IntN(8) == 0 {
			p2 = rng.IntN(r - 1)
			if p2 == p1 {
				p2 = -1
			}
		}
		g.parents = append(g.parents, [2]int{p1, p2})
		n := revlog.Node(sha1.Sum([]byte{byte(r), byte(r >> 8), byte(r >> 16)}))
		g.nodes = append(g.nodes, n)
		g.revs[n] = r
	}
	return g
}

// subset keeps the revisions in keep (closed under ancestors) as a new
// graph with the same nodes.
func subset(g *memGraph, keep []bool) *memGraph {
	s := &memGraph{revs: map[revlog.Node]int{}}
	old2new := map[int]int{-1: -1}
	for r := 0; r < g.Len(); r++ {
		if !keep[r] {
			continue
		}
		p := g.parents[r]
		s.parents = append(s.parents, [2]int{old2new[p[0]], old2new[p[1]]})
		s.nodes = append(s.nodes, g.nodes[r])
		old2new[r] = len(s.nodes) - 1
		s.revs[g.nodes[r]] = old2new[r]
	}
	return s
}

func ancestorsClosed(g *memGraph, pick []bool) []bool {
	out := append([]bool(nil), pick...)
	for r := g.Len() - 1; r >= 0; r-- {
		if out[r] {
			for _, p := range g.parents[r] {
				if p >= 0 {
					out[p] = true
				}
			}
		}
	}
	return out
}

// fakeRemote answers heads and known from a graph.
type fakeRemote struct {
	g       *memGraph
	queries int
}

func (f *fakeRemote) Heads(context.Context) ([]string, error) {
	var out []string
	for r := range headSetOf(f.g) {
		out = append(out, f.g.nodes[r].String())
	}
	sort.Strings(out)
	return out, nil
}

func (f *fakeRemote) Known(_ context.Context, nodes []string) ([]bool, error) {
	f.queries++
	out := make([]bool, len(nodes))
	for i, h := range nodes {
		n, err := parseHex(h)
		if err != nil {
			return nil, err
		}
		_, out[i] = f.g.revs[n]
	}
	return out, nil
}

func headSetOf(g graph) map[int]bool {
	has := make([]bool, g.Len())
	for r := 0; r < g.Len(); r++ {
		e := g.Entry(r)
		if e.P1 >= 0 {
			has[e.P1] = true
		}
		if e.P2 >= 0 {
			has[e.P2] = true
		}
	}
	out := map[int]bool{}
	for r := range has {
		if !has[r] {
			out[r] = true
		}
	}
	return out
}

// TestFindCommon checks discovery on random graphs where local and remote
// each hold an ancestor-closed part of one history: the common heads must
// be exactly the heads of the intersection, and Incoming must say whether
// the remote has anything local lacks.
func TestFindCommon(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		full := randomDAG(rng, 50+rng.IntN(600))
		pickL := make([]bool, full.Len())
		pickR := make([]bool, full.Len())
		for r := range pickL {
			pickL[r] = rng.IntN(12) == 0
			pickR[r] = rng.IntN(12) == 0
		}
		if seed%5 == 0 {
			for r := range pickL {
				pickL[r] = false // an empty local repository
			}
		}
		keepL, keepR := ancestorsClosed(full, pickL), ancestorsClosed(full, pickR)
		local, remoteG := subset(full, keepL), subset(full, keepR)
		remote := &fakeRemote{g: remoteG}
		res, err := FindCommon(context.Background(), local, remote)
		if err != nil {
			t.Fatal(err)
		}
		both := make([]bool, full.Len())
		incoming := false
		for r := range both {
			both[r] = keepL[r] && keepR[r]
			if keepR[r] && !keepL[r] {
				incoming = true
			}
		}
		var want []string
		for r := range headSetOf(subset(full, both)) {
			want = append(want, subset(full, both).nodes[r].String())
		}
		got := append([]string(nil), res.Common...)
		sort.Strings(want)
		sort.Strings(got)
		if len(want) != len(got) {
			t.Fatalf("seed %d: common heads %d, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("seed %d: common heads differ", seed)
			}
		}
		if res.Incoming != incoming {
			t.Errorf("seed %d: incoming %v, want %v", seed, res.Incoming, incoming)
		}
		if remote.queries != res.Rounds || (local.Len() > 0 && res.Rounds == 0 && len(res.RemoteHeads) > 0 && incoming) {
			t.Errorf("seed %d: %d known queries, %d rounds", seed, remote.queries, res.Rounds)
		}
	}
}
