package streamclone

// Reading read-ahead batches through io_uring. Serving a store of many
// small files costs an openat, a pread and a close per file, and on a
// virtual machine each system call's entry and exit costs more than the
// work it does (a 20,000-file stream spent a quarter of its CPU time
// there). A ring submits a batch's opens in one io_uring_enter, then its
// reads, each hard-linked to the close of its file, in a second one:
// measured on the 2-core bench machine, 20,000 files opened, read and
// closed took 45 ms of CPU this way against 150 ms with system calls.
//
// The ring is only a faster way to make the same calls: a kernel without
// io_uring (or a sandbox refusing it) gets the system calls, and anything
// unexpected (a short read, a failed open) is redone by the plain path,
// whose errors are the ones reported.

import (
	// Named iouring: uring is this package's ring type.
	iouring "github.com/hgfs/hgfs/internal/uring"
)

// uring is one reader goroutine's ring; not safe for concurrent use.
type uring struct {
	fr   *iouring.FileReader
	reqs []iouring.FileReq
}

// newURing sets up a ring, or returns nil where io_uring is not
// available.
func newURing() *uring {
	fr, err := iouring.NewFileReader(batchFiles, batchBytes)
	if err != nil {
		return nil // batches are read with system calls
	}
	return &uring{fr: fr}
}

// close releases the ring; its buffer stays mapped if a batch failed
// (see internal/uring's doc).
func (r *uring) close() { r.fr.Close() }

// abandon drops a ring whose readBatch failed. The failed Run already
// abandoned it, leaving its buffer mapped for reads possibly in flight.
func (r *uring) abandon() { r.fr.Close() }

// readBatch reads the batch's files into p (their sizes, back to back).
// It returns the index of the first entry it could not read as asked
// (len(entries) if none): the caller reads from there on with system
// calls. ok false means the ring failed and must be abandoned.
func (r *uring) readBatch(dirs *dirCache, entries []*genEntry, p []byte) (next int, ok bool) {
	n := len(entries)
	data := r.fr.Bytes()
	if n > r.fr.Files() || len(p) > len(data) {
		return 0, true
	}
	total := int64(0)
	for _, e := range entries {
		if total += e.size; e.size < 0 || total > int64(len(data)) {
			return 0, true // not a batch the ring's buffer holds
		}
	}
	dirs.trim() // not during the batch: its descriptors are in the queue
	r.reqs = r.reqs[:0]
	off := 0
	for _, e := range entries {
		dirfd, name := dirs.at(e)
		r.reqs = append(r.reqs, iouring.FileReq{Dir: dirfd, Name: name, Off: off, Len: int(e.size)})
		off += int(e.size)
	}
	res, ok := r.fr.Read(r.reqs)
	if !ok {
		return 0, false
	}
	next = n
	for i, e := range entries {
		if int64(res[i]) != e.size {
			next = i
			break
		}
	}
	off = 0
	for _, e := range entries[:next] {
		off += int(e.size)
	}
	copy(p[:off], data[:off])
	return next, true
}
