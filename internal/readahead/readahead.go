// Package readahead reads a stream on a goroutine of its own, ahead of
// its consumer, into a bounded set of buffers.
//
// A clone from a server reads the response, decodes it and writes files
// on one goroutine: while the applier waits for the disk (the kernel's
// file creation, or the sink's writers' full queue), nobody reads the
// socket, its buffers fill, and the server stops sending. Server and
// client then take turns instead of overlapping, and the clone costs
// about the server's time plus the writer's. A Reader keeps the socket
// drained up to its bound, so that the server sends at its own pace
// while the writes catch up.
//
// A bound that grows (NewGrowing) starts small and doubles, up to its
// most, each time the buffers were all full (the source waited for the
// consumer) and then all drained (the consumer waited for the source):
// a larger bound would have kept both going. A consumer that is slower
// throughout keeps the buffers full and never drains them, and more
// buffers would only hold more of the stream in memory: the bound then
// stays where it is.
package readahead

import (
	"io"
	"sync"
	"sync/atomic"
)

// Reader is an io.ReadCloser reading ahead of its caller. Its memory is
// bounded by the buffer count times the buffer size.
type Reader struct {
	full chan chunk    // read ahead, in order
	free chan []byte   // buffers to fill again
	stop chan struct{} // closed by Close
	once sync.Once

	// waited is set by the goroutine when it finds no free buffer,
	// and cleared by the caller when it finds nothing read ahead.
	waited atomic.Bool
	bufs   int // the bound now, in buffers (the caller's)
	most   int // the bound's most

	cur  []byte // what the caller has not taken of the chunk in hand
	buf  []byte // the chunk in hand's buffer, returned to free when read
	err  error  // the reader's error, once cur is drained
	done bool
}

type chunk struct {
	b   []byte
	buf []byte
	err error
}

// New starts reading r ahead: up to bufs buffers of size bytes each.
// Close stops the goroutine once its read in progress returns; closing
// r (a network connection) is the caller's, after Close, to unblock it.
func New(r io.Reader, size, bufs int) *Reader {
	return NewGrowing(r, size, bufs, bufs)
}

// NewGrowing is New with a bound that starts at bufs buffers and
// doubles, up to most, each time the buffers were all filled and then
// all drained (see the package comment).
func NewGrowing(r io.Reader, size, bufs, most int) *Reader {
	size, bufs = max(size, 4096), max(bufs, 2)
	most = max(most, bufs)
	ra := &Reader{
		full: make(chan chunk, most),
		free: make(chan []byte, most),
		stop: make(chan struct{}),
		bufs: bufs,
		most: most,
	}
	for range bufs {
		ra.free <- nil
	}
	go ra.run(r, size)
	return ra
}

// Buffers is the bound now, in buffers. It is the caller's, as Read is.
func (ra *Reader) Buffers() int { return ra.bufs }

func (ra *Reader) run(r io.Reader, size int) {
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		default:
			ra.waited.Store(true)
			select {
			case buf = <-ra.free:
			case <-ra.stop:
				return
			}
		}
		if buf == nil {
			buf = make([]byte, size)
		}
		// Whole buffers: a network read gives a few kilobytes, and the
		// bound is on buffers, so a short one would waste the room. The
		// stream must end (EOF) for the last one to be passed on: a
		// Reader is for a response that ends, not for a conversation.
		n, err := io.ReadFull(r, buf)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		select {
		case ra.full <- chunk{b: buf[:n], buf: buf, err: err}:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads what was read ahead, waiting for it if needed. It is not
// safe for concurrent use; after Close it fails.
func (ra *Reader) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		ra.release()
		if ra.done {
			return 0, ra.err
		}
		var c chunk
		select {
		case c = <-ra.full:
		default:
			// Drained: if the buffers were all full since the last
			// time, a larger bound would have kept the source going.
			if ra.waited.Swap(false) {
				ra.grow()
			}
			select {
			case c = <-ra.full:
			case <-ra.stop:
				return 0, io.ErrClosedPipe
			}
		}
		ra.cur, ra.buf = c.b, c.buf
		if c.err != nil {
			ra.err, ra.done = c.err, true
		}
		if len(p) == 0 {
			return 0, nil
		}
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	if len(ra.cur) == 0 {
		ra.release()
	}
	return n, nil
}

// grow doubles the bound, up to its most: the new buffers are made
// when the goroutine takes them.
func (ra *Reader) grow() {
	n := min(ra.bufs, ra.most-ra.bufs)
	for range n {
		ra.free <- nil
	}
	ra.bufs += n
}

// release hands the drained buffer in hand back to the goroutine.
func (ra *Reader) release() {
	if ra.buf != nil {
		ra.free <- ra.buf
		ra.buf = nil
	}
}

// Close stops reading ahead. It does not close the underlying reader.
func (ra *Reader) Close() error {
	ra.once.Do(func() { close(ra.stop) })
	return nil
}
