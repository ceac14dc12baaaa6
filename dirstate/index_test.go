package dirstate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// An Index answers as Map's map does, whatever the order of the entries
// and of the questions: in path order, backwards, at random, and for
// paths the dirstate lacks (before the first entry, between two, after
// the last).
func TestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := rng.IntN(40)
		var d Dirstate
		for i := range n {
			d.Entries = append(d.Entries, Entry{Path: fmt.Sprintf("d%d/f%03d", rng.IntN(3), i*2+1), Size: int32(i)})
		}
		if round%3 != 0 {
			slices.SortFunc(d.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
		}
		if round%7 == 0 && n > 1 {
			d.Entries[n-1].Path = d.Entries[0].Path // a path twice: the last wins
		}
		m := d.Map()
		var qs []string
		for _, e := range d.Entries {
			qs = append(qs, e.Path, e.Path+"x", e.Path[:len(e.Path)-1])
		}
		qs = append(qs, "", "a", "zzz")
		orders := [][]string{slices.Sorted(slices.Values(qs)), qs}
		back := slices.Clone(orders[0])
		slices.Reverse(back)
		shuffled := slices.Clone(qs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		orders = append(orders, back, shuffled)
		for k, order := range orders {
			x := d.Index()
			for _, q := range order {
				got, gok := x.Get(q)
				want, wok := m[q]
				if gok != wok || got != want {
					t.Fatalf("round %d, order %d: Get(%q) = %v, %t; the map has %v, %t\nentries %v", round, k, q, got, gok, want, wok, d.Entries)
				}
			}
		}
	}
}
