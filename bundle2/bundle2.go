package bundle2

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
// Keep in sync with mercurial/bundle2.py (unbundle20, unbundlepart,
// _readpartheader, interrupthandler).

import (
	"compress/bzip2"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
)

const (
	// Magic starts a bundle2 stream.
	Magic = "HG20"
	// PayloadChunkSize is the payload chunk size hg writes
	// (bundle2.preferedchunksize); keep in sync with mercurial/bundle2.py.
	PayloadChunkSize = 32768

	// maxHeaderSize bounds stream parameter blocks and part headers. A valid
	// part header is at most 1+255+4+2+2*510+2*510*255 bytes (~261 KiB).
	maxHeaderSize = 1 << 20
	// MaxZstdWindow bounds a zstd decoder's memory for untrusted bundles;
	// hg compresses bundles at level 3 (8 MiB windows at most).
	MaxZstdWindow = 64 << 20
)

// Param is a bundle2 stream or part parameter.
type Param struct {
	Name, Value string
}

// Reader reads a bundle2 stream part by part.
type Reader struct {
	raw    *countingReader // before decompression
	body   *countingReader // after decompression
	closer io.Closer       // decompressor to release, if any
	Params []Param         // stream-level parameters, unquoted
	// Compression is the stream's Compression parameter ("" when absent).
	Compression string

	cur *Part
	// Interrupt handles an out-of-band part sent in the middle of another
	// part's payload (chunk size -1). It must read the part to its end (or
	// return an error). nil means DefaultInterrupt.
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

	br        *Reader
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

// readFull is io.ReadFull with an unexpected EOF turned into ErrMalformed.
func readFull(r io.Reader, buf []byte, what string, off int64) error {
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return malformedf("stream ended unexpectedly reading %s at offset %d", what, off)
		}
		return fmt.Errorf("reading %s at offset %d: %w", what, off, err)
	}
	return nil
}

// NewReader reads the magic and stream parameters of a bundle2
// stream and sets up decompression. Unknown mandatory stream parameters
// are refused with ErrUnsupported.
func NewReader(r io.Reader) (*Reader, error) {
	br := &Reader{raw: &countingReader{r: r}}
	var magic [4]byte
	if err := readFull(br.raw, magic[:], "bundle2 magic", 0); err != nil {
		return nil, err
	}
	if string(magic[:]) != Magic {
		return nil, malformedf("not a bundle2 stream: magic %q, want %q", magic[:], Magic)
	}
	var sz [4]byte
	if err := readFull(br.raw, sz[:], "bundle2 parameter size", br.raw.n); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	var err error
	if n < 0 {
		return nil, malformedf("negative bundle param size: %d", n)
	}
	if n > maxHeaderSize {
		return nil, malformedf("bundle2 stream parameters too large: %d bytes (limit %d)", n, maxHeaderSize)
	}
	if n > 0 {
		block := make([]byte, n)
		if err := readFull(br.raw, block, "bundle2 stream parameters", br.raw.n); err != nil {
			return nil, err
		}
		if br.Params, br.Compression, err = parseStreamParams(string(block)); err != nil {
			return nil, err
		}
	}
	body, closer, err := decompress(br.Compression, br.raw, func(err error) error {
		return malformedf("compressed bundle2 body: %v", err)
	})
	if err != nil {
		return nil, err
	}
	br.body = &countingReader{r: body}
	br.closer = closer
	return br, nil
}

// parseStreamParams decodes a stream parameter block: space-separated,
// URL-quoted name[=value] (unbundle20._processallparams). It returns the
// parameters in order, unquoted, and the Compression parameter's value.
// An unknown mandatory parameter (upper-case first letter), or an unknown
// compression, is ErrUnsupported.
func parseStreamParams(block string) (params []Param, compression string, err error) {
	for _, p := range strings.Split(block, " ") {
		name, value, hasValue := strings.Cut(p, "=")
		name, value = Unquote(name), Unquote(value)
		if name == "" {
			return nil, "", malformedf("empty bundle2 stream parameter name")
		}
		if c := name[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return nil, "", malformedf("bundle2 stream parameter %q: non letter first character", name)
		}
		params = append(params, Param{name, value})
		switch strings.ToLower(name) {
		case "compression":
			if !hasValue {
				return nil, "", unsupportedf("missing support for Stream Parameter - %s", name)
			}
			switch value {
			case "UN", "GZ", "BZ", "ZS":
				compression = value
			default:
				return nil, "", unsupportedf("missing support for Stream Parameter - %s=%q", name, value)
			}
		default:
			if 'A' <= name[0] && name[0] <= 'Z' {
				return nil, "", unsupportedf("missing support for Stream Parameter - %s", name)
			}
		}
	}
	return params, compression, nil
}

// Decompress returns the reader of a bundle body compressed as comp, a
// bundle compression type ("UN" or "" for none, "GZ" a zlib stream, "BZ"
// bzip2 with its "BZ" magic, "ZS" zstd with at most MaxZstdWindow), and
// the decompressor to release, if any. HG20's Compression stream
// parameter and HG10's header name the same types (keep in sync with
// mercurial/utils/compression.py bundle types). The zlib stream is opened
// at the first Read, so an empty body reports truncation where the data
// is first needed; errors are the decompressor's own.
func Decompress(comp string, r io.Reader) (io.Reader, io.Closer, error) {
	return decompress(comp, r, nil)
}

// decompress is Decompress; wrapOpen, if not nil, wraps the error of a
// zlib stream that does not open.
func decompress(comp string, r io.Reader, wrapOpen func(error) error) (io.Reader, io.Closer, error) {
	switch comp {
	case "", "UN":
		return r, nil, nil
	case "GZ":
		// hg's "GZ" bundle type is a zlib stream.
		return &lazyReader{open: func() (io.Reader, error) { return zlib.NewReader(r) }, wrap: wrapOpen}, nil, nil
	case "BZ":
		return bzip2.NewReader(r), nil, nil
	case "ZS":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(MaxZstdWindow))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd decoder: %w", err)
		}
		return d, closerFunc(d.Close), nil
	}
	return nil, nil, unsupportedf("compression %q", comp)
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// lazyReader opens its reader at the first Read.
type lazyReader struct {
	open func() (io.Reader, error)
	wrap func(error) error // of an open error, if not nil
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
		if l.err != nil && l.wrap != nil {
			l.err = l.wrap(l.err)
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

// Close releases the decompressor. It does not close the underlying reader.
func (br *Reader) Close() error {
	if br.closer != nil {
		err := br.closer.Close()
		br.closer = nil
		return err
	}
	return nil
}

// Offset is the number of (decompressed) body bytes read so far, for error
// messages.
func (br *Reader) Offset() int64 { return br.body.n }

func (br *Reader) readInt32(what string) (int32, error) {
	var b [4]byte
	if err := readFull(br.body, b[:], what, br.body.n); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// NextPart skips whatever is left of the current part and returns the next
// one, or io.EOF at the end-of-stream marker.
func (br *Reader) NextPart() (*Part, error) {
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
				return nil, malformedf("data after the end of the bundle2 stream at offset %d", br.body.n)
			}
			if err != io.EOF {
				return nil, malformedf("compressed bundle2 body: %v", err)
			}
		}
		return nil, io.EOF
	}
	br.cur = p
	return p, nil
}

// readPart reads a part header; nil at the end-of-stream marker.
func (br *Reader) readPart() (*Part, error) {
	off := br.body.n
	n, err := br.readInt32("part header size")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, malformedf("negative part header size: %d at offset %d", n, off)
	}
	if n == 0 {
		return nil, nil
	}
	if n > maxHeaderSize {
		return nil, malformedf("part header too large: %d bytes at offset %d", n, off)
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
		return malformedf("part header too short (%d bytes) reading %s", len(h), what)
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
	if !validPartType(typ) {
		return nil, malformedf("invalid part type %q", typ)
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
		return nil, malformedf("%d trailing bytes in part header of %q", len(h), typ)
	}
	return p, nil
}

// validPartType reports whether a part type has only the characters
// bundle2.validateparttype allows ([a-zA-Z0-9_:-]).
func validPartType(typ string) bool {
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
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
			return n, malformedf("stream ended unexpectedly in payload of part %q (%d bytes missing)", p.Type, p.remaining)
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
			return malformedf("negative payload chunk size: %d in part %q at offset %d", n, p.Type, off)
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
func (br *Reader) interrupt() error {
	if br.inInterrupt {
		return malformedf("nested bundle2 stream interruption at offset %d", br.body.n)
	}
	br.inInterrupt = true
	defer func() { br.inInterrupt = false }()
	p, err := br.readPart()
	if err != nil || p == nil {
		return err // no part found during interruption: resume
	}
	h := br.Interrupt
	if h == nil {
		h = DefaultInterrupt
	}
	if err := h(p); err != nil {
		return err
	}
	return p.Discard()
}

// DefaultInterrupt is the Reader's default Interrupt handler: an error:*
// part is its *RemoteError, a mandatory part is ErrUnsupported, an
// advisory part is skipped.
func DefaultInterrupt(p *Part) error {
	if err := p.RemoteError(); err != nil {
		return err
	}
	if p.Mandatory {
		return unsupportedf("missing support for %s (in a stream interruption)", p.Type)
	}
	return p.Discard()
}

// UnknownParams returns the part's mandatory parameters outside known
// (the parameters its handler declares), sorted as hg reports them in
// "missing support for <type> - <params>" (bundle2._gethandler).
func (p *Part) UnknownParams(known []string) []string {
	var out []string
	for _, kv := range p.MandatoryParams {
		if !slices.Contains(known, kv.Name) {
			out = append(out, kv.Name)
		}
	}
	sort.Strings(out)
	return out
}

// RemoteError returns the *RemoteError an error:* part carries, nil for
// other parts. Keep in sync with the error:* handlers in
// mercurial/bundle2.py.
func (p *Part) RemoteError() error {
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
