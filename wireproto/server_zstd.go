package wireproto

import (
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the window of the response encoder: 2 MiB, the window
// zstd's level 3 (hg's server.zstdlevel default) uses for large inputs
// (windowLog 21). klauspost/compress's own default, 8 MiB, makes each
// encoder hold four times the history for no gain at that level.
const zstdWindow = 2 << 20

// The frames carry no checksum, as hg's (python-zstandard's
// ZstdCompressor writes none unless asked): hashing every byte sent buys
// the client nothing the transport and the changegroup's own checks do
// not.

// The encoders are built with WithLowerEncoderMem: 8 concurrent clones
// of the real-history repository peaked at 106 MiB instead of 137 MiB
// (one clone: 31 instead of 35 MiB) for about 5% more CPU.

// zstdPoolSize bounds the idle response encoders kept for reuse: an
// encoder's tables and history are most of a response's memory, and
// building them is a measurable part of a small response's CPU.
const zstdPoolSize = 4

// zstdPool keeps idle response encoders of one level.
type zstdPool struct {
	level int
	mu    sync.Mutex
	idle  []*zstd.Encoder
}

// get returns an encoder writing to w, reused when one is idle.
func (p *zstdPool) get(w io.Writer) (io.WriteCloser, error) {
	p.mu.Lock()
	var e *zstd.Encoder
	if n := len(p.idle); n > 0 {
		e, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if e != nil {
		e.Reset(w)
		return &pooledZstd{e, p}, nil
	}
	e, err := NewZstdResponseEncoder(w, p.level)
	if err != nil {
		return nil, err
	}
	return &pooledZstd{e, p}, nil
}

// NewZstdResponseEncoder returns an encoder of the zstd level given with
// the settings of the server's responses (window, no checksum, lower
// memory, one goroutine): for measuring what compressing a response
// costs apart from the server (bench's server floor).
func NewZstdResponseEncoder(w io.Writer, level int) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(zstdWindow), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
}

// pooledZstd is a response encoder; Close finishes the frame and, when
// that succeeded, returns the encoder to its pool.
type pooledZstd struct {
	e *zstd.Encoder
	p *zstdPool
}

func (z *pooledZstd) Write(b []byte) (int, error) { return z.e.Write(b) }

func (z *pooledZstd) Close() error {
	e := z.e
	if e == nil {
		return nil
	}
	z.e = nil
	if err := e.Close(); err != nil {
		return err
	}
	e.Reset(nil) // drop the response writer
	z.p.mu.Lock()
	if len(z.p.idle) < zstdPoolSize {
		z.p.idle = append(z.p.idle, e)
	}
	z.p.mu.Unlock()
	return nil
}
