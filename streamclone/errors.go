package streamclone

import (
	"errors"
	"fmt"
)

// Errors are grouped by what went wrong. Every error an Apply function
// returns wraps one of these (errors.Is), with context: the file being
// written, the offset in the stream where it helps.
var (
	// ErrCorrupt: the stream is malformed (bad framing, a size or count that
	// lies, a truncated stream, an invalid name). Nothing was made visible.
	// An error of package bundle2 (bundle2.ErrMalformed,
	// ErrMalformedKeys) matches it too, keeping its own message.
	ErrCorrupt = errors.New("malformed stream clone data")

	// ErrUnsafeName: a file name in the stream is absolute, contains "..",
	// NUL, a newline, or would land outside the store or cache directory.
	// Always wrapped together with ErrCorrupt's context.
	ErrUnsafeName = errors.New("unsafe file name in stream")

	// ErrUnsupportedRequirement: the stream needs a repository format this
	// implementation does not know; checked before anything is written.
	ErrUnsupportedRequirement = errors.New("unsupported repository requirement")

	// ErrUnsupportedPart: a mandatory bundle2 part (or mandatory part or
	// stream parameter) has no handler here, or a packed1 bundle is
	// compressed. Mercurial calls this "missing support for ...". An
	// error of package bundle2 (bundle2.ErrUnsupported) matches it too.
	ErrUnsupportedPart = errors.New("unsupported bundle2 content")

	// ErrForbidden: the server refused the v1 stream (status 1).
	ErrForbidden = errors.New("operation forbidden by server")

	// ErrRemoteLock: the server could not lock its repository (v1 status 2).
	ErrRemoteLock = errors.New("locking the remote repository failed")

	// ErrRemote: the server reported an error: a v1 status this package
	// does not know (*RemoteError), or a bundle2 error:* part
	// (*bundle2.RemoteError, which matches it too).
	ErrRemote = errors.New("remote error")

	// ErrDestNotEmpty: the destination of a DirSink exists and is not an
	// empty directory.
	ErrDestNotEmpty = errors.New("destination is not empty")

	// ErrSinkClosed: Create after Finish or Abort.
	ErrSinkClosed = errors.New("sink already finished or aborted")
)

// RemoteError is a v1 stream_out status code this package does not know
// (bundle2 error:* parts are *bundle2.RemoteError). Error() reads like
// Mercurial's output ("remote: abort: ...").
type RemoteError struct {
	Kind    string // "stream_out"
	Message string
}

func (e *RemoteError) Error() string { return "remote: abort: " + e.Message }

func (e *RemoteError) Unwrap() error { return ErrRemote }

// corruptf wraps ErrCorrupt with context.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
