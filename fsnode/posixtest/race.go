//go:build linux

package posixtest

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// ChangeRace is a file that RaceChanges reads from several goroutines
// while it changes it: fsnode's and the mount's virtual-file suites
// give one whose Reset makes it a virtual file of revision A.
type ChangeRace struct {
	// Reset makes the file revision A (RaceSize bytes).
	Reset func() error
	// Read reads at off, as pread(2).
	Read func(off int64, buf []byte) (int, error)
	// The changes: a write, a truncation, a punched hole
	// (fallocate(PUNCH_HOLE|KEEP_SIZE)), a move to revision B.
	Write     func(off int64, b []byte) error
	Truncate  func(size int64) error
	PunchHole func(off, n int64) error
	Move      func() error
	// Torn: a read during a move may show revision A's bytes in some
	// places and B's in others (through the kernel's page cache, as a
	// read racing a write(2) does on any Linux file system), instead of
	// one revision's throughout.
	Torn bool
	// TruncZeros: a read during a truncation may show zeros past the new
	// size where the file's bytes were. Through the kernel's FUSE client
	// a read the daemon answers short (the daemon has truncated) while
	// the kernel's size is not yet updated (FUSE_I_SIZE_UNSTABLE until
	// SETATTR's reply) has the rest of its pages zero-filled
	// (fs/fuse/file.c fuse_short_read), and the reader copies them out
	// under the old size. Once the truncation returned, reads are exact.
	TruncZeros bool
}

// RaceSize is the revisions' size.
const RaceSize = 200_000

// RaceRevisions returns RaceChanges's revisions A and B.
func RaceRevisions() (a, b []byte) {
	a, b = make([]byte, RaceSize), make([]byte, RaceSize)
	for i := range a {
		a[i], b[i] = byte(i*7+1), byte(i*13+5)
	}
	return a, b
}

// RaceChanges runs rounds of: Reset, four readers reading, one change.
// While the change runs, a read is one revision's bytes or the other's,
// never a mix (unless Torn), and across a write, truncation or hole every byte is the
// revision's or the change's (or, with TruncZeros, a zero past the
// truncation's size); a read that starts after the change
// returned shows it in full; a range no change touches reads revision
// A's bytes throughout; no read fails; and the file ends as the change
// made it. Whether a read meets the change midway is up to the
// scheduler: a round checks what it can and assumes no timing.
func RaceChanges(t *testing.T, rounds int, c ChangeRace) {
	t.Helper()
	revA, revB := RaceRevisions()
	const size, readers, bufSize = RaceSize, 4, 9000
	// bytesOK checks each byte of got, read at off, against may.
	bytesOK := func(off int, got []byte, may func(i int, b byte) bool) bool {
		for i, b := range got {
			if !may(off+i, b) {
				return false
			}
		}
		return true
	}
	isRev := func(rev []byte) func(off int, got []byte) bool {
		return func(off int, got []byte) bool { return bytes.Equal(got, rev[off:off+len(got)]) }
	}
	for round := range rounds {
		if err := c.Reset(); err != nil {
			t.Fatalf("round %d: reset: %v", round, err)
		}
		// during says whether a read at off during the change may be got;
		// after, whether one once it returned may be.
		var during, after func(off int, got []byte) bool
		var change func() error
		var what string
		switch round % 4 {
		case 0:
			what = "write"
			written := func(i int) bool { return i >= 5000 && i < 5003 }
			during = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || written(i) && b == "XYZ"[i-5000] })
			}
			after = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool {
					return !written(i) && b == revA[i] || written(i) && b == "XYZ"[i-5000]
				})
			}
			change = func() error { return c.Write(5000, []byte("XYZ")) }
		case 1:
			what = "truncate"
			during = isRev(revA)
			if c.TruncZeros {
				during = func(off int, got []byte) bool {
					return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || i >= 1000 && b == 0 })
				}
			}
			after = func(off int, got []byte) bool {
				return off >= 1000 && len(got) == 0 || off+len(got) <= 1000 && isRev(revA)(off, got)
			}
			change = func() error { return c.Truncate(1000) }
		case 2:
			what = "punch hole"
			hole := func(i int) bool { return i >= 100_000 && i < 104_096 }
			during = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || hole(i) && b == 0 })
			}
			after = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return !hole(i) && b == revA[i] || hole(i) && b == 0 })
			}
			change = func() error { return c.PunchHole(100_000, 4096) }
		case 3:
			what = "move"
			during = func(off int, got []byte) bool { return isRev(revA)(off, got) || isRev(revB)(off, got) }
			if c.Torn {
				during = func(off int, got []byte) bool {
					return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || b == revB[i] })
				}
			}
			after = isRev(revB)
			change = c.Move
		}
		var changed atomic.Bool
		stop := make(chan struct{})
		var started, done sync.WaitGroup
		errs := make(chan error, readers)
		for r := range readers {
			started.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				first := true
				defer func() {
					if first {
						started.Done()
					}
				}()
				buf := make([]byte, bufSize)
				if r == 0 {
					buf = buf[:100] // a range no change touches: [0, 1000)
				}
				for k := 0; ; k++ {
					off := (k*40_009 + r*17_011) % size
					if r == 0 {
						off = k % 900
					}
					late := changed.Load()
					n, err := c.Read(int64(off), buf)
					if err != nil {
						errs <- fmt.Errorf("read at %d: %w", off, err)
						return
					}
					// A full read unless the end of the file cuts it.
					if full := min(len(buf), size-off); late && what == "truncate" {
						full = max(0, min(len(buf), 1000-off))
						if n != full {
							errs <- fmt.Errorf("read at %d after the truncation: %d bytes, want %d", off, n, full)
							return
						}
					} else if n != full && !(what == "truncate" && n < full) {
						errs <- fmt.Errorf("read at %d: %d bytes, want %d", off, n, full)
						return
					}
					if late && !after(off, buf[:n]) {
						errs <- fmt.Errorf("read at %d after the change: %d bytes, not what it made", off, n)
						return
					} else if !late && !during(off, buf[:n]) {
						errs <- fmt.Errorf("read at %d during the change: %d bytes, neither before nor after", off, n)
						return
					}
					if first {
						first = false
						started.Done()
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
		}
		started.Wait() // every reader has read once: the change meets them reading
		err := change()
		changed.Store(true)
		close(stop)
		done.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("round %d (%s): %v", round, what, e)
		}
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, what, err)
		}
		end := make([]byte, size+1)
		n := 0
		for n < len(end) {
			k, err := c.Read(int64(n), end[n:])
			if err != nil {
				t.Fatalf("round %d: reading the file after the %s: %v", round, what, err)
			}
			if k == 0 {
				break
			}
			n += k
		}
		if want := map[bool]int{true: 1000, false: size}[what == "truncate"]; n != want || !after(0, end[:n]) {
			t.Errorf("round %d: after the %s the file is %d bytes, not what it made", round, what, n)
		}
	}
}
