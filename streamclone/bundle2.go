package streamclone

// Bundle2 container (HG20), as mercurial/bundle2.py reads and writes it:
//
//	magic        "HG20"
//	params size  int32 (big-endian, >= 0)
//	params       space-separated, URL-quoted name[=value]; a name starting
//	             with an upper-case letter is mandatory. "Compression" (BZ,
//	             GZ, ZS, UN) compresses everything after this point.
//	parts, each:
//	  header size int32 (0 = end of stream, < 0 invalid)
//	  header      type size uint8, type ([a-zA-Z0-9_:-]; any upper case =
//	              mandatory part), part id uint32, mandatory param count
//	              uint8, advisory param count uint8, (key size uint8, value
//	              size uint8) per param, then keys and values
//	  payload     chunks: size int32 + bytes; 0 ends the part; -1 is an
//	              interruption: an out-of-band part (header + payload) follows,
//	              then the chunks of the interrupted part resume; any other
//	              negative size is invalid.
//
// Keep in sync with mercurial/bundle2.py.

import (
	"bufio"
	"compress/bzip2"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

const (
	bundle2Magic = "HG20"
	// PayloadChunkSize is the payload chunk size hg writes
	// (bundle2.preferedchunksize); keep in sync with mercurial/bundle2.py.
	PayloadChunkSize = 32768

	// maxHeaderSize bounds stream parameter blocks and part headers. A valid
	// part header is at most 1+255+4+2+2*510+2*510*255 bytes (~261 KiB).
	maxHeaderSize = 1 << 20
	// maxZstdWindow bounds a zstd decoder's memory for untrusted bundles;
	// hg compresses bundles at level 3 (8 MiB windows at most).
	maxZstdWindow = 64 << 20
)

// Param is a bundle2 stream or part parameter.
type Param struct {
	Name, Value string
}

// Bundle2Reader reads a bundle2 stream part by part.
type Bundle2Reader struct {
	raw    *countingReader // before decompression
	body   *countingReader // after decompression
	closer io.Closer       // decompressor to release, if any
	Params []Param         // stream-level parameters, unquoted
	// Compression is the stream's Compression parameter ("" when absent).
	Compression string

	cur *Part
	// Interrupt handles an out-of-band part sent in the middle of another
	// part's payload (chunk size -1). It must read the part to its end (or
	// return an error). The default treats error:* parts as errors and
	// skips advisory parts.
	Interrupt   func(*Part) error
	inInterrupt bool
	eof         bool
}

// Part is one bundle2 part. Read returns its payload; io.EOF at its end.
type Part struct {
	Type            string // lower-cased
	Mandatory       bool   // the type had an upper-case letter
	ID              uint32
	MandatoryParams []Param
	AdvisoryParams  []Param

	br        *Bundle2Reader
	remaining int64 // bytes left in the current chunk
	done      bool  // the closing zero-size chunk was read
}

// Param returns the value of a parameter (mandatory or advisory).
func (p *Part) Param(name string) (string, bool) {
	for _, l := range [][]Param{p.MandatoryParams, p.AdvisoryParams} {
		for _, kv := range l {
			if kv.Name == name {
				return kv.Value, true
			}
		}
	}
	return "", false
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readFull is io.ReadFull with an unexpected EOF turned into ErrCorrupt.
func readFull(r io.Reader, buf []byte, what string, off int64) error {
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corruptf("stream ended unexpectedly reading %s at offset %d", what, off)
		}
		return fmt.Errorf("reading %s at offset %d: %w", what, off, err)
	}
	return nil
}

// NewBundle2Reader reads the magic and stream parameters of a bundle2
// stream and sets up decompression. Unknown mandatory stream parameters
// are refused with ErrUnsupportedPart.
func NewBundle2Reader(r io.Reader) (*Bundle2Reader, error) {
	br := &Bundle2Reader{raw: &countingReader{r: r}}
	var magic [4]byte
	if err := readFull(br.raw, magic[:], "bundle2 magic", 0); err != nil {
		return nil, err
	}
	if string(magic[:]) != bundle2Magic {
		return nil, corruptf("not a bundle2 stream: magic %q, want %q", magic[:], bundle2Magic)
	}
	var sz [4]byte
	if err := readFull(br.raw, sz[:], "bundle2 parameter size", br.raw.n); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 0 {
		return nil, corruptf("negative bundle param size: %d", n)
	}
	if n > maxHeaderSize {
		return nil, corruptf("bundle2 stream parameters too large: %d bytes (limit %d)", n, maxHeaderSize)
	}
	if n > 0 {
		block := make([]byte, n)
		if err := readFull(br.raw, block, "bundle2 stream parameters", br.raw.n); err != nil {
			return nil, err
		}
		if err := br.parseStreamParams(string(block)); err != nil {
			return nil, err
		}
	}
	body, closer, err := decompressor(br.Compression, br.raw)
	if err != nil {
		return nil, err
	}
	br.body = &countingReader{r: body}
	br.closer = closer
	return br, nil
}

func (br *Bundle2Reader) parseStreamParams(block string) error {
	for _, p := range strings.Split(block, " ") {
		name, value, hasValue := strings.Cut(p, "=")
		name, value = Unquote(name), Unquote(value)
		if name == "" {
			return corruptf("empty bundle2 stream parameter name")
		}
		if c := name[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return corruptf("bundle2 stream parameter %q: non letter first character", name)
		}
		br.Params = append(br.Params, Param{name, value})
		switch strings.ToLower(name) {
		case "compression":
			if !hasValue {
				return fmt.Errorf("%w: missing support for Stream Parameter - %s", ErrUnsupportedPart, name)
			}
			switch value {
			case "UN", "GZ", "BZ", "ZS":
				br.Compression = value
			default:
				return fmt.Errorf("%w: missing support for Stream Parameter - %s=%q", ErrUnsupportedPart, name, value)
			}
		default:
			if 'A' <= name[0] && name[0] <= 'Z' {
				return fmt.Errorf("%w: missing support for Stream Parameter - %s", ErrUnsupportedPart, name)
			}
		}
	}
	return nil
}

// decompressor returns the reader of the bundle2 body for a Compression
// parameter (keep in sync with mercurial/utils/compression.py bundle types).
func decompressor(comp string, r io.Reader) (io.Reader, io.Closer, error) {
	switch comp {
	case "", "UN":
		return r, nil, nil
	case "GZ":
		// hg's "GZ" bundle type is a zlib stream, started lazily so an empty
		// body reports truncation when the first part header is read.
		return &lazyReader{open: func() (io.Reader, error) { return zlib.NewReader(r) }}, nil, nil
	case "BZ":
		return bzip2.NewReader(r), nil, nil
	case "ZS":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd decoder: %w", err)
		}
		return d, closerFunc(d.Close), nil
	}
	return nil, nil, fmt.Errorf("%w: compression %q", ErrUnsupportedPart, comp)
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

type lazyReader struct {
	open func() (io.Reader, error)
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
		if l.err != nil {
			l.err = corruptf("compressed bundle2 body: %v", l.err)
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

// Close releases the decompressor. It does not close the underlying reader.
func (br *Bundle2Reader) Close() error {
	if br.closer != nil {
		err := br.closer.Close()
		br.closer = nil
		return err
	}
	return nil
}

// Offset is the number of (decompressed) body bytes read so far, for error
// messages.
func (br *Bundle2Reader) Offset() int64 { return br.body.n }

func (br *Bundle2Reader) readInt32(what string) (int32, error) {
	var b [4]byte
	if err := readFull(br.body, b[:], what, br.body.n); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// NextPart skips whatever is left of the current part and returns the next
// one, or io.EOF at the end-of-stream marker.
func (br *Bundle2Reader) NextPart() (*Part, error) {
	if br.eof {
		return nil, io.EOF
	}
	if br.cur != nil {
		if err := br.cur.Discard(); err != nil {
			return nil, err
		}
		br.cur = nil
	}
	p, err := br.readPart()
	if err != nil {
		return nil, err
	}
	if p == nil {
		br.eof = true
		if br.Compression != "" && br.Compression != "UN" {
			// Read the compressed stream to its end so its checksum (zlib,
			// zstd, bzip2) is verified: a truncated bundle file is an error
			// even when the end-of-stream marker made it through.
			var b [1]byte
			n, err := io.ReadFull(br.body, b[:])
			if n > 0 {
				return nil, corruptf("data after the end of the bundle2 stream at offset %d", br.body.n)
			}
			if err != io.EOF {
				return nil, corruptf("compressed bundle2 body: %v", err)
			}
		}
		return nil, io.EOF
	}
	br.cur = p
	return p, nil
}

// readPart reads a part header; nil at the end-of-stream marker.
func (br *Bundle2Reader) readPart() (*Part, error) {
	off := br.body.n
	n, err := br.readInt32("part header size")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, corruptf("negative part header size: %d at offset %d", n, off)
	}
	if n == 0 {
		return nil, nil
	}
	if n > maxHeaderSize {
		return nil, corruptf("part header too large: %d bytes at offset %d", n, off)
	}
	h := make([]byte, n)
	if err := readFull(br.body, h, "part header", br.body.n); err != nil {
		return nil, err
	}
	p, err := parsePartHeader(h)
	if err != nil {
		return nil, fmt.Errorf("part header at offset %d: %w", off, err)
	}
	p.br = br
	return p, nil
}

func parsePartHeader(h []byte) (*Part, error) {
	short := func(what string) error {
		return corruptf("part header too short (%d bytes) reading %s", len(h), what)
	}
	if len(h) < 1 {
		return nil, short("type size")
	}
	ts := int(h[0])
	h = h[1:]
	if len(h) < ts+4+2 {
		return nil, short("type")
	}
	typ := string(h[:ts])
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == ':' || c == '-') {
			return nil, corruptf("invalid part type %q", typ)
		}
	}
	p := &Part{Type: strings.ToLower(typ), Mandatory: typ != strings.ToLower(typ)}
	h = h[ts:]
	p.ID = binary.BigEndian.Uint32(h)
	man, adv := int(h[4]), int(h[5])
	h = h[6:]
	if len(h) < 2*(man+adv) {
		return nil, short("parameter sizes")
	}
	sizes := h[:2*(man+adv)]
	h = h[2*(man+adv):]
	for i := 0; i < man+adv; i++ {
		ks, vs := int(sizes[2*i]), int(sizes[2*i+1])
		if len(h) < ks+vs {
			return nil, short("parameters")
		}
		kv := Param{string(h[:ks]), string(h[ks : ks+vs])}
		h = h[ks+vs:]
		if i < man {
			p.MandatoryParams = append(p.MandatoryParams, kv)
		} else {
			p.AdvisoryParams = append(p.AdvisoryParams, kv)
		}
	}
	if len(h) != 0 {
		return nil, corruptf("%d trailing bytes in part header of %q", len(h), typ)
	}
	return p, nil
}

// Read reads the part's payload.
func (p *Part) Read(buf []byte) (int, error) {
	for p.remaining == 0 {
		if p.done {
			return 0, io.EOF
		}
		if err := p.nextChunk(); err != nil {
			return 0, err
		}
	}
	if int64(len(buf)) > p.remaining {
		buf = buf[:p.remaining]
	}
	n, err := p.br.body.Read(buf)
	p.remaining -= int64(n)
	if err == io.EOF {
		if p.remaining > 0 {
			return n, corruptf("stream ended unexpectedly in payload of part %q (%d bytes missing)", p.Type, p.remaining)
		}
		err = nil
	}
	return n, err
}

func (p *Part) nextChunk() error {
	for {
		off := p.br.body.n
		n, err := p.br.readInt32("payload chunk size")
		if err != nil {
			return fmt.Errorf("part %q: %w", p.Type, err)
		}
		switch {
		case n > 0:
			p.remaining = int64(n)
			return nil
		case n == 0:
			p.done = true
			return nil
		case n == -1:
			if err := p.br.interrupt(); err != nil {
				return err
			}
		default:
			return corruptf("negative payload chunk size: %d in part %q at offset %d", n, p.Type, off)
		}
	}
}

// Discard reads the rest of the payload.
func (p *Part) Discard() error {
	var buf [8192]byte
	for {
		_, err := p.Read(buf[:])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// interrupt reads and handles an out-of-band part (bundle2.interrupthandler).
func (br *Bundle2Reader) interrupt() error {
	if br.inInterrupt {
		return corruptf("nested bundle2 stream interruption at offset %d", br.body.n)
	}
	br.inInterrupt = true
	defer func() { br.inInterrupt = false }()
	p, err := br.readPart()
	if err != nil || p == nil {
		return err // no part found during interruption: resume
	}
	h := br.Interrupt
	if h == nil {
		h = defaultInterrupt
	}
	if err := h(p); err != nil {
		return err
	}
	return p.Discard()
}

func defaultInterrupt(p *Part) error {
	if err := errorPart(p); err != nil {
		return err
	}
	if p.Mandatory {
		return fmt.Errorf("%w: missing support for %s (in a stream interruption)", ErrUnsupportedPart, p.Type)
	}
	return p.Discard()
}

// errorPart turns error:* parts into a *RemoteError; nil for other parts.
// Keep in sync with the error:* handlers in mercurial/bundle2.py.
func errorPart(p *Part) error {
	get := func(k string) string { v, _ := p.Param(k); return v }
	switch p.Type {
	case "error:abort":
		return &RemoteError{Kind: p.Type, Message: get("message"), Hint: get("hint")}
	case "error:pushraced":
		return &RemoteError{Kind: p.Type, Message: get("message")}
	case "error:unsupportedcontent":
		msg := get("parttype")
		if msg == "" {
			msg = "Stream Parameter"
		}
		if params, ok := p.Param("params"); ok && params != "" {
			msg += " - " + strings.Join(strings.Split(params, "\x00"), ", ")
		}
		return &RemoteError{Kind: p.Type, Message: msg}
	case "error:pushkey":
		return &RemoteError{Kind: p.Type, Message: fmt.Sprintf("pushkey failed (namespace %s, key %s)", get("namespace"), get("key"))}
	}
	if strings.HasPrefix(p.Type, "error:") {
		return &RemoteError{Kind: p.Type, Message: "unknown remote error " + p.Type}
	}
	return nil
}

// Bundle2Writer writes an uncompressed bundle2 stream.
type Bundle2Writer struct {
	w      *bufio.Writer
	nextID uint32
	open   bool
	err    error
}

// NewBundle2Writer writes the magic and stream parameters. A Compression
// parameter is refused: stream bundles are written uncompressed, as hg does.
func NewBundle2Writer(w io.Writer, params ...Param) (*Bundle2Writer, error) {
	bw := &Bundle2Writer{w: bufio.NewWriterSize(w, 64<<10)}
	var blocks []string
	for _, p := range params {
		if strings.EqualFold(p.Name, "compression") {
			return nil, fmt.Errorf("streamclone: compressed bundle2 output is not supported")
		}
		s := Quote(p.Name)
		if p.Value != "" {
			s += "=" + Quote(p.Value)
		}
		blocks = append(blocks, s)
	}
	block := strings.Join(blocks, " ")
	bw.w.WriteString(bundle2Magic)
	bw.putInt32(int32(len(block)))
	bw.w.WriteString(block)
	return bw, bw.err
}

func (bw *Bundle2Writer) putInt32(v int32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(v))
	if _, err := bw.w.Write(b[:]); err != nil && bw.err == nil {
		bw.err = err
	}
}

// PartWriter writes one part's payload in PayloadChunkSize chunks.
type PartWriter struct {
	bw  *Bundle2Writer
	buf []byte
}

// NewPart writes a part header. Parameters keep their order; part ids count
// from 0 as hg's bundler numbers them. Close the part before the next one.
func (bw *Bundle2Writer) NewPart(typ string, mandatory bool, man, adv []Param) (*PartWriter, error) {
	if bw.err != nil {
		return nil, bw.err
	}
	if bw.open {
		return nil, errors.New("streamclone: previous bundle2 part not closed")
	}
	if mandatory {
		typ = strings.ToUpper(typ)
	} else {
		typ = strings.ToLower(typ)
	}
	if len(typ) == 0 || len(typ) > 255 || len(man) > 255 || len(adv) > 255 {
		return nil, fmt.Errorf("streamclone: invalid part %q", typ)
	}
	h := []byte{byte(len(typ))}
	h = append(h, typ...)
	h = binary.BigEndian.AppendUint32(h, bw.nextID)
	bw.nextID++
	h = append(h, byte(len(man)), byte(len(adv)))
	all := append(append([]Param(nil), man...), adv...)
	for _, kv := range all {
		if len(kv.Name) > 255 || len(kv.Value) > 255 {
			return nil, fmt.Errorf("streamclone: part %q parameter %q too long", typ, kv.Name)
		}
		h = append(h, byte(len(kv.Name)), byte(len(kv.Value)))
	}
	for _, kv := range all {
		h = append(h, kv.Name...)
		h = append(h, kv.Value...)
	}
	bw.putInt32(int32(len(h)))
	bw.w.Write(h)
	bw.open = true
	return &PartWriter{bw: bw, buf: make([]byte, 0, PayloadChunkSize)}, bw.err
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
func (bw *Bundle2Writer) WritePart(typ string, mandatory bool, man, adv []Param, data []byte) error {
	pw, err := bw.NewPart(typ, mandatory, man, adv)
	if err != nil {
		return err
	}
	pw.Write(data)
	return pw.Close()
}

// Close writes the end-of-stream marker and flushes.
func (bw *Bundle2Writer) Close() error {
	if bw.open {
		return errors.New("streamclone: bundle2 part not closed")
	}
	bw.putInt32(0)
	if err := bw.w.Flush(); err != nil && bw.err == nil {
		bw.err = err
	}
	return bw.err
}
