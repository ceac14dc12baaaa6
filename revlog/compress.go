package revlog

// Chunk compression. A stored chunk names its own encoding in its first
// byte (revlog v1 "inline" compression mode):
//
//	empty    the empty text
//	'\0'     stored as is, the '\0' is part of the text
//	'u'      stored as is after the 'u'
//	'x'      zlib stream (0x78 is the first byte of a zlib header)
//	'('      zstd frame (0x28 is the first byte of the zstd magic)
//
// Keep in sync with mercurial/revlog.py decompress and
// mercurial/utils/compression.py (revlogheader of each engine).

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// MaxTextLen bounds any decompressed chunk or reconstructed text: version 1
// records lengths as signed 32-bit integers, so hg cannot write more.
const MaxTextLen = math.MaxInt32

// Decompress decodes a stored chunk. limit bounds the output (use
// MaxTextLen when nothing better is known); sizeHint, when >= 0, is the
// expected output length, used only to size the buffer up to a bound the
// input itself justifies. A chunk whose marker is '\0' or 'u' is returned
// without copying (the result aliases chunk).
func Decompress(chunk []byte, limit, sizeHint int64) ([]byte, error) {
	return decompressAppend(nil, chunk, limit, sizeHint)
}

// decompressAppend is Decompress decoding into dst's spare capacity
// (growing it as needed): a compressed chunk's text is appended to dst
// and returned as the appended part only, so that the chunks of one
// delta chain can share one buffer (inner.revisionChunk); limit bounds
// that part. A chunk stored as is ('\0', 'u') is returned aliasing
// chunk, not copied, and dst is left alone.
func decompressAppend(dst, chunk []byte, limit, sizeHint int64) ([]byte, error) {
	if limit < 0 || limit > MaxTextLen {
		limit = MaxTextLen
	}
	if len(chunk) == 0 {
		return chunk, nil
	}
	switch chunk[0] {
	case 0:
		return checkLimit(chunk, limit)
	case 'u':
		return checkLimit(chunk[1:], limit)
	case 'x':
		return inflate(dst, chunk, limit, sizeHint)
	case '(':
		return unzstd(dst, chunk, limit, sizeHint)
	}
	return nil, fmt.Errorf("%w: unknown compression type %q", ErrUnsupported, chunk[:1])
}

var errTooLarge = errors.New("decompressed chunk exceeds its bound")

func checkLimit(b []byte, limit int64) ([]byte, error) {
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (%d > %d)", errTooLarge, len(b), limit)
	}
	return b, nil
}

// preallocBound is the largest buffer sized from a recorded length before
// the data proves it: zlib's best ratio is about 1032:1.
func preallocBound(compressed int, hint, limit int64) int {
	if hint < 0 {
		hint = int64(compressed) * 4
	}
	hint = min(hint, limit, int64(compressed)*1032+512)
	return int(hint)
}

// Inflating is klauspost/compress's zlib, which decoded the real-history
// corpus's chunks (recompressed with zlib) in 8 to 15% less CPU than
// the standard library's.

// zlibReaders recycles zlib readers, whose state (a 32 KiB window and
// Huffman tables) costs more than decompressing a typical small chunk.
// A pool holds no observable state: any reader in it is reset before use.
var zlibReaders sync.Pool

type sliceReader struct {
	b []byte
	i int
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	r.i++
	return r.b[r.i-1], nil
}

func inflate(dst, chunk []byte, limit, sizeHint int64) ([]byte, error) {
	src := &sliceReader{b: chunk}
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(src, nil); err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(src); err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
	}
	defer zlibReaders.Put(zr)
	n := len(dst)
	out, err := readBounded(zr, slices.Grow(dst, preallocBound(len(chunk), sizeHint, limit))[n:], limit)
	if err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	// Bytes after the end of the zlib stream are ignored, as Python's
	// zlib.decompress (which hg uses) ignores them.
	return out, nil
}

// readBounded reads r to EOF into out, failing if it holds more than limit
// bytes. Unlike bytes.Buffer.ReadFrom it does not reallocate a buffer
// that was sized exactly (the usual case: a snapshot of known length).
func readBounded(r io.Reader, out []byte, limit int64) ([]byte, error) {
	for {
		// slices.Grow may round capacity up past limit: never read past it.
		end := int(min(int64(cap(out)), limit))
		if len(out) >= end {
			if int64(len(out)) >= limit {
				var probe [1]byte
				n, err := r.Read(probe[:])
				switch {
				case n > 0:
					return nil, fmt.Errorf("%w (limit %d)", errTooLarge, limit)
				case err == io.EOF:
					return out, nil
				case err != nil:
					return nil, err
				}
				continue
			}
			out = slices.Grow(out, int(min(int64(cap(out))+512, limit-int64(len(out)))))
			continue
		}
		n, err := r.Read(out[len(out):end])
		out = out[:len(out)+n]
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// zstdDecoder is shared by every revlog: DecodeAll is safe for concurrent
// use and keeps its own pool of block decoders. Created on first use.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(MaxTextLen),
		zstd.WithDecoderLowmem(false))
})

// unzstd decodes a zstd chunk after dst's bytes. The output is sized
// from the frame's declared content size, or else from sizeHint (a full
// snapshot's recorded length): hg compresses a text over 1 MB with a
// streaming compressor, whose frame declares no size, and the decoder
// then grew its buffer as it filled, copying it each time: decoding a
// 250,000-file manifest's 15 MB text held 27 MB in two buffers, the
// largest allocation at the peak of a clone's checkout.
func unzstd(dst, chunk []byte, limit, sizeHint int64) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(chunk); err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	n := len(dst)
	switch {
	case h.HasFCS:
		if h.FrameContentSize > uint64(limit) {
			return nil, fmt.Errorf("zstd: frame declares %d bytes: %w (limit %d)", h.FrameContentSize, errTooLarge, limit)
		}
		// The decoder itself caps growth by what the input can produce.
		dst = slices.Grow(dst, preallocBound(len(chunk), int64(h.FrameContentSize), limit))
	case sizeHint >= 0:
		dst = slices.Grow(dst, preallocBound(len(chunk), sizeHint, limit))
	}
	d, err := zstdDecoder()
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	// Decoded after dst's bytes, which DecodeAll leaves as they are.
	out, err := d.DecodeAll(chunk, dst[n:n:cap(dst)])
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return checkLimit(out, limit)
}
