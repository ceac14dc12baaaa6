package changegroup

import (
	"errors"
	"fmt"
)

// Errors are grouped by what the caller can do about them. Every error a
// decoder returns wraps one of these (errors.Is), with context: the group,
// the offset in the changegroup stream.
var (
	// ErrCorrupt: the bytes contradict the format: a truncated stream, a
	// chunk length that lies, a compressed stream that does not decompress,
	// an unsafe file name, a bundle2 part that does not parse.
	ErrCorrupt = errors.New("malformed changegroup")

	// ErrUnsupported: well-formed input this package does not handle: a
	// changegroup version other than 01/02/03, tree manifests, an unknown
	// bundle version or compression, an unknown mandatory bundle2 part or
	// parameter ("missing support for ..." in Mercurial's words).
	ErrUnsupported = errors.New("unsupported changegroup content")

	// ErrStreamBundle: the bundle is a stream clone bundle (HGS1 packed1, or
	// a bundle2 whose content is a stream2 part). It carries store files,
	// not a changegroup: apply it with a stream clone instead.
	ErrStreamBundle = errors.New("bundle is a stream clone bundle")

	// ErrNotBundle: the input does not start like any Mercurial bundle
	// (hg: "not a Mercurial bundle"). It also matches ErrCorrupt.
	ErrNotBundle = errors.New("not a Mercurial bundle")
)

// corruptf wraps ErrCorrupt with context.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// unsupportedf wraps ErrUnsupported with context.
func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// alsoError keeps a lower layer's error (its message and errors.Is chain)
// while making errors.Is(err, sentinel) hold too, so callers test this
// package's sentinels whichever layer noticed the problem.
type alsoError struct {
	sentinel error
	err      error
}

func (e *alsoError) Error() string   { return e.err.Error() }
func (e *alsoError) Unwrap() []error { return []error{e.sentinel, e.err} }

func also(sentinel, err error) error {
	if err == nil || errors.Is(err, sentinel) {
		return err
	}
	return &alsoError{sentinel, err}
}
