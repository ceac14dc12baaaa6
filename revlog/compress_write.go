package revlog

// Chunk compression for writing: the encoding side of compress.go.
// A chunk is compressed with the revlog's engine when that makes it
// smaller; otherwise it is stored as is, behind a 'u' marker unless the
// text already starts with '\0' (which then doubles as the marker).
//
// Keep in sync with mercurial/revlog.py compress and
// mercurial/utils/compression.py (zlibrevlogcompressor,
// zstdrevlogcompressor): inputs under 44 (zlib) or 50 (zstd) bytes are
// never compressed, and a compressed form is kept only when strictly
// smaller than the input.

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compression engine names (WriterOptions.Compression).
const (
	CompressionZstd = "zstd"
	CompressionZlib = "zlib"
	CompressionNone = "none" // hg's format.revlog-compression=none: chunks stored as is
)

// DefaultZstdLevel is hg's revlog.zstd.level default.
// Keep in sync with mercurial/utils/compression.py zstdrevlogcompressor.
const DefaultZstdLevel = 3

// Thresholds below which hg does not try to compress.
const (
	zlibMinCompress = 44
	zstdMinCompress = 50
)

// Encoders are costly to build (zstd's tables take hundreds of KiB) and
// a changegroup touches thousands of revlogs, so they are shared by every
// writer: zstd encoders (EncodeAll is safe for concurrent use) one per
// level, zlib writers through a pool. Like the decoder in compress.go this
// state has no observable effect.
var (
	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[int]*zstd.Encoder{}
	zlibWriters    sync.Pool
)

func zstdEncoder(level int) (*zstd.Encoder, error) {
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	if e, ok := zstdEncoders[level]; ok {
		return e, nil
	}
	// No checksum: python-zstandard, which hg uses, writes none either.
	// A 2 MiB window is what zstd's level 3 parameters give large inputs
	// (windowLog 21), so ratios match hg's; the default 8 MiB window made
	// each concurrent encoder hold 16 MiB of history for revlog chunks
	// that are mostly a few KiB.
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderCRC(false),
		zstd.WithWindowSize(2<<20),
		zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, err
	}
	zstdEncoders[level] = e
	return e, nil
}

// compressor encodes the chunks of one writer.
type compressor struct {
	engine string
	zstd   *zstd.Encoder
	out    []byte       // scratch for compressed output, reused
	zw     *zlib.Writer // from zlibWriters while the writer is open
	zbuf   bytes.Buffer
}

func newCompressor(engine string, zstdLevel int) (*compressor, error) {
	c := &compressor{engine: engine}
	switch engine {
	case CompressionZstd:
		if zstdLevel == 0 {
			zstdLevel = DefaultZstdLevel
		}
		if zstdLevel < 1 || zstdLevel > 22 {
			return nil, fmt.Errorf("revlog: invalid zstd level %d (1-22)", zstdLevel)
		}
		var err error
		if c.zstd, err = zstdEncoder(zstdLevel); err != nil {
			return nil, fmt.Errorf("revlog: zstd: %w", err)
		}
	case CompressionZlib, CompressionNone:
	default:
		return nil, fmt.Errorf("%w: unknown compression engine %q", ErrUnsupported, engine)
	}
	return c, nil
}

// compress returns the chunk for data as hg stores it: prefix is "u" or
// empty, body is the compressed bytes or data itself. body may alias the
// compressor's scratch buffer, valid until the next call.
func (c *compressor) compress(data []byte) (prefix string, body []byte, err error) {
	if len(data) == 0 {
		return "", data, nil
	}
	var compressed []byte
	switch c.engine {
	case CompressionZstd:
		if len(data) >= zstdMinCompress {
			c.out = c.zstd.EncodeAll(data, c.out[:0])
			compressed = c.out
		}
	case CompressionZlib:
		if len(data) >= zlibMinCompress {
			if compressed, err = c.deflate(data); err != nil {
				return "", nil, err
			}
		}
	}
	if compressed != nil && len(compressed) < len(data) {
		return "", compressed, nil
	}
	if data[0] == 0 {
		return "", data, nil
	}
	return "u", data, nil
}

// deflate compresses data into one zlib stream at zlib's default level,
// as Python's zlib.compress does. The standard library's deflate is used
// rather than klauspost's, which stores small inputs (most changesets and
// deltas) uncompressed at the default level.
func (c *compressor) deflate(data []byte) ([]byte, error) {
	c.zbuf.Reset()
	if c.zw == nil {
		if v := zlibWriters.Get(); v != nil {
			c.zw = v.(*zlib.Writer)
			c.zw.Reset(&c.zbuf)
		} else {
			c.zw = zlib.NewWriter(&c.zbuf)
		}
	} else {
		c.zw.Reset(&c.zbuf)
	}
	if _, err := c.zw.Write(data); err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	if err := c.zw.Close(); err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	return c.zbuf.Bytes(), nil
}

// release returns the zlib writer to the pool; the compressor stays
// usable.
func (c *compressor) release() {
	if c.zw != nil {
		zlibWriters.Put(c.zw)
		c.zw = nil
	}
}
