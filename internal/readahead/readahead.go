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
package readahead

import (
	"io"
	"sync"
)

// Reader is an io.ReadCloser reading ahead of its caller. Its memory is
// bounded by the buffer count times the buffer size.
type Reader struct {
	full chan chunk    // read ahead, in order
	free chan []byte   // buffers to fill again
	stop chan struct{} // closed by Close
	once sync.Once

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
	size, bufs = max(size, 4096), max(bufs, 2)
	ra := &Reader{
		full: make(chan chunk, bufs),
		free: make(chan []byte, bufs),
		stop: make(chan struct{}),
	}
	for range bufs {
		ra.free <- nil
	}
	go ra.run(r, size)
	return ra
}

func (ra *Reader) run(r io.Reader, size int) {
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.stop:
			return
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
		case <-ra.stop:
			return 0, io.ErrClosedPipe
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
