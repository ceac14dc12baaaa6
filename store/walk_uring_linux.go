package store

// Stat'ing fncache entries through io_uring: a chunk of statx requests
// goes to the kernel in one io_uring_enter instead of one fstatat system
// call each. On the 2-core bench VM, where a system call's entry and exit
// are dear, 20,000 stats took ~47 ms this way against ~65 ms of fstatat,
// and the walk runs under the repository lock, so its wall time is the
// lock's. Results are fstatat's (statx with the same flags); a kernel or
// sandbox without io_uring gets the fstatat loop. The ring itself is
// internal/uring's.

import (
	"io/fs"
	"runtime"
	"syscall"

	"github.com/hgfs/hgfs/internal/uring"
	"golang.org/x/sys/unix"
)

// statRing is a walk's ring; not safe for concurrent use.
type statRing struct {
	ring *uring.Ring
	// stx receives the results: ring memory, not Go's (see
	// internal/uring's doc).
	stx   []unix.Statx_t
	names [][]byte // NUL-terminated base names, read by the kernel
	slot  []int    // chunk index -> position in rels (-1: done without the ring)
}

// newStatRing sets up a ring, or returns nil where io_uring is not
// available.
func newStatRing() *statRing {
	ring, err := uring.New(statChunk)
	if err != nil {
		return nil // the fstatat loop does the same
	}
	stx, err := ring.StatxBuffer(statChunk)
	if err != nil {
		ring.Close()
		return nil
	}
	return &statRing{ring: ring, stx: stx, names: make([][]byte, statChunk), slot: make([]int, 0, statChunk)}
}

func (r *statRing) close() { r.ring.Close() }

// ringSizes is sizes through w.ring; false (nothing set) when the ring
// failed, which is then dropped.
func (w *sysWalker) ringSizes(rels []string, sizes []int64, errs []error) bool {
	r := w.ring
	if len(rels) > statChunk {
		return false
	}
	w.trim() // not during the chunk: its descriptors are in the queue
	r.slot = r.slot[:0]
	for i, rel := range rels {
		if !fs.ValidPath(rel) || rel == "." {
			r.slot = append(r.slot, -1)
			continue
		}
		dirfd, base := w.at(rel)
		if dirfd < 0 {
			r.slot = append(r.slot, -1)
			continue
		}
		r.slot = append(r.slot, i)
		r.names[i] = append(append(r.names[i][:0], base...), 0)
		r.ring.Push(uring.Statx(dirfd, r.names[i], 0, unix.STATX_SIZE, &r.stx[i], uint64(i)))
	}
	res := make([]int32, len(rels))
	err := r.ring.Run(func(c uring.CQE) { res[c.UserData] = c.Res })
	runtime.KeepAlive(r.names)
	if err != nil {
		// The fstatat loop redoes the chunk; the abandoned ring keeps
		// its statx buffers mapped.
		r.close()
		w.ring = nil
		return false
	}
	for i, rel := range rels {
		switch {
		case r.slot[i] < 0 || (res[i] == 0 && r.stx[i].Mask&unix.STATX_SIZE == 0):
			sizes[i], errs[i] = w.size(rel)
		case res[i] < 0:
			// What os.DirFS's Stat returns.
			sizes[i], errs[i] = 0, &fs.PathError{Op: "stat", Path: rel, Err: syscall.Errno(-res[i])}
		default:
			sizes[i], errs[i] = int64(r.stx[i].Size), nil
		}
	}
	return true
}
