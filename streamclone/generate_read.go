package streamclone

// Reading the snapshot's files for a generated stream. A stream of many
// small files is bound by system calls (open, pread, close per file), not
// by bytes, so small files are read ahead by a few goroutines while the
// caller's goroutine writes the previous ones: on 2 cores the reads of
// some files overlap the writes and reads of others. Read-ahead goes in
// batches (up to batchFiles files, batchBytes bytes): handing over each
// file alone cost a goroutine wake-up per file, as much as it saved. On
// Linux each reader reads its batches through an io_uring (two
// io_uring_enter calls per batch instead of three system calls per file,
// generate_uring_linux.go), falling back to system calls for whatever the
// ring could not read as recorded, so errors are always theirs.
// Files larger than prefetchMax are read by the writing goroutine itself
// through one copy buffer. Memory stays bounded whatever the store's
// size: (prefetchWindow+readers+1) batch buffers plus that copy buffer.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

const (
	// prefetchMax is the largest file read ahead.
	prefetchMax = 64 << 10
	// batchBytes and batchFiles bound one read-ahead batch.
	batchBytes = 256 << 10
	batchFiles = 64
	// prefetchReaders is the number of goroutines reading ahead.
	prefetchReaders = 2
	// prefetchWindow is how many batches may be read ahead of the writer.
	prefetchWindow = 4
	// readFromPiece is the most handed to one ReadFrom call: an HTTP
	// response moves its write deadline between calls.
	readFromPiece = 4 << 20
)

// entryFile is an open snapshot file. Read reads from the file position
// (which only Read and sendfile move), ReadAt does not use it.
type entryFile interface {
	io.ReaderAt
	io.Reader
	io.Closer
}

// batch is a run of consecutive small entries read ahead into one buffer.
type batch struct {
	entries []*genEntry
	buf     []byte // the entries' contents, back to back
	err     error  // the first failure; entries before it are in buf
	failed  int    // index of the entry that failed
	done    chan struct{}
}

// entryReader hands out entries' contents in order. Call copy for every
// entry, in order, then close.
type entryReader struct {
	ctx   context.Context
	dirs  *dirHandles
	wdirs *dirCache   // the writing goroutine's
	order chan *batch // batches, in entry order (nil: no read-ahead)
	quit  chan struct{}
	free  chan []byte // batch buffers to reuse
	wg    sync.WaitGroup

	cur  *batch // batch being written
	next int    // index in cur of the next entry
	off  int    // offset in cur.buf of the next entry
	buf  []byte // copy buffer (large files; small ones without read-ahead)
}

var errReaderClosed = errors.New("streamclone: entry reader closed")

// newEntryReader starts reading entries ahead with readers goroutines
// (none: copy reads every file itself).
func newEntryReader(ctx context.Context, entries []genEntry, readers int) *entryReader {
	r := &entryReader{ctx: ctx, dirs: openDirs(entries), quit: make(chan struct{})}
	r.wdirs = r.dirs.cache()
	if readers <= 0 {
		return r
	}
	r.order = make(chan *batch, prefetchWindow)
	r.free = make(chan []byte, prefetchWindow+readers+1)
	jobs := make(chan *batch)
	r.wg.Add(1 + readers)
	go func() {
		defer r.wg.Done()
		defer close(jobs)
		b, size := &batch{done: make(chan struct{})}, int64(0)
		send := func() bool {
			// The writer only waits for a batch it received from order
			// while quit is open, and every such batch reaches a reader.
			select {
			case r.order <- b:
			case <-r.quit:
				return false
			}
			select {
			case jobs <- b:
			case <-r.quit:
				b.err = errReaderClosed
				close(b.done)
				return false
			}
			b, size = &batch{done: make(chan struct{})}, 0
			return true
		}
		for i := range entries {
			e := &entries[i]
			if e.size > prefetchMax || e.data != nil {
				continue
			}
			if len(b.entries) == batchFiles || size+e.size > batchBytes {
				if !send() {
					return
				}
			}
			b.entries = append(b.entries, e)
			size += e.size
		}
		if len(b.entries) > 0 {
			send()
		}
	}()
	for range readers {
		go func() {
			defer r.wg.Done()
			dirs := r.dirs.cache()
			defer dirs.close()
			ring := newURing()
			defer func() {
				if ring != nil {
					ring.close()
				}
			}()
			for b := range jobs {
				r.readBatch(dirs, &ring, b)
				close(b.done)
			}
		}()
	}
	return r
}

// close stops the readers and waits for them: no goroutine or
// descriptor outlives it.
func (r *entryReader) close() {
	close(r.quit)
	r.wg.Wait()
	r.wdirs.close()
	r.dirs.close()
}

func (r *entryReader) readBatch(dirs *dirCache, ring **uring, b *batch) {
	select {
	case b.buf = <-r.free:
	default:
		// At most cap(free) buffers are ever in use: the window, one per
		// reader, and the one being written.
		b.buf = make([]byte, 0, batchBytes)
	}
	start := 0
	size := 0
	for _, e := range b.entries {
		size += int(e.size)
	}
	if *ring != nil && size <= cap(b.buf) && r.ctx.Err() == nil {
		b.buf = b.buf[:size]
		next, ok := (*ring).readBatch(dirs, b.entries, b.buf)
		if !ok {
			(*ring).abandon()
			*ring = nil
			next = 0
		}
		start = next
		b.buf = b.buf[:0]
		for _, e := range b.entries[:start] {
			b.buf = b.buf[:len(b.buf)+int(e.size)]
		}
	}
	for i := start; i < len(b.entries); i++ {
		e := b.entries[i]
		select {
		case <-r.quit:
			b.err, b.failed = errReaderClosed, i
			return
		default:
		}
		if err := r.ctx.Err(); err != nil {
			b.err, b.failed = err, i
			return
		}
		n := len(b.buf)
		b.buf = b.buf[:n+int(e.size)]
		if err := readWhole(dirs, e, b.buf[n:]); err != nil {
			b.err, b.failed = err, i
			return
		}
	}
}

// readWhole reads e's file (e.size bytes) into p.
func readWhole(dirs *dirCache, e *genEntry, p []byte) error {
	f, err := dirs.open(e)
	if err != nil {
		return err
	}
	err = readEntryAt(f, e, p, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readEntryAt fills p from e's file at off; the file ending early is hg's
// error for a store that shrank under the stream.
func readEntryAt(f entryFile, e *genEntry, p []byte, off int64) error {
	for len(p) > 0 {
		k, err := f.ReadAt(p, off)
		off += int64(k)
		p = p[k:]
		if len(p) == 0 {
			return nil
		}
		if err == io.EOF || (err == nil && k == 0) {
			// streamclone._emit2: "Would most likely be caused by a race
			// due to `hg strip` or a revlog split"
			return fmt.Errorf("clone could only read %d bytes from %s, but expected %d bytes", off, e.name, e.size)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copy writes exactly e.size bytes of e's file to w. e must be the entry
// after the one of the previous call.
func (r *entryReader) copy(e *genEntry, w io.Writer) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if e.data != nil {
		if int64(len(e.data)) != e.size {
			return fmt.Errorf("streamclone: internal error: %s: %d bytes read for %d", e.name, len(e.data), e.size)
		}
		_, err := w.Write(e.data)
		return err
	}
	if r.buf == nil {
		r.buf = make([]byte, copyBufSize)
	}
	if e.size <= prefetchMax && r.order != nil {
		return r.copyAhead(e, w)
	}
	if e.size <= int64(len(r.buf)) {
		p := r.buf[:e.size]
		if err := readWhole(r.wdirs, e, p); err != nil {
			return err
		}
		_, err := w.Write(p)
		return err
	}
	f, err := r.wdirs.open(e)
	if err != nil {
		return err
	}
	defer f.Close()
	if rf, ok := w.(io.ReaderFrom); ok {
		return readFrom(r.ctx, e, f, rf)
	}
	for off := int64(0); off < e.size; {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		chunk := r.buf[:min(int64(len(r.buf)), e.size-off)]
		if err := readEntryAt(f, e, chunk, off); err != nil {
			return err
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		off += int64(len(chunk))
	}
	return nil
}

// copyAhead writes a small entry from its read-ahead batch.
func (r *entryReader) copyAhead(e *genEntry, w io.Writer) error {
	if r.cur == nil {
		r.cur, r.next, r.off = <-r.order, 0, 0
		<-r.cur.done
	}
	b := r.cur
	if b.entries[r.next] != e {
		return fmt.Errorf("streamclone: internal error: entries copied out of order (%s, expected %s)", e.name, b.entries[r.next].name)
	}
	if b.err != nil && r.next == b.failed {
		return b.err
	}
	_, err := w.Write(b.buf[r.off : r.off+int(e.size)])
	r.next++
	r.off += int(e.size)
	if r.next == len(b.entries) {
		select {
		case r.free <- b.buf[:0]:
		default:
		}
		r.cur = nil
	}
	return err
}

// readFrom hands e's file to w.ReadFrom in pieces, from the start of the
// file: a socket copies it with sendfile, without passing it through
// user space.
func readFrom(ctx context.Context, e *genEntry, f entryFile, w io.ReaderFrom) error {
	for off := int64(0); off < e.size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(readFromPiece, e.size-off)
		k, err := w.ReadFrom(&io.LimitedReader{R: f, N: n})
		off += k
		if err != nil {
			return err
		}
		if k < n {
			return fmt.Errorf("clone could only read %d bytes from %s, but expected %d bytes", off, e.name, e.size)
		}
	}
	return nil
}
