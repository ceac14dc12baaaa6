// Package batchpool runs work on a fixed set of goroutines, handed over
// in batches. It has no knowledge of what the work is: the directory sink
// of package streamclone and the checkout of package worktree use it.
package batchpool

import "sync"

// Pool runs a fixed number of goroutines applying do to items handed
// over in batches: one channel operation (and at most one wake-up) per
// batch instead of per item. Users: streamclone.DirSink's background
// closer (large files) and writers (small files), and worktree's checkout
// writers.
//
// Add, Flush, Take and Close are called from one goroutine at a time
// (DirSink calls them under its mutex); do runs on the pool's goroutines.
// The first error do returns is kept; Failed reports it.
type Pool[T any] struct {
	q     chan []T
	wg    sync.WaitGroup
	batch []T
	size  int

	mu  sync.Mutex
	err error
}

// New starts workers goroutines; at most queued full batches of
// size items wait for them, after which Add blocks (back-pressure).
func New[T any](workers, queued, size int, do func(T) error) *Pool[T] {
	workers, queued, size = max(workers, 1), max(queued, 1), max(size, 1)
	p := &Pool[T]{q: make(chan []T, queued), size: size, batch: make([]T, 0, size)}
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

func (p *Pool[T]) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// Failed returns the first error of do, if any.
func (p *Pool[T]) Failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Add queues it, handing the batch over once it is full.
func (p *Pool[T]) Add(it T) {
	p.batch = append(p.batch, it)
	if len(p.batch) >= p.size {
		p.Flush()
	}
}

// Flush hands over the batch being filled, however short.
func (p *Pool[T]) Flush() {
	if len(p.batch) == 0 {
		return
	}
	p.q <- p.batch
	p.batch = make([]T, 0, p.size)
}

// Take removes and returns the batch being filled, which the pool's
// goroutines will then never see.
func (p *Pool[T]) Take() []T {
	b := p.batch
	p.batch = make([]T, 0, p.size)
	return b
}

// Close hands over the last batch, waits for every item to be done and
// returns the first error. The pool cannot be used afterwards.
func (p *Pool[T]) Close() error {
	p.Flush()
	close(p.q)
	p.wg.Wait()
	return p.Failed()
}
