//go:build linux

package mount

import (
	"sync"

	"github.com/hgfs/hgfs/dirstate"
)

// An update in the daemon reuses the large buffers of the update before
// it: the dirstate it reads and the one it encodes (a megabyte each on
// the 20,000-file working copy), the next dirstate's entries (1.8 MB)
// and the dirty check's table of inodes (320 KB). Allocated afresh they
// were most of what an update allocated, and the collections that
// followed took 15% of the daemon's CPU in a loop of updates: reused,
// the daemon's CPU per update went from 6.2-7.9 to 4.9-5.8 ms, and hgfs
// update 0 -> tip from 10.8 to 10.1 ms (medians of 60 alternated pairs
// against HGFS_TUNE=-bufpool). They
// wait in sync.Pools, so that an idle daemon gives them back to the
// collector; pooled entries keep their strings alive meanwhile (paths
// hgview's manifests hold anyway, or the names of the last parse), as
// clearing 1.8 MB for each update would cost more than they hold.
// HGFS_TUNE's bufpool turns the reuse off (SetPooling).
var (
	dirstateBufs slicePool[byte]
	entryBufs    slicePool[dirstate.Entry]
	foundBufs    slicePool[foundIno]
)

// slicePool holds slices of T to reuse.
type slicePool[T any] struct{ p sync.Pool }

// get returns an empty slice with room for n elements: a reused one
// when one big enough waits.
func (s *slicePool[T]) get(n int) []T {
	if !noPools.Load() {
		if b, ok := s.p.Get().(*[]T); ok && cap(*b) >= n {
			return (*b)[:0]
		}
	}
	return make([]T, 0, n)
}

// put gives b's array back for a later get; its owner uses it no more.
func (s *slicePool[T]) put(b []T) {
	if noPools.Load() || cap(b) == 0 {
		return
	}
	s.p.Put(&b)
}
