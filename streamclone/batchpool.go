package streamclone

import "sync"

// batchPool runs a fixed number of goroutines applying do to items handed
// over in batches: one channel operation (and at most one wake-up) per
// batch instead of per item. Both of DirSink's pools use it: the
// background closer (large files) and the writers (small files).
//
// add, flush and close are called from one goroutine at a time (DirSink
// calls them under its mutex); do runs on the pool's goroutines. The first
// error do returns is kept; failed reports it.
type batchPool[T any] struct {
	q     chan []T
	wg    sync.WaitGroup
	batch []T
	size  int

	mu  sync.Mutex
	err error
}

// newBatchPool starts workers goroutines; at most queued full batches of
// size items wait for them, after which add blocks (back-pressure).
func newBatchPool[T any](workers, queued, size int, do func(T) error) *batchPool[T] {
	workers, queued, size = max(workers, 1), max(queued, 1), max(size, 1)
	p := &batchPool[T]{q: make(chan []T, queued), size: size, batch: make([]T, 0, size)}
	p.wg.Add(workers)
	for range workers {
		go func() {
			defer p.wg.Done()
			for b := range p.q {
				for _, it := range b {
					if err := do(it); err != nil {
						p.fail(err)
					}
				}
			}
		}()
	}
	return p
}

func (p *batchPool[T]) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// failed returns the first error of do, if any.
func (p *batchPool[T]) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// add queues it, handing the batch over once it is full.
func (p *batchPool[T]) add(it T) {
	p.batch = append(p.batch, it)
	if len(p.batch) >= p.size {
		p.flush()
	}
}

// flush hands over the batch being filled, however short.
func (p *batchPool[T]) flush() {
	if len(p.batch) == 0 {
		return
	}
	p.q <- p.batch
	p.batch = make([]T, 0, p.size)
}

// take removes and returns the batch being filled, which the pool's
// goroutines will then never see.
func (p *batchPool[T]) take() []T {
	b := p.batch
	p.batch = make([]T, 0, p.size)
	return b
}

// close hands over the last batch, waits for every item to be done and
// returns the first error. The pool cannot be used afterwards.
func (p *batchPool[T]) close() error {
	p.flush()
	close(p.q)
	p.wg.Wait()
	return p.failed()
}
