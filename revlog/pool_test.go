package revlog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// mixedChains builds a generaldelta revlog of n revisions of a text of
// about size bytes in chains of at most chainLen (a snapshot, then
// deltas against the previous revision), their chunks stored zlib,
// zstd and as is in turn. seed varies the texts.
func mixedChains(t testing.TB, n, size, chainLen int, inline bool, seed int) (builtRevlog, [][]byte) {
	text := bytes.Repeat([]byte(fmt.Sprintf("line %d of a text\n", seed)), size/18+1)
	revs := make([]buildRev, n)
	texts := make([][]byte, n)
	comps := []byte{'x', '(', 'u'}
	for i := range revs {
		next := bytes.Clone(text)
		p := (i*7919 + seed*31) % (len(next) - 8)
		copy(next[p:], fmt.Sprintf("%08d", i))
		if i%5 == 3 {
			next = append(next, fmt.Sprintf("grown at %d\n", i)...)
		}
		base := i - 1
		if i%chainLen == 0 {
			base = -2
		}
		revs[i] = buildRev{text: next, p1: i - 1, p2: -1, base: base, comp: comps[(i+seed)%len(comps)]}
		texts[i] = next
		text = next
	}
	return build(t, revs, inline, true), texts
}

// TestRevisionPooledBuffers checks that the pooled buffers rebuilding
// texts (a delta chain's decompression buffer, the hunk lists) never
// leak into what is returned: texts and chunks read earlier keep their
// bytes while other revlogs' chains, on other goroutines too, reuse the
// pools; with the pools on and off.
func TestRevisionPooledBuffers(t *testing.T) {
	for _, pooled := range []bool{true, false} {
		t.Run(fmt.Sprintf("pooled=%v", pooled), func(t *testing.T) {
			SetPooling(pooled)
			t.Cleanup(func() { SetPooling(true) })
			type kept struct {
				got, want []byte
				what      string
			}
			const goroutines = 4
			rls := make([][]*Revlog, goroutines)
			texts := make([][][][]byte, goroutines)
			for g := range goroutines {
				for k := range 3 {
					b, tx := mixedChains(t, 60, 3000+500*k, 7+k*5, k == 1, g*3+k)
					rl, err := FromBytes(fmt.Sprintf("pool%d-%d.i", g, k), b.index, b.data)
					if err != nil {
						t.Fatal(err)
					}
					rls[g], texts[g] = append(rls[g], rl), append(texts[g], tx)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var all []kept
					rls, texts := rls[g], texts[g]
					rng := rand.New(rand.NewSource(int64(g)))
					for range 300 {
						k := rng.Intn(len(rls))
						rev := rng.Intn(rls[k].Len())
						rls[k].forget() // rebuild whole chains, not from the cache
						what := fmt.Sprintf("revlog %d rev %d", k, rev)
						var text, chunk []byte
						var err error
						if rng.Intn(2) == 0 {
							text, chunk, err = rls[k].RevisionChunk(rev)
							all = append(all, kept{chunk, bytes.Clone(chunk), what + " chunk"})
						} else {
							text, err = rls[k].Revision(rev)
						}
						if err != nil {
							errs <- fmt.Errorf("%s: %w", what, err)
							return
						}
						if !bytes.Equal(text, texts[k][rev]) {
							errs <- fmt.Errorf("%s: wrong text", what)
							return
						}
						all = append(all, kept{text, texts[k][rev], what + " text"})
					}
					for _, c := range all {
						if !bytes.Equal(c.got, c.want) {
							errs <- fmt.Errorf("%s changed after later reads", c.what)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// TestPatchChainPooled applies chains of deltas with the pools on: the
// same result as applying them one at a time, through pooled hunk lists
// of earlier chains (longer and shorter ones).
func TestPatchChainPooled(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := range 50 {
		base := []byte(fmt.Sprintf("base text %d\n", round))
		text := base
		var deltas [][]byte
		for i := range 1 + rng.Intn(20) {
			next := bytes.Clone(text)
			p := rng.Intn(len(next) + 1)
			next = append(next[:p:p], append([]byte(fmt.Sprintf("<%d.%d>", round, i)), next[p:]...)...)
			if cut := rng.Intn(len(next)); cut > 0 && rng.Intn(3) == 0 {
				next = append(next[:cut-1:cut-1], next[cut:]...)
			}
			deltas = append(deltas, simpleDelta(text, next))
			text = next
		}
		got, err := PatchChain(base, deltas)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !bytes.Equal(got, text) {
			t.Fatalf("round %d: PatchChain gave %q, want %q", round, got, text)
		}
	}
}

// TestDecodeDeltaMaxTextLen refuses a delta whose result would be longer
// than any revlog can record.
func TestDecodeDeltaMaxTextLen(t *testing.T) {
	delta := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 'b'}
	if n, err := PatchedSize(MaxTextLen-2, delta); err != nil || n != MaxTextLen {
		t.Fatalf("PatchedSize(MaxTextLen-2) = %d, %v; want %d", n, err, MaxTextLen)
	}
	if _, err := PatchedSize(MaxTextLen-1, delta); !errors.Is(err, ErrBadDelta) {
		t.Fatalf("PatchedSize(MaxTextLen-1) error = %v, want ErrBadDelta", err)
	}
}

// BenchmarkReconstructTip rebuilds, with an empty cache, the tip of each
// of 20 revlogs whose tips end 30-delta chains over 16 KiB zstd texts
// (a checkout's work on a store with history), pools on and off.
func BenchmarkReconstructTip(b *testing.B) {
	type one struct{ index, data []byte }
	var rls []one
	for k := range 20 {
		bl, _ := mixedChains(b, 31, 16<<10, 31, false, k)
		rls = append(rls, one{bl.index, bl.data})
	}
	for _, pooled := range []bool{true, false} {
		b.Run(fmt.Sprintf("pooled=%v", pooled), func(b *testing.B) {
			SetPooling(pooled)
			defer SetPooling(true)
			b.ReportAllocs()
			for range b.N {
				for k, o := range rls {
					rl, err := FromBytes(fmt.Sprintf("tip%d.i", k), o.index, o.data)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := rl.Revision(rl.Len() - 1); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
