package bundle2

// Writing the layout bundle2.go describes, as bundle2.bundle20 and
// bundlepart write it: payload in PayloadChunkSize chunks, part ids from 0.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Writer writes a bundle2 stream, uncompressed or (NewCompressedWriter)
// compressed after its stream parameters.
type Writer struct {
	w      *bufio.Writer
	nextID uint32
	open   bool
	err    error
	// finish, when not nil, ends the compressed stream after the
	// end-of-stream marker is flushed.
	finish func() error
}

// NewWriter writes the magic and stream parameters. A Compression
// parameter is refused: NewCompressedWriter writes one and compresses.
func NewWriter(w io.Writer, params ...Param) (*Writer, error) {
	for _, p := range params {
		if strings.EqualFold(p.Name, "compression") {
			return nil, errors.New("bundle2: compressed output is written by NewCompressedWriter")
		}
	}
	block, err := encodeStreamParams(params)
	if err != nil {
		return nil, err
	}
	bw := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	bw.w.WriteString(Magic)
	bw.putInt32(int32(len(block)))
	bw.w.WriteString(block)
	return bw, bw.err
}

// ZstdWindow is the window NewCompressedWriter's zstd uses: hg's level 3
// window for large inputs (2 MiB), which every decoder accepts.
const ZstdWindow = 2 << 20

// NewCompressedWriter writes the magic and a Compression=comp stream
// parameter (bundle20.setcompression), then compresses everything after
// it: comp is "ZS" (zstd at hg's level 3) or "UN" (no compression, no
// parameter). Close finishes the compressed stream but not w.
func NewCompressedWriter(w io.Writer, comp string) (*Writer, error) {
	switch comp {
	case "UN", "":
		return NewWriter(w)
	case "ZS":
	default:
		return nil, fmt.Errorf("bundle2: writing compression %q is not supported", comp)
	}
	block, err := encodeStreamParams([]Param{{Name: "Compression", Value: comp}})
	if err != nil {
		return nil, err
	}
	hw := bufio.NewWriterSize(w, 64)
	hw.WriteString(Magic)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(block)))
	hw.Write(n[:])
	hw.WriteString(block)
	if err := hw.Flush(); err != nil {
		return nil, err
	}
	z, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)),
		zstd.WithWindowSize(ZstdWindow), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &Writer{w: bufio.NewWriterSize(z, 64<<10), finish: z.Close}, nil
}

// encodeStreamParams encodes a stream parameter block, the reverse of
// parseStreamParams: URL-quoted name[=value], space-separated
// (bundle20._paramchunk).
func encodeStreamParams(params []Param) (string, error) {
	blocks := make([]string, 0, len(params))
	for _, p := range params {
		if c := p.Name; c == "" || !('a' <= c[0] && c[0] <= 'z' || 'A' <= c[0] && c[0] <= 'Z') {
			return "", fmt.Errorf("bundle2: invalid stream parameter name %q", p.Name)
		}
		s := Quote(p.Name)
		if p.Value != "" {
			s += "=" + Quote(p.Value)
		}
		blocks = append(blocks, s)
	}
	block := strings.Join(blocks, " ")
	if len(block) > maxHeaderSize {
		return "", fmt.Errorf("bundle2: stream parameters of %d bytes", len(block))
	}
	return block, nil
}

func (bw *Writer) putInt32(v int32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(v))
	if _, err := bw.w.Write(b[:]); err != nil && bw.err == nil {
		bw.err = err
	}
}

// PartWriter writes one part's payload in PayloadChunkSize chunks.
type PartWriter struct {
	bw  *Writer
	buf []byte
}

// NewPart writes a part header. Parameters keep their order; part ids count
// from 0 as hg's bundler numbers them. Close the part before the next one.
func (bw *Writer) NewPart(typ string, mandatory bool, man, adv []Param) (*PartWriter, error) {
	if bw.err != nil {
		return nil, bw.err
	}
	if bw.open {
		return nil, errors.New("bundle2: previous part not closed")
	}
	h, err := encodePartHeader(typ, mandatory, bw.nextID, man, adv)
	if err != nil {
		return nil, err
	}
	bw.nextID++
	bw.putInt32(int32(len(h)))
	bw.w.Write(h)
	bw.open = true
	return &PartWriter{bw: bw, buf: make([]byte, 0, PayloadChunkSize)}, bw.err
}

// encodePartHeader encodes a part header (without its size), the reverse
// of parsePartHeader (bundlepart.getchunks): the type is upper-cased for
// a mandatory part, lower-cased for an advisory one.
func encodePartHeader(typ string, mandatory bool, id uint32, man, adv []Param) ([]byte, error) {
	if mandatory {
		typ = strings.ToUpper(typ)
	} else {
		typ = strings.ToLower(typ)
	}
	if len(typ) == 0 || !validPartType(typ) {
		return nil, fmt.Errorf("bundle2: invalid part %q", typ)
	}
	return appendPartHeader(nil, typ, id, man, adv)
}

// appendPartHeader appends a part header of a type taken as it is.
func appendPartHeader(h []byte, typ string, id uint32, man, adv []Param) ([]byte, error) {
	if len(typ) > 255 || len(man) > 255 || len(adv) > 255 {
		return nil, fmt.Errorf("bundle2: invalid part %q", typ)
	}
	h = append(h, byte(len(typ)))
	h = append(h, typ...)
	h = binary.BigEndian.AppendUint32(h, id)
	h = append(h, byte(len(man)), byte(len(adv)))
	all := append(append([]Param(nil), man...), adv...)
	for _, kv := range all {
		if len(kv.Name) > 255 || len(kv.Value) > 255 {
			return nil, fmt.Errorf("bundle2: part %q parameter %q too long", typ, kv.Name)
		}
		h = append(h, byte(len(kv.Name)), byte(len(kv.Value)))
	}
	for _, kv := range all {
		h = append(h, kv.Name...)
		h = append(h, kv.Value...)
	}
	return h, nil
}

// Write buffers payload and emits full chunks.
func (pw *PartWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := copy(pw.buf[len(pw.buf):cap(pw.buf)], p)
		pw.buf = pw.buf[:len(pw.buf)+k]
		p = p[k:]
		n += k
		if len(pw.buf) == cap(pw.buf) {
			pw.flushChunk()
		}
	}
	return n, pw.bw.err
}

func (pw *PartWriter) flushChunk() {
	if len(pw.buf) == 0 {
		return
	}
	pw.bw.putInt32(int32(len(pw.buf)))
	pw.bw.w.Write(pw.buf)
	pw.buf = pw.buf[:0]
}

// Close writes the last chunk and the end-of-payload marker.
func (pw *PartWriter) Close() error {
	pw.flushChunk()
	pw.bw.putInt32(0)
	pw.bw.open = false
	return pw.bw.err
}

// WritePart writes a whole part whose payload is data.
func (bw *Writer) WritePart(typ string, mandatory bool, man, adv []Param, data []byte) error {
	pw, err := bw.NewPart(typ, mandatory, man, adv)
	if err != nil {
		return err
	}
	pw.Write(data)
	return pw.Close()
}

// Close writes the end-of-stream marker and flushes.
func (bw *Writer) Close() error {
	if bw.open {
		return errors.New("bundle2: part not closed")
	}
	bw.putInt32(0)
	if err := bw.w.Flush(); err != nil && bw.err == nil {
		bw.err = err
	}
	if bw.finish != nil {
		if err := bw.finish(); err != nil && bw.err == nil {
			bw.err = err
		}
		bw.finish = nil
	}
	return bw.err
}
