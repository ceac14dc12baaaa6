package streamclone

// The directory sink's writer pool.
//
// A stream arrives on one goroutine, and most of a store is small files
// (the bench's 20,000-file store averages 240 bytes a file), for which
// creating the file costs far more than writing it. Applying them one
// after another leaves the second CPU idle while the first waits in the
// kernel's create. So files of at most smallFileMax bytes are taken whole
// into memory and handed in batches to DirOptions.Writers goroutines that
// create, write and close them while the applier decodes the next ones.
//
// Memory: the bytes taken and not yet written are bounded by writerBudget;
// Create waits for writers to catch up beyond it (back-pressure), after
// handing over the batch it is filling so that the wait always ends.
// Errors: the first failure is reported by the next Create and by Finish.
// Abort waits for the files being written, drops the rest and removes
// everything.

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hgfs/hgfs/internal/batchpool"
)

const (
	// smallFileMax is the largest file the writers take: 64 KiB holds
	// almost every revlog index of a store, and is small beside the
	// budget.
	smallFileMax = 64 << 10
	// writerBudget bounds the bytes taken and not yet written.
	writerBudget = 4 << 20
	// writerBatchSize is the number of files handed over at once.
	writerBatchSize = 16
	// MaxWriters bounds DirOptions.Writers ([hgfs] clone-writers).
	MaxWriters = 64
)

// smallFile is a whole small file waiting for a writer.
type smallFile struct {
	path string // OS path, under the stage
	data []byte
}

// writers is the pool writing small files (see the file comment).
type writers struct {
	pool    *batchpool.Pool[smallFile]
	durable bool
	drop    atomic.Bool // set by Abort: files not yet written are skipped

	mu   sync.Mutex
	cond sync.Cond
	held int64 // bytes taken and not yet written or dropped
}

func newWriters(n int, durable bool) *writers {
	w := &writers{durable: durable}
	w.cond.L = &w.mu
	// Queue two batches a writer: enough that no writer waits for the
	// applier's next hand-over, few enough that the budget, not the
	// queue, is what bounds memory.
	w.pool = batchpool.New(n, 2*n, writerBatchSize, w.write)
	return w
}

func (w *writers) write(f smallFile) error {
	defer w.release(int64(len(f.data)))
	if w.drop.Load() {
		return nil
	}
	file, err := createExcl(f.path)
	if err != nil {
		return err
	}
	if _, err := file.Write(f.data); err != nil {
		file.Close()
		return err
	}
	return closeFile(file, w.durable)
}

// reserve takes n bytes of the budget, waiting for the writers if it is
// spent. A file larger than the whole budget still goes through once
// nothing else is held.
func (w *writers) reserve(n int64) {
	w.mu.Lock()
	if w.held+n > writerBudget && w.held > 0 {
		// The batch being filled holds part of the budget: hand it
		// over, or the writers could never release it.
		w.mu.Unlock()
		w.pool.Flush()
		w.mu.Lock()
		for w.held+n > writerBudget && w.held > 0 {
			w.cond.Wait()
		}
	}
	w.held += n
	w.mu.Unlock()
}

func (w *writers) release(n int64) {
	w.mu.Lock()
	w.held -= n
	w.mu.Unlock()
	w.cond.Broadcast()
}

// add hands a whole file to the pool; its bytes were reserved.
func (w *writers) add(f smallFile) { w.pool.Add(f) }

func (w *writers) failed() error { return w.pool.Failed() }

// finish writes everything handed over and returns the first error.
func (w *writers) finish() error { return w.pool.Close() }

// abort drops what has not been written yet and waits for the files
// being written.
func (w *writers) abort() {
	w.drop.Store(true)
	for _, f := range w.pool.Take() {
		w.release(int64(len(f.data)))
	}
	w.pool.Close() // errors are moot: everything is removed next
}

// bufFile takes a small file whole; Close hands it to the writers.
type bufFile struct {
	s      *DirSink
	path   string
	name   string
	size   int64
	data   []byte
	closed bool
}

func (b *bufFile) Write(p []byte) (int, error) {
	if int64(len(b.data))+int64(len(p)) > b.size {
		return 0, fmt.Errorf("streamclone: %s: write beyond its declared size %d", b.name, b.size)
	}
	b.data = append(b.data, p...)
	return len(p), nil
}

func (b *bufFile) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if int64(len(b.data)) != b.size {
		b.s.handOff(nil, b.size)
		return fmt.Errorf("streamclone: %s: %d bytes written, %d declared", b.name, len(b.data), b.size)
	}
	return b.s.handOff(&smallFile{path: b.path, data: b.data}, b.size)
}
