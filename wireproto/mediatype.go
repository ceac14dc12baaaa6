package wireproto

// HTTP response payloads (mercurial/httppeer.py parsev1commandresponse,
// mercurial/wireprotoserver.py _callhttp):
//
//	Content-Type: application/mercurial-0.1
//	    body is the raw response; for "compressible" commands (getbundle)
//	    it is a zlib stream.
//	Content-Type: application/mercurial-0.2
//	    +------+----------------+----------------------------------+
//	    | len  | engine name    | body compressed with that engine |
//	    | 1 B  | len bytes      | zstd | zlib | none               |
//	    +------+----------------+----------------------------------+
//	Content-Type: application/hg-error
//	    body is an error message from the server.

import (
	"bufio"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Media type names (keep in sync with mercurial/wireprototypes.py).
const (
	mediaTypeV1    = "application/mercurial-0.1"
	mediaTypeV2    = "application/mercurial-0.2"
	mediaTypeError = "application/hg-error"
	mediaPrefix    = "application/mercurial-"
)

// clientCompression lists the engines this client decodes, in preference
// order, as sent in X-HgProto-1 "comp=".
var clientCompression = []string{"zstd", "zlib", "none"}

// zstdMaxWindow bounds the zstd window a server can make us allocate.
// Mercurial's levels use windows of a few MiB.
const zstdMaxWindow = 128 << 20

// parseMediaVersion returns the protocol version of an
// application/mercurial-X.Y content type.
func parseMediaVersion(contentType string) (major, minor int, err error) {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.TrimSpace(ct)
	sub, ok := strings.CutPrefix(ct, mediaPrefix)
	if !ok {
		return 0, 0, fmt.Errorf("%w: content type %q", ErrNotRepository, contentType)
	}
	a, b, ok := strings.Cut(sub, ".")
	if !ok {
		return 0, 0, fmt.Errorf("%w: broken Content-Type header (%s)", ErrProtocol, contentType)
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, fmt.Errorf("%w: broken Content-Type header (%s)", ErrProtocol, contentType)
	}
	return major, minor, nil
}

// payloadReader returns the decoded payload of a response body of the given
// media version, and the name of the compression engine it uses.
// compressible marks commands whose 0.1 responses are zlib.
func payloadReader(major, minor int, body io.Reader, compressible bool) (io.ReadCloser, string, error) {
	switch {
	case major == 0 && minor == 1:
		if compressible {
			r, err := newDecompressor("zlib", body)
			return r, "zlib", err
		}
		return io.NopCloser(body), "none", nil
	case major == 0 && minor == 2:
		var n [1]byte
		if _, err := io.ReadFull(body, n[:]); err != nil {
			return nil, "", fmt.Errorf("%w: reading compression header: %v", ErrProtocol, eofIsUnexpected(err))
		}
		name := make([]byte, n[0]) // at most 255 bytes
		if _, err := io.ReadFull(body, name); err != nil {
			return nil, "", fmt.Errorf("%w: reading compression header: %v", ErrProtocol, eofIsUnexpected(err))
		}
		r, err := newDecompressor(string(name), body)
		return r, string(name), err
	}
	return nil, "", unsupportedf("server uses newer protocol %d.%d", major, minor)
}

// newDecompressor wraps r with the named wire compression engine.
func newDecompressor(engine string, r io.Reader) (io.ReadCloser, error) {
	switch engine {
	case "none":
		return io.NopCloser(r), nil
	case "zlib":
		// zlib.NewReader reads the header at once; defer that to the first
		// Read so an error surfaces where the data is consumed.
		return &lazyZlib{r: bufio.NewReaderSize(r, 32<<10)}, nil
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return &zstdCloser{d}, nil
	}
	return nil, unsupportedf("unsupported compression engine %q", truncate(engine, 64))
}

type lazyZlib struct {
	r   *bufio.Reader
	z   io.ReadCloser
	err error
}

func (l *lazyZlib) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.z == nil {
		z, err := zlib.NewReader(l.r)
		if err != nil {
			l.err = fmt.Errorf("%w: zlib: %v", ErrProtocol, eofIsUnexpected(err))
			return 0, l.err
		}
		l.z = z
	}
	n, err := l.z.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zlib: %w", err)
	}
	return n, err
}

func (l *lazyZlib) Close() error {
	if l.z != nil {
		return l.z.Close()
	}
	return nil
}

type zstdCloser struct{ d *zstd.Decoder }

func (z *zstdCloser) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zstd: %w", err)
	}
	return n, err
}

func (z *zstdCloser) Close() error {
	z.d.Close()
	return nil
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
