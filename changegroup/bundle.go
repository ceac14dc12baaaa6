package changegroup

// Bundle files, as exchange.readbundle tells them apart:
//
//	"HG10" + alg(2) + changegroup v1
//	       alg "UN": uncompressed; "GZ": a zlib stream; "BZ": a bzip2
//	       stream whose own "BZ" magic doubles as the alg (hg writes
//	       "HG10" then the raw bzip2 stream, and its reader feeds "BZ" back
//	       to the decompressor: _TruncatedBZ2CompressedStreamReader);
//	       "ZS": zstd (accepted by hg's cg1unpacker, never written by it)
//	"HG20" + bundle2 stream (bundle2.Reader; its Compression parameter
//	       covers the parts)
//	"HGS1" packed1 stream bundle               -> ErrStreamBundle
//	"HG2x" other, "HGxx" other                 -> ErrUnsupported
//
// Bundle2 parts are handled as bundle2.py's part handlers dispatch them
// (_gethandler): a part without a handler, or with a mandatory parameter
// its handler does not know, is an error when the part is mandatory and
// skipped when advisory. Keep in sync with mercurial/exchange.py,
// mercurial/bundle2.py and mercurial/utils/compression.py.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// knownParts maps the bundle2 part types this package hands to its caller
// to the parameters their hg handler declares (a mandatory parameter
// outside the list is "missing support"). Keep in sync with the
// @parthandler declarations in mercurial/bundle2.py.
var knownParts = map[string][]string{
	"changegroup":            {"version", "nbchanges", "exp-sidedata", "exp-wanted-sidedata", "treemanifest", "targetphase"},
	"phase-heads":            nil,
	"bookmarks":              nil,
	"listkeys":               {"namespace"},
	"hgtagsfnodes":           nil,
	"cache:rev-branch-cache": nil,
	"obsmarkers":             nil,
	"output":                 nil,
}

// Bundle reads a bundle file part by part.
type Bundle struct {
	// Type is "HG10UN", "HG10GZ", "HG10BZ", "HG10ZS" or "HG20".
	Type string
	// Compression is "UN", "GZ", "BZ" or "ZS" (for HG20: its Compression
	// stream parameter, "" when absent).
	Compression string
	// Params are the HG20 stream parameters.
	Params []bundle2.Param

	src     *sourceReader
	body    io.Reader // HG10: the decompressed changegroup
	closer  io.Closer
	b2      *bundle2.Reader
	pending *bundle2.Part // HG20: first part, read by OpenBundle
	done    bool
}

// BundlePart is one part of a bundle. An HG10 bundle has a single
// changegroup part. Its readers are valid until the next NextPart call,
// which skips whatever the caller left unread.
type BundlePart struct {
	Type      string // lower case: "changegroup", "phase-heads", ...
	Mandatory bool
	Params    map[string]string // mandatory and advisory parameters

	// Changegroup is set for "changegroup" parts: a Reader of the part's
	// "version" parameter (default "01").
	Changegroup *Reader
	// NbChanges is the "nbchanges" parameter (number of changesets), -1
	// when absent.
	NbChanges int
	// TargetPhase is the "targetphase" parameter, -1 when absent (the
	// changesets then arrive draft, as hg's apply default).
	TargetPhase int

	// PhaseHeads is the decoded "phase-heads" part.
	PhaseHeads []PhaseHead
	// Bookmarks and DeletedBookmarks are the decoded "bookmarks" part.
	Bookmarks        map[string][20]byte
	DeletedBookmarks []string
	// Listkeys is the decoded "listkeys" part; Params["namespace"] names
	// the pushkey namespace.
	Listkeys map[string]string
	// Payload is the raw payload of the other known parts
	// ("hgtagsfnodes", "cache:rev-branch-cache", "obsmarkers", "output"),
	// which callers may ignore.
	Payload io.Reader
}

// OpenBundle reads a bundle file's header. HGS1 bundles, and HG20 bundles
// starting with a stream2 part, are refused with ErrStreamBundle.
func OpenBundle(r io.Reader) (*Bundle, error) {
	b := &Bundle{src: &sourceReader{r: r}}
	var magic [4]byte
	if _, err := io.ReadFull(b.src, magic[:]); err != nil {
		return nil, b.truncated(err, "bundle header")
	}
	m := string(magic[:])
	switch {
	case m == "HG10":
		return b.openV1()
	case m == "HG20":
		return b.openV2(m)
	case m == "HGS1":
		return nil, fmt.Errorf("%w: packed1 (HGS1) bundle", ErrStreamBundle)
	case strings.HasPrefix(m, "HG"):
		return nil, unsupportedf("unknown bundle version %q", m[2:])
	}
	return nil, also(ErrCorrupt, fmt.Errorf("%w (header %q)", ErrNotBundle, m))
}

func (b *Bundle) truncated(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf("bundle ended unexpectedly reading %s", what)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

func (b *Bundle) openV1() (*Bundle, error) {
	var alg [2]byte
	if _, err := io.ReadFull(b.src, alg[:]); err != nil {
		return nil, b.truncated(err, "bundle compression type")
	}
	b.Compression = string(alg[:])
	b.Type = "HG10" + b.Compression
	var src io.Reader = b.src
	switch b.Compression {
	case "UN", "GZ", "ZS":
		// GZ is zlib, despite the name; opened lazily so a bad header is a
		// read error with the rest of the stream's.
	case "BZ":
		src = io.MultiReader(strings.NewReader("BZ"), b.src)
	default:
		return nil, unsupportedf("unknown stream compression type: %q", b.Compression)
	}
	body, closer, err := bundle2.Decompress(b.Compression, src)
	if err != nil {
		return nil, err
	}
	b.closer = closer
	b.body = &decodedReader{r: body, b: b}
	return b, nil
}

func (b *Bundle) openV2(magic string) (*Bundle, error) {
	br, err := bundle2.NewReader(io.MultiReader(strings.NewReader(magic), b.src))
	if err != nil {
		return nil, b.classify(err)
	}
	b.Type, b.b2, b.closer = "HG20", br, br
	b.Compression, b.Params = br.Compression, br.Params
	p, err := br.NextPart()
	switch {
	case err == io.EOF:
		b.done = true
	case err != nil:
		br.Close()
		return nil, b.classify(err)
	case p.Type == "stream2":
		br.Close()
		return nil, fmt.Errorf("%w: bundle2 with a stream2 part", ErrStreamBundle)
	default:
		b.pending = p
	}
	return b, nil
}

// Close releases the decompressor. It does not close the underlying reader.
func (b *Bundle) Close() error {
	if b.closer != nil {
		err := b.closer.Close()
		b.closer = nil
		return err
	}
	return nil
}

// NextPart returns the next part the caller may need to handle, or io.EOF
// after the last. Advisory parts without a handler are skipped; mandatory
// ones are refused with ErrUnsupported ("missing support for ..."); error
// parts come back as *bundle2.RemoteError.
func (b *Bundle) NextPart() (*BundlePart, error) {
	if b.done {
		return nil, io.EOF
	}
	if b.b2 == nil {
		b.done = true
		cg, err := NewReader(b.body, Version1)
		if err != nil {
			return nil, err
		}
		// A compressed stream must end with the changegroup (reading to
		// its end verifies its checksum); bytes after an uncompressed one
		// are ignored, as hg ignores them.
		cg.requireEOF = b.Compression != "UN"
		return &BundlePart{Type: "changegroup", Mandatory: true, Params: map[string]string{},
			Changegroup: cg, NbChanges: -1, TargetPhase: -1}, nil
	}
	for {
		p := b.pending
		b.pending = nil
		if p == nil {
			var err error
			p, err = b.b2.NextPart()
			if err == io.EOF {
				b.done = true
				return nil, io.EOF
			}
			if err != nil {
				return nil, b.classify(err)
			}
		}
		bp, err := b.part(p)
		if err != nil || bp != nil {
			return bp, err
		}
	}
}

// part turns a bundle2 part into a BundlePart; nil for a skipped part.
func (b *Bundle) part(p *bundle2.Part) (*BundlePart, error) {
	if err := p.RemoteError(); err != nil {
		return nil, err
	}
	if p.Type == "stream2" {
		return nil, fmt.Errorf("%w: bundle2 with a stream2 part", ErrStreamBundle)
	}
	known, ok := knownParts[p.Type]
	if !ok {
		if p.Mandatory {
			return nil, unsupportedf("missing support for %s", p.Type)
		}
		return nil, nil
	}
	if unknown := p.UnknownParams(known); len(unknown) > 0 {
		if p.Mandatory {
			return nil, unsupportedf("missing support for %s - %s", p.Type, strings.Join(unknown, ", "))
		}
		return nil, nil
	}
	bp := &BundlePart{Type: p.Type, Mandatory: p.Mandatory, Params: map[string]string{},
		NbChanges: -1, TargetPhase: -1}
	for _, l := range [][]bundle2.Param{p.MandatoryParams, p.AdvisoryParams} {
		for _, kv := range l {
			bp.Params[kv.Name] = kv.Value
		}
	}
	payload := &decodedReader{r: p, b: b}
	var err error
	switch p.Type {
	case "changegroup":
		err = b.changegroupPart(bp, payload)
	case "phase-heads":
		bp.PhaseHeads, err = DecodePhaseHeads(payload)
	case "bookmarks":
		bp.Bookmarks, bp.DeletedBookmarks, err = bundle2.DecodeBookmarks(payload)
	case "listkeys":
		bp.Listkeys, err = bundle2.DecodeKeys(payload)
	default:
		bp.Payload = payload
	}
	if err != nil {
		return nil, b.classify(fmt.Errorf("bundle2 part %q: %w", p.Type, err))
	}
	return bp, nil
}

func (b *Bundle) changegroupPart(bp *BundlePart, payload io.Reader) error {
	version := "01"
	if v, ok := bp.Params["version"]; ok {
		version = v
	}
	if _, ok := bp.Params["treemanifest"]; ok {
		return unsupportedf("tree manifests are not supported")
	}
	for _, k := range []string{"nbchanges", "targetphase"} {
		s, ok := bp.Params[k]
		if !ok {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return corruptf("invalid %s parameter %q", k, s)
		}
		if k == "nbchanges" {
			bp.NbChanges = v
		} else {
			if !validPhase(v) {
				return corruptf("invalid targetphase parameter %q", s)
			}
			bp.TargetPhase = v
		}
	}
	cg, err := NewReader(payload, version)
	if err != nil {
		return err
	}
	// hg asserts the part holds nothing after the changegroup.
	cg.requireEOF = true
	bp.Changegroup = cg
	return nil
}

// classify maps errors of the layers below (bundle2 framing,
// decompressors) to this package's sentinels. Errors of the underlying
// reader (I/O) pass through unchanged.
func (b *Bundle) classify(err error) error {
	var re *bundle2.RemoteError
	switch {
	case err == nil || err == io.EOF:
		return err
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrUnsupported), errors.Is(err, ErrStreamBundle):
		return err
	case errors.As(err, &re):
		return err
	case errors.Is(err, bundle2.ErrMalformed), errors.Is(err, bundle2.ErrMalformedKeys):
		return also(ErrCorrupt, err)
	case errors.Is(err, bundle2.ErrUnsupported):
		return also(ErrUnsupported, err)
	case b.src.err != nil && errors.Is(err, b.src.err):
		return err
	}
	// A decompressor's complaint: bad data or a stream cut short.
	return also(ErrCorrupt, fmt.Errorf("%s bundle: %w", b.Type, err))
}

// sourceReader remembers the underlying reader's last error, so that
// errors coming up through a decompressor can be told apart from I/O
// errors.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// decodedReader classifies the errors of a reader of decoded bundle data.
type decodedReader struct {
	r io.Reader
	b *Bundle
}

func (d *decodedReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	return n, d.b.classify(err)
}
