package revlog

import (
	"bytes"
	"fmt"
	"testing"
)

// longChain builds a split revlog of n revisions of a text of about size
// bytes, each a small edit of the previous one (one delta chain).
func longChain(b testing.TB, n, size int) builtRevlog {
	text := bytes.Repeat([]byte("0123456789abcde\n"), size/16)
	revs := make([]buildRev, n)
	for i := range revs {
		next := bytes.Clone(text)
		p := (i * 7919) % (len(next) - 8)
		copy(next[p:], fmt.Sprintf("%08d", i))
		base := i - 1
		if i == 0 {
			base = -2
		}
		revs[i] = buildRev{text: next, p1: i - 1, p2: -1, base: base, comp: 'x'}
		text = next
	}
	return build(b, revs, false, true)
}

// BenchmarkRevisionColdChain rebuilds the tip of a 1000-delta chain over
// a 1 MiB text with an empty cache each time (fold + one apply).
func BenchmarkRevisionColdChain(b *testing.B) {
	rl := longChain(b, 1000, 1<<20)
	b.ResetTimer()
	for range b.N {
		r, err := FromBytes("bench.i", rl.index, rl.data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Revision(999); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRevisionWalk reads every revision in order, as verify does.
func BenchmarkRevisionWalk(b *testing.B) {
	rl := longChain(b, 1000, 64<<10)
	b.ResetTimer()
	for range b.N {
		r, _ := FromBytes("bench.i", rl.index, rl.data)
		for rev := range r.Len() {
			if _, err := r.Revision(rev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
