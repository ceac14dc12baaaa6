package bundle2

import (
	"errors"
	"fmt"
	"strings"
)

// Errors are grouped by what went wrong. Every error a decoder returns
// wraps one of these (errors.Is), with context: the offset in the stream,
// the part, the line.
var (
	// ErrMalformed: the bytes contradict the bundle2 format (bad magic or
	// framing, a size that lies, a truncated stream, a bookmarks part that
	// does not parse).
	ErrMalformed = errors.New("malformed bundle2 data")

	// ErrMalformedKeys: pushkey data (a listkeys part or a listkeys
	// response) that is not "key\tvalue" lines, or a bookmarks namespace
	// value that is not a node.
	ErrMalformedKeys = errors.New("malformed listkeys data")

	// ErrUnsupported: well-formed content the reader cannot handle: an
	// unknown mandatory stream parameter or compression, a mandatory part
	// in a stream interruption. Mercurial calls this "missing support for
	// ...".
	ErrUnsupported = errors.New("unsupported bundle2 content")

	// ErrRemote: the other side sent an error:* part; *RemoteError carries
	// its message and hint.
	ErrRemote = errors.New("remote error")
)

// RemoteError is an error the other side sent as a bundle2 error:abort,
// error:pushraced, error:unsupportedcontent or error:pushkey part.
// Error() reads like Mercurial's output ("remote: abort: ...").
type RemoteError struct {
	Kind    string // part type: "error:abort", ...
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

// malformedf wraps ErrMalformed with context.
func malformedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// unsupportedf wraps ErrUnsupported with context.
func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
