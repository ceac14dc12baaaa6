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

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/uring"
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
	w.dirs.Trim() // not during the chunk: its descriptors are in the queue
	r.slot = r.slot[:0]
	for i, rel := range rels {
		if !fs.ValidPath(rel) || rel == "." {
			r.slot = append(r.slot, -1)
			continue
		}
		dirfd, base := w.dirs.At(rel)
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

// Reading small files during the walk (WalkRead): a chunk's opens, then
// its reads each hard-linked to its close, through internal/uring's
// FileReader, into fixed slots. A file whose read came back shorter than
// its slot was read whole, and its length is its size; anything else (a
// larger file, a failed open or read, an exhausted budget) is stat'ed as
// Walk does, so errors and sizes stay Walk's.

const (
	// readSlot is the most read of one file during the walk: stream
	// generation reads larger files itself anyway (prefetchMax).
	readSlot = 16 << 10
)

// fileReader is a walk's FileReader.
type fileReader struct {
	fr   *uring.FileReader
	reqs []uring.FileReq
	slot []int // request k -> position in rels
}

func (r *fileReader) close() { r.fr.Close() }

// readSizes is sizes reading what it can; false (nothing set) when no
// ring could be had or it failed, which is then dropped.
func (w *sysWalker) readSizes(rels []string, sizes []int64, errs []error, data [][]byte) bool {
	if w.reader == nil {
		fr, err := uring.NewFileReader(statChunk, statChunk*readSlot)
		if err != nil {
			w.budget = 0 // no ring: stat from now on
			return false
		}
		fr.OpenFlags = unix.O_NONBLOCK
		w.reader = &fileReader{fr: fr}
	}
	r := w.reader
	if len(rels) > r.fr.Files() {
		return false
	}
	w.dirs.Trim() // not during the chunk: its descriptors are in the queue
	r.reqs, r.slot = r.reqs[:0], r.slot[:0]
	for i, rel := range rels {
		if !fs.ValidPath(rel) || rel == "." {
			continue
		}
		dirfd, base := w.dirs.At(rel)
		if dirfd < 0 {
			continue
		}
		r.reqs = append(r.reqs, uring.FileReq{Dir: dirfd, Name: base, Off: len(r.reqs) * readSlot, Len: readSlot})
		r.slot = append(r.slot, i)
	}
	res, ok := r.fr.Read(r.reqs)
	if !ok {
		r.close()
		w.reader, w.budget = nil, 0
		return false
	}
	done := make([]bool, len(rels))
	buf := r.fr.Bytes()
	for k, i := range r.slot {
		n := int(res[k])
		if n < 0 || n >= readSlot || int64(n) > w.budget {
			continue
		}
		q := r.reqs[k]
		data[i] = append([]byte(nil), buf[q.Off:q.Off+n]...) // out of ring memory
		sizes[i], errs[i], done[i] = int64(n), nil, true
		w.budget -= int64(n)
	}
	// The rest is stat'ed, a run at a time.
	for i := 0; i < len(rels); {
		if done[i] {
			i++
			continue
		}
		j := i
		for j < len(rels) && !done[j] {
			j++
		}
		w.statSizes(rels[i:j], sizes[i:j], errs[i:j])
		i = j
	}
	return true
}
