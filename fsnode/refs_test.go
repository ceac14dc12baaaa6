package fsnode

import (
	"math/rand/v2"
	"testing"
)

// TestRefTableAgainstMap runs random Put, Take, Drop and Get against a
// map, over dense and sparse inode numbers, with counts on both sides of 255, so that chunks pass
// from array to dense and are dropped when empty.
func TestRefTableAgainstMap(t *testing.T) {
	for _, span := range []uint64{3 * refArrayMax, 1 << 20, 1 << 40} {
		r := rand.New(rand.NewPCG(span, 7))
		tab := newRefTable()
		model := map[Ino]uint64{}
		ino := func() Ino { return Ino(r.Uint64N(span)) }
		for i := range 200_000 {
			x := ino()
			switch op := r.IntN(10); {
			case op < 5:
				if _, ok := model[x]; ok {
					break
				}
				n := uint64(1)
				switch r.IntN(8) {
				case 0:
					n = r.Uint64N(5)
				case 1:
					n = 250 + r.Uint64N(10)
				}
				tab.Put(x, n)
				if n > 0 {
					model[x] = n
				}
			case op < 7:
				n := r.Uint64N(3)
				if r.IntN(20) == 0 {
					n = r.Uint64N(300)
				}
				tab.Drop(x, n)
				if have, ok := model[x]; ok && n > 0 {
					if n >= have {
						delete(model, x)
					} else {
						model[x] = have - n
					}
				}
			case op < 8:
				if got, want := tab.Take(x), model[x]; got != want {
					t.Fatalf("span %d op %d: Take(%d) = %d, want %d", span, i, x, got, want)
				}
				delete(model, x)
			default:
				if got, want := tab.Get(x), model[x]; got != want {
					t.Fatalf("span %d op %d: Get(%d) = %d, want %d", span, i, x, got, want)
				}
			}
			// Len sums the chunks, one per inode number at the
			// sparsest span: checked at every op, it took this test
			// over 20 minutes under the race detector.
			if i%1000 == 0 && tab.Len() != len(model) {
				t.Fatalf("span %d op %d: Len %d, want %d", span, i, tab.Len(), len(model))
			}
		}
		if tab.Len() != len(model) {
			t.Fatalf("span %d: Len %d, want %d", span, tab.Len(), len(model))
		}
		for x, n := range model {
			if got := tab.Get(x); got != n {
				t.Fatalf("span %d: Get(%d) = %d, want %d", span, x, got, n)
			}
		}
		dense := 0
		for hi, c := range tab.small {
			if c.n == 0 {
				t.Fatalf("span %d: empty chunk %d kept", span, hi)
			}
			if c.dense != nil {
				dense++
			}
		}
		if span == 3*refArrayMax && dense == 0 {
			t.Errorf("span %d: no chunk became dense", span)
		}
		for x := range model {
			tab.Take(x)
		}
		if tab.Len() != 0 || len(tab.small) != 0 || len(tab.large) != 0 {
			t.Fatalf("span %d: after taking all, Len %d, %d chunks, %d counts", span, tab.Len(), len(tab.small), len(tab.large))
		}
	}
}
