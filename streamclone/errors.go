package streamclone

import (
	"errors"
	"fmt"
	"strings"
)

// Errors are grouped by what went wrong. Every error an Apply function
// returns wraps one of these (errors.Is), with context: the file being
// written, the offset in the stream where it helps.
var (
	// ErrCorrupt: the stream is malformed (bad framing, a size or count that
	// lies, a truncated stream, an invalid name). Nothing was made visible.
	ErrCorrupt = errors.New("malformed stream clone data")

	// ErrUnsafeName: a file name in the stream is absolute, contains "..",
	// NUL, a newline, or would land outside the store or cache directory.
	// Always wrapped together with ErrCorrupt's context.
	ErrUnsafeName = errors.New("unsafe file name in stream")

	// ErrUnsupportedRequirement: the stream needs a repository format this
	// implementation does not know; checked before anything is written.
	ErrUnsupportedRequirement = errors.New("unsupported repository requirement")

	// ErrUnsupportedPart: a mandatory bundle2 part (or mandatory part or
	// stream parameter) has no handler here. Mercurial calls this
	// "missing support for ...".
	ErrUnsupportedPart = errors.New("unsupported bundle2 content")

	// ErrForbidden: the server refused the v1 stream (status 1).
	ErrForbidden = errors.New("operation forbidden by server")

	// ErrRemoteLock: the server could not lock its repository (v1 status 2).
	ErrRemoteLock = errors.New("locking the remote repository failed")

	// ErrRemote: the server reported an error (v1 unknown status, bundle2
	// error:* parts). *RemoteError carries the message and hint.
	ErrRemote = errors.New("remote error")

	// ErrDestNotEmpty: the destination of a DirSink exists and is not an
	// empty directory.
	ErrDestNotEmpty = errors.New("destination is not empty")

	// ErrSinkClosed: Create after Finish or Abort.
	ErrSinkClosed = errors.New("sink already finished or aborted")
)

// RemoteError is an error the other side sent: a bundle2 error:abort,
// error:pushraced, error:unsupportedcontent or error:pushkey part, or a v1
// status code. Error() reads like Mercurial's output ("remote: abort: ...").
type RemoteError struct {
	Kind    string // part type ("error:abort", ...) or "stream_out"
	Message string
	Hint    string
}

func (e *RemoteError) Error() string {
	var b strings.Builder
	switch e.Kind {
	case "error:pushraced":
		b.WriteString("push failed: " + e.Message)
	case "error:unsupportedcontent":
		b.WriteString("missing support for " + e.Message)
	default:
		b.WriteString("remote: abort: " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

func (e *RemoteError) Unwrap() error { return ErrRemote }

// corruptf wraps ErrCorrupt with context.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
