package wireproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"

	"github.com/hgfs/hgfs/bundle2"
)

// Peer is a connection to a remote repository speaking version 1 of the
// wire protocol. Nodes are 40-digit lowercase hex strings.
//
// Calls on one Peer are not concurrent: a command's response must be read
// (a stream response closed) before the next command is sent.
type Peer interface {
	// URL is the location the peer was opened with (credentials kept).
	URL() string
	// Capabilities is the set the server advertised at connection time.
	Capabilities() Caps
	// Heads returns the repository's head nodes.
	Heads(ctx context.Context) ([]string, error)
	// ListKeys returns a pushkey namespace ("bookmarks", "phases", ...);
	// empty when the server lacks the pushkey capability.
	ListKeys(ctx context.Context, namespace string) (map[string]string, error)
	// Lookup resolves a revision symbol to a node.
	Lookup(ctx context.Context, key string) (string, error)
	// Branchmap returns each named branch's heads (hex, closed ones
	// included), in the server's order: increasing revision number.
	Branchmap(ctx context.Context) (map[string][]string, error)
	// StreamOut starts a legacy (v1) stream clone; the body starts with
	// the status line ("0\n", "1\n", "2\n") that streamclone.ApplyV1 reads.
	StreamOut(ctx context.Context) (io.ReadCloser, error)
	// GetBundle runs getbundle with already encoded arguments (see
	// StreamCloneArgs) and returns the decompressed bundle.
	GetBundle(ctx context.Context, args map[string]string) (io.ReadCloser, error)
	// Known reports which of nodes the server has (discovery).
	Known(ctx context.Context, nodes []string) ([]bool, error)
	// Close ends the connection; for ssh it waits for the remote process.
	Close() error
}

// Options configure how peers connect. The zero value works.
type Options struct {
	// HTTPClient makes HTTP requests; nil uses a client with a dial
	// timeout and no overall timeout (streams can be long; use ctx).
	HTTPClient *http.Client
	// SSHCommand is the ssh program and its options (hg's ui.ssh); run
	// through /bin/sh like hg does. Default "ssh".
	SSHCommand string
	// RemoteCommand is hg on the remote side (hg's ui.remotecmd).
	// Default "hg".
	RemoteCommand string
	// Stderr receives the remote side's messages ("remote: ..." lines)
	// and warnings such as "real URL is ..."; nil discards them.
	Stderr io.Writer
	// Quiet leaves out "real URL is ...", as hg -q does.
	Quiet bool
	// Debugf, if set, receives protocol debugging lines as hg --debug
	// prints them ("sending capabilities command").
	Debugf func(format string, args ...any)
	// MaxResponse bounds non-stream responses (capabilities, heads,
	// listkeys, lookup); default DefaultMaxResponse.
	MaxResponse int64
	// QuickAck makes the default HTTP client's connections acknowledge
	// each response as soon as it is read (TCP_QUICKACK after every
	// request, on Linux): hg serve's responses otherwise wait 40 ms each
	// on a kept-alive connection (quickack.go). It does not apply to an
	// HTTPClient given.
	QuickAck bool
}

// DefaultMaxResponse bounds non-stream responses. Real ones are a few
// kilobytes; listkeys on a repository with very many bookmarks is the
// largest legitimate case.
const DefaultMaxResponse = 64 << 20

func (o *Options) maxResponse() int64 {
	if o.MaxResponse > 0 {
		return o.MaxResponse
	}
	return DefaultMaxResponse
}

func (o *Options) debugf(format string, args ...any) {
	if o.Debugf != nil {
		o.Debugf(format, args...)
	}
}

func (o *Options) stderr() io.Writer {
	if o.Stderr != nil {
		return o.Stderr
	}
	return io.Discard
}

// Errors. Each is wrapped with context; test with errors.Is.
var (
	// ErrProtocol means the remote sent something that is not a valid
	// response (bad framing, bad node, bad content type version).
	ErrProtocol = errors.New("unexpected response")
	// ErrRemote means the server reported an error itself (an
	// application/hg-error response, or ssh out-of-band error); the
	// *RemoteError carries its message.
	ErrRemote = errors.New("remote error")
	// ErrNotRepository means the URL answered but not as Mercurial.
	ErrNotRepository = errors.New("not a Mercurial repository")
	// ErrTooLarge means a response exceeded Options.MaxResponse.
	ErrTooLarge = errors.New("response too large")
	// ErrUnsupported means the URL, the server's protocol version or a
	// compression engine is not one this client speaks.
	ErrUnsupported = errors.New("unsupported")
	// ErrConnection means the remote could not be reached or the
	// connection broke (*ConnError carries the cause).
	ErrConnection = errors.New("connection failed")
	// ErrLookup means a lookup key did not resolve on the server.
	ErrLookup = errors.New("unknown revision")
)

// RemoteError is an error the server reported; Error reads like hg's
// "remote error:\n<message>".
type RemoteError struct {
	Message string
	Hint    string
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return "remote error"
	}
	return "remote error:\n" + strings.TrimRight(e.Message, "\n")
}

func (e *RemoteError) Is(target error) bool { return target == ErrRemote }

// LookupError is a key the server's lookup did not resolve. Its message
// is the server's answer as sent ("unknown revision 'x'", "filtered
// revision 'x' (not in 'served' subset)"): hg raises it as is, after
// "abort: ", so it carries no prefix of its own.
type LookupError struct {
	Message string
}

func (e *LookupError) Error() string { return e.Message }

func (e *LookupError) Is(target error) bool { return target == ErrLookup }

// HTTPError is a non-success HTTP status; Error reads like hg's
// "HTTP Error 404: Not Found".
type HTTPError struct {
	URL    string // of the request that failed, without its query
	Code   int
	Reason string
	// Challenged: the server asked for credentials (WWW-Authenticate);
	// Authorized: the request carried some.
	Challenged, Authorized bool
}

func (e *HTTPError) Error() string {
	if e.Code == http.StatusUnauthorized {
		if e.Challenged && !e.Authorized {
			// What hg says when it has nothing to answer with and
			// cannot prompt (url.passwordmgr).
			return "http authorization required for " + e.URL
		}
		return "authorization failed"
	}
	return fmt.Sprintf("HTTP Error %d: %s", e.Code, e.Reason)
}

// ConnError is a failure to reach the remote or a broken connection; Error
// reads like hg's "error: Connection refused".
type ConnError struct {
	Op  string
	Err error
}

func (e *ConnError) Error() string {
	if e.Err == ErrIncompleteResponse {
		return e.Err.Error() // as hg prints it, without "error: "
	}
	return "error: " + describeNetError(e.Err)
}
func (e *ConnError) Unwrap() error { return e.Err }
func (e *ConnError) Is(target error) bool {
	return target == ErrConnection
}

// describeNetError renders a network error as Python's socket errors read
// (strerror, capitalised), so messages match hg's.
func describeNetError(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "Name or service not known"
		}
		if dns.IsTemporary {
			return "Temporary failure in name resolution"
		}
		return dns.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

// Open connects to source: http://, https:// or ssh:// URLs.
func Open(ctx context.Context, source string, opt Options) (Peer, error) {
	switch {
	case strings.HasPrefix(source, "http://"), strings.HasPrefix(source, "https://"):
		return DialHTTP(ctx, source, opt)
	case strings.HasPrefix(source, "ssh://"):
		return DialSSH(ctx, source, opt)
	}
	return nil, unsupportedf("unsupported URL scheme: %s", source)
}

// IsRemote reports whether source names a remote peer Open understands
// (rather than a local path or bundle file).
func IsRemote(source string) bool {
	for _, p := range []string{"http://", "https://", "ssh://"} {
		if strings.HasPrefix(source, p) {
			return true
		}
	}
	return false
}

// ClientBundle2Caps is what this client advertises in getbundle's
// bundlecaps: bundle2 features it can receive (keep in sync with
// mercurial/bundle2.py capabilities). Changegroups are not listed: this
// client only stream-clones.
func ClientBundle2Caps() Bundle2Caps {
	return Bundle2Caps{
		"HG20":       nil,
		"bookmarks":  nil,
		"error":      {"abort", "unsupportedcontent", "pushraced", "pushkey"},
		"listkeys":   nil,
		"obsmarkers": {"V0", "V1"},
		"phases":     {"heads"},
		"stream":     {"v2"},
	}
}

// StreamCloneArgs returns getbundle's arguments for a bundle2 (v2) stream
// clone, as exchange.py _pullbundle2 sends them with streaming on, but
// for heads: bundlecaps (HG20 plus our quoted bundle2 capabilities),
// common = null, cg=0, stream=1, and bookmarks=1 when the server can send
// a binary bookmarks part.
//
// hg sends the heads its discovery found, one request (heads) before
// this one. A stream-only getbundle does not read them: hg's server
// (exchange.getbundlechunks and its part generators: stream2 and
// bookmarks use none, and phases and obsmarkers, not asked for here, take
// the repository's own heads when none are given) and hgfs serve alike
// stream the whole store, and the bookmarks part lists them all, at the
// moment the request is served. So the clone leaves them out and saves
// that round trip: a network's round trip per clone, about 2 ms of hg
// serve's Python on loopback.
func StreamCloneArgs(server Bundle2Caps) map[string]string {
	bundlecaps := []string{"HG20", "bundle2=" + bundle2.Quote(ClientBundle2Caps().Encode())}
	sort.Strings(bundlecaps)
	args := map[string]string{
		"bundlecaps": strings.Join(bundlecaps, ","),
		"common":     NullHex,
		"cg":         "0",
		"stream":     "1",
	}
	if server.Has("bookmarks") {
		args["bookmarks"] = "1"
	}
	return args
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readBounded reads all of r, refusing more than max bytes.
func readBounded(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s response exceeds %d bytes", ErrTooLarge, what, max)
	}
	return data, nil
}

// Response decoders shared by the HTTP and ssh peers.

func decodeHeads(data []byte) ([]string, error) {
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		return nil, fmt.Errorf("%w: heads: %q", ErrProtocol, truncate(s, 100))
	}
	heads, err := DecodeNodes(s[:len(s)-1])
	if err != nil {
		return nil, fmt.Errorf("%w: heads: %w", ErrProtocol, err)
	}
	return heads, nil
}

// decodeBranchmap parses a branchmap response as wireprotov1peer's
// branchmap: one line a branch, its name URL-quoted, a space, its heads
// space-separated. What does not parse is ErrProtocol.
func decodeBranchmap(data []byte) (map[string][]string, error) {
	m := map[string][]string{}
	if len(data) == 0 {
		return m, nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, heads, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%w: branchmap: %q", ErrProtocol, truncate(line, 100))
		}
		nodes, err := DecodeNodes(heads)
		if err != nil {
			return nil, fmt.Errorf("%w: branchmap: %w", ErrProtocol, err)
		}
		m[bundle2.Unquote(name)] = nodes
	}
	return m, nil
}

func decodeLookup(data []byte) (string, error) {
	s := strings.TrimSuffix(string(data), "\n")
	ok, rest, found := strings.Cut(s, " ")
	if !found {
		return "", fmt.Errorf("%w: lookup: %q", ErrProtocol, truncate(s, 100))
	}
	switch ok {
	case "1":
		if !ValidHex(rest) {
			return "", fmt.Errorf("%w: lookup: bad node %q", ErrProtocol, truncate(rest, 100))
		}
		return rest, nil
	case "0":
		return "", &LookupError{Message: rest}
	}
	return "", fmt.Errorf("%w: lookup: %q", ErrProtocol, truncate(s, 100))
}

// unsupportedError is an ErrUnsupported carrying hg's message as it
// is: %w would prefix it with "unsupported: ", which hg's do not have
// (its "unsupported URL component", "couldn't parse location").
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string        { return e.msg }
func (e *unsupportedError) Is(target error) bool { return target == ErrUnsupported }

// The errors of a peer asked for a command its server lacks, in hg's
// words (wireprotov1peer's requirecap).
var (
	errNoLookup    = unsupportedf("cannot look up remote revision; remote repository does not support the 'lookup' capability")
	errNoGetbundle = unsupportedf("cannot look up remote changes; remote repository does not support the 'getbundle' capability")
)

func unsupportedf(format string, a ...any) error {
	return &unsupportedError{msg: fmt.Sprintf(format, a...)}
}
