package fsnode

import (
	"math/rand"
	"testing"
)

// TestSortSnaps checks the permutation sort on orders a map gives and on
// the edge sizes: every record lands at its inode number's place, whole.
func TestSortSnaps(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 10, 1000, 20000} {
		recs := make([]inodeSnap, n)
		for i, p := range rand.New(rand.NewSource(int64(n))).Perm(n) {
			recs[i].ino = Ino(p + 5)
			recs[i].d.Size = uint64(p)
		}
		sortSnaps(recs)
		for i := range recs {
			if recs[i].ino != Ino(i+5) || recs[i].d.Size != uint64(i) {
				t.Fatalf("n=%d: record %d is inode %d of size %d", n, i, recs[i].ino, recs[i].d.Size)
			}
		}
	}
}
