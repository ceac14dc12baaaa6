package wireproto

// The server side of the HTTP wire protocol, read-only, as hg serve's
// hgweb answers it (mercurial/wireprotoserver.py handlewsgirequest and
// _callhttp, wireprotov1server.py commands):
//
//	GET /?cmd=capabilities     -> application/mercurial-0.1, space-separated caps
//	GET /?cmd=<cmd> + X-HgArg-N -> application/mercurial-0.1 body, or for
//	                              getbundle (a "streamres") 0.2 with a
//	                              compression header when the client sent
//	                              X-HgProto-1 "0.2", else zlib-compressed 0.1
//	errors the client should print -> application/hg-error
//
// Only the ?cmd= query selects what runs: a request path other than "/"
// with a command is a 404 (as hgweb answers), and no request path is ever
// mapped to the filesystem. Push commands are refused as hgweb refuses a
// push it does not allow. A request without ?cmd= gets the repository's
// page (web.go).
//
// Each request opens the repository afresh, so a server sees commits made
// while it runs, and nothing is cached between requests.

import (
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Media types and status line of hgweb (keep in sync with
// mercurial/wireprotoserver.py HGTYPE, HGTYPE2, HGERRTYPE).
const statusOK = "Script output follows"

// ServerConfig is what hg reads from [server], [phases] and [web] for
// serving. The zero value is not hg's default: use DefaultServerConfig.
type ServerConfig struct {
	Uncompressed            bool // server.uncompressed: allow stream clones
	UncompressedAllowSecret bool // server.uncompressedallowsecret
	Bundle2Stream           bool // server.bundle2.stream: offer stream=v2
	PreferUncompressed      bool // server.preferuncompressed: stream-preferred
	Publishing              bool // phases.publish
	// ExchangeMarkers is obsolete.isenabled(repo, exchangeopt)
	// (experimental.evolution): advertise and send obsolescence markers
	// with changegroups.
	ExchangeMarkers bool
	// Changegroup3 is experimental.changegroup3: offer changegroup
	// version 03 (hg 6.3 and 7.2 offer 01 and 02 by default).
	Changegroup3     bool
	MaxHTTPHeaderLen int // server.maxhttpheaderlen (httpheader= cap)
	ZstdLevel        int // server.zstdlevel
	ZlibLevel        int // server.zliblevel (-1: zlib's default)
	// LockTimeout bounds the wait for the repository lock before a
	// stream is refused (v1 "2\n", bundle2 error:abort).
	LockTimeout time.Duration
	// WriteTimeout, when not 0, bounds each write to a client: a client
	// that accepts nothing for that long is dropped (and the error
	// logged), a slow but moving one may take as long as it needs. hg
	// serve has no such bound, and neither has the default: a client
	// paused or starved of CPU on a loaded machine would lose a clone it
	// was going to finish. Dead peers are found by TCP keepalive.
	WriteTimeout time.Duration
	// MaxStreams bounds the stream clones (stream_out, and getbundle
	// with stream=1) sent at once; later ones wait their turn before
	// opening the repository, so a waiting request holds no index in
	// memory, and give up their place when their client leaves. 0 lifts
	// the bound. The price of a bound: MaxStreams clients that keep
	// reading, however slowly, keep everyone else waiting; without one, a
	// crowd of clients grows the server's memory and descriptors without
	// limit.
	MaxStreams int
	// TurnDir, when set, shares the MaxStreams turns between every
	// server given the same directory, in this process or another (one
	// lock file per turn): `hgfs serve --stdio` is one process per ssh
	// session, and its sessions take turns together. Where the
	// directory cannot be used, the turns are the process's own.
	TurnDir string
	// StoreWalkers is how many goroutines a stream's snapshot walks the
	// store with (store.Store.Walkers): 0 for the store's default, 1
	// for a serial walk (hgfs serve with HGFS_TUNE=-walkfork).
	StoreWalkers int
	// AccessLog and ErrorLog receive hg-style log lines; nil discards.
	AccessLog io.Writer
	ErrorLog  io.Writer
	// Web is what the page at / shows besides the repository (web.go).
	Web WebConfig
}

// DefaultServerConfig returns hg 6.3's defaults (mercurial/configitems.py).
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Uncompressed:     true,
		Bundle2Stream:    true,
		Publishing:       true,
		MaxHTTPHeaderLen: 1024,
		ZstdLevel:        3,
		ZlibLevel:        -1,
		LockTimeout:      30 * time.Second,
		MaxStreams:       16,
	}
}

// Server answers wire protocol requests for one repository. It is an
// http.Handler and safe for concurrent use.
type Server struct {
	root   string
	cfg    ServerConfig
	logMu  sync.Mutex
	snapMu sync.Mutex // one snapshot (lock holder) at a time; see server_stream.go

	turns   chan struct{} // a token per stream being sent; nil: unbounded
	waiting atomic.Int32  // streams waiting for a turn

	zstd zstdPool // response encoders (server_zstd.go)
}

// NewServer serves the repository whose root (the directory holding .hg)
// is root. The repository is opened once to check it is one hgfs reads.
func NewServer(root string, cfg ServerConfig) (*Server, error) {
	s := &Server{root: root, cfg: cfg, zstd: zstdPool{level: cfg.ZstdLevel}}
	if cfg.MaxStreams > 0 {
		s.turns = make(chan struct{}, cfg.MaxStreams)
	}
	v, err := s.open()
	if err != nil {
		return nil, err
	}
	v.close()
	return s, nil
}

// HTTPServer returns an http.Server for h with bounded request headers
// (request line included) and header read time, and no overall read or
// write timeout, since a stream clone may legitimately run for hours:
// writes are bounded one by one instead (ServerConfig.WriteTimeout).
// (A ReadTimeout would also cut streams: net/http's background read hits
// the deadline while the handler writes and cancels the request's
// context.) Request bodies are never read: push is refused outright.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxArgBytes + 64<<10,
	}
}

// pushCommands are the v1 commands needing "push" permission
// (wireprotov1server.py @wireprotocommand(..., permission=b'push')).
var pushCommands = map[string]bool{"unbundle": true, "pushkey": true}

// pullCommands are the commands served.
var pullCommands = map[string]bool{
	"capabilities": true, "batch": true, "heads": true, "known": true,
	"listkeys": true, "branchmap": true, "lookup": true, "stream_out": true,
	"getbundle": true, "changegroup": true, "changegroupsubset": true,
	"between": true, "branches": true, "clonebundles": true, "clonebundles_manifest": true,
}

// otherCommands are commands hg knows that hgfs serve does not implement
// (they answer as unavailable rather than as "not a wire command").
var otherCommands = map[string]bool{
	"debugwireargs": true, "hello": true, "protocaps": true,
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &logRecorder{ResponseWriter: w, status: 200}
	defer s.logAccess(r, rec)
	if len(r.URL.RawQuery) > maxArgBytes {
		s.plain(rec, http.StatusBadRequest, fmt.Sprintf("0\nquery string exceeds %d bytes\n", maxArgBytes))
		return
	}
	cmd, hasCmd := firstQueryValue(r.URL.RawQuery, "cmd")
	if s.cfg.Web.ReadDenied {
		readDenied(rec, hasCmd) // web.go
		return
	}
	if !hasCmd {
		s.servePage(rec, r) // web.go
		return
	}
	if !(pullCommands[cmd] || pushCommands[cmd] || otherCommands[cmd]) {
		rec.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rec.WriteHeader(http.StatusNotFound)
		io.WriteString(rec, "hgfs serve speaks only the Mercurial wire protocol (?cmd=...)\n")
		return
	}
	if r.URL.Path != "/" && r.URL.Path != "" {
		// hgweb: "/blah?cmd=foo" is not a wire protocol request.
		s.plain(rec, http.StatusNotFound, "0\nNot Found\n")
		return
	}
	if pushCommands[cmd] {
		if r.Method != http.MethodPost {
			s.plain(rec, http.StatusMethodNotAllowed, "0\npush requires POST request\n")
		} else {
			s.refusePush(rec, r)
		}
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		s.plain(rec, http.StatusMethodNotAllowed, "0\nmethod not allowed\n")
		return
	}
	if otherCommands[cmd] {
		s.hgError(rec, "requested wire protocol command is not available over HTTP")
		return
	}
	args, err := requestArgs(r)
	if err != nil {
		s.plain(rec, http.StatusBadRequest, "0\n"+err.Error()+"\n")
		return
	}
	pc, err := parseProtoCaps(r.Header)
	if err != nil {
		s.plain(rec, http.StatusBadRequest, "0\n"+err.Error()+"\n")
		return
	}
	s.dispatch(r.Context(), rec, cmd, args, pc)
}

func (s *Server) dispatch(ctx context.Context, w *logRecorder, cmd string, args map[string]string, pc protoCaps) {
	switch cmd {
	case "stream_out":
		s.httpStreamOut(ctx, w)
		return
	case "getbundle":
		s.httpGetbundle(ctx, w, args, pc)
		return
	case "changegroup", "changegroupsubset":
		s.httpLegacyChangegroup(ctx, w, cmd, args, pc)
		return
	}
	out, err := s.answer(cmd, args, pc)
	if errors.Is(err, ErrBadRequest) {
		s.plain(w, http.StatusBadRequest, "0\n"+err.Error()+"\n")
		return
	}
	if err != nil {
		s.serverError(w, cmd, err)
		return
	}
	s.ok(w, out)
}

// httpStreamEnd answers a stream command's error: before the response
// started, as an error response; after, by cutting the connection.
func (s *Server) httpStreamEnd(ctx context.Context, w *logRecorder, cmd string, started bool, err error) {
	var oob *oobError
	switch {
	case err == nil:
	case started:
		s.logError("%s: %v", cmd, err)
		abortResponse()
	case ctx.Err() != nil:
		// The client is gone: nobody to answer.
	case errors.Is(err, ErrBadRequest):
		s.plain(w, http.StatusBadRequest, "0\n"+err.Error()+"\n")
	case errors.As(err, &oob):
		s.hgError(w, oob.msg)
	default:
		s.serverError(w, cmd, err)
	}
}

// ok answers a bytes response.
func (s *Server) ok(w *logRecorder, body string) {
	w.Header().Set("Content-Type", mediaTypeV1)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeaderStatus(http.StatusOK, statusOK)
	io.WriteString(w, body)
}

// hgError answers an "ooberror": the client prints the message.
func (s *Server) hgError(w *logRecorder, msg string) {
	w.Header().Set("Content-Type", mediaTypeError)
	w.WriteHeaderStatus(http.StatusOK, statusOK)
	io.WriteString(w, msg)
}

// msgReadOnly is the refusal of a push, the reason phrase of the 403 a
// client prints ("abort: HTTP Error 403: ...") as it prints hg serve's
// "ssl required" or "push not authorized".
const msgReadOnly = "hgfs serve is read-only: push not allowed"

// maxPushDrain bounds the push body read before answering: a client
// still sending its bundle would see a broken pipe instead of the
// answer.
const maxPushDrain = 16 << 20

// refusePush answers a push as hgweb answers one it does not allow
// (ErrorResponse: the message as the status line's reason and in the
// body). net/http writes only standard reason phrases, so the response is
// written on the hijacked connection where it can be.
func (s *Server) refusePush(w *logRecorder, r *http.Request) {
	io.CopyN(io.Discard, r.Body, maxPushDrain)
	body := "0\n" + msgReadOnly + "\n"
	conn, bufrw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		s.plain(w, http.StatusForbidden, body)
		return
	}
	defer conn.Close()
	w.status = http.StatusForbidden
	fmt.Fprintf(bufrw, "HTTP/1.1 403 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		msgReadOnly, mediaTypeV1, len(body), body)
	bufrw.Flush()
}

func (s *Server) plain(w *logRecorder, code int, body string) {
	w.Header().Set("Content-Type", mediaTypeV1)
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// serverError reports a failure on the server side: logged in full, the
// client gets hg's "500 Internal Server Error".
func (s *Server) serverError(w *logRecorder, cmd string, err error) {
	s.logError("%s: %v", cmd, err)
	s.plain(w, http.StatusInternalServerError, "0\nInternal Server Error\n")
}

func (s *Server) logError(format string, args ...any) {
	if s.cfg.ErrorLog == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.ErrorLog, format+"\n", args...)
}

// logAccess writes hg's access log line (hgweb/server.py log_request):
//
//	127.0.0.1 - - [30/Nov/2026 01:25:39] "GET /?cmd=heads HTTP/1.1" 200 - x-hgarg-1:...
func (s *Server) logAccess(r *http.Request, rec *logRecorder) {
	writeAccessLog(s.cfg.AccessLog, &s.logMu, r, rec.status)
}

// writeAccessLog writes r's access log line to w (nil: nowhere) under
// mu. RequestURI is the request's own (a WebDir hands a repository's
// Server a copy with a shorter path).
func writeAccessLog(w io.Writer, mu *sync.Mutex, r *http.Request, status int) {
	if w == nil {
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	var xh []string
	for k, v := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-") && len(v) > 0 {
			xh = append(xh, " "+lk+":"+v[0])
		}
	}
	sort.Strings(xh)
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	line := fmt.Sprintf("%s - - [%s] \"%s %s %s\" %d -%s\n", host, time.Now().Format("02/Jan/2006 15:04:05"),
		r.Method, uri, r.Proto, status, strings.Join(xh, ""))
	mu.Lock()
	defer mu.Unlock()
	io.WriteString(w, line)
}

// logRecorder remembers the status for the access log and bounds each
// write with the configured deadline.
type logRecorder struct {
	http.ResponseWriter
	status   int
	timeout  time.Duration
	rc       *http.ResponseController
	deadline time.Time
}

// WriteHeaderStatus writes code; the reason phrase of hgweb ("Script
// output follows") is what Go's server sends as the standard text, which
// clients ignore.
func (l *logRecorder) WriteHeaderStatus(code int, _ string) { l.WriteHeader(code) }

func (l *logRecorder) WriteHeader(code int) {
	l.status = code
	l.ResponseWriter.WriteHeader(code)
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.moveDeadline()
	return l.ResponseWriter.Write(p)
}

func (l *logRecorder) moveDeadline() {
	if l.timeout > 0 {
		// Moving the deadline on every write costs a timer reset; doing it
		// at most once a second keeps that off the hot path.
		now := time.Now()
		if now.Add(l.timeout - time.Second).After(l.deadline) {
			l.deadline = now.Add(l.timeout)
			_ = l.rc.SetWriteDeadline(l.deadline)
		}
	}
}

// ReadFrom is Write's counterpart for large copies (a file sent with
// sendfile by the response when its body is not chunked); callers hand
// it bounded pieces, so moving the deadline per call bounds each piece.
func (l *logRecorder) ReadFrom(r io.Reader) (int64, error) {
	l.moveDeadline()
	if rf, ok := l.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{l.ResponseWriter}, r)
}

// limitWrites enables the per-write deadline for a long response.
func (l *logRecorder) limitWrites(d time.Duration) {
	if d <= 0 {
		return
	}
	l.timeout = d
	l.rc = http.NewResponseController(l.ResponseWriter)
	_ = l.rc.SetWriteDeadline(time.Time{})
}

func firstQueryValue(q, name string) (string, bool) {
	m := map[string]string{}
	if len(q) > maxArgBytes || parseQuery(q, m) != nil {
		return "", false
	}
	v, ok := m[name]
	return v, ok
}

// streamResponse starts a "streamres" response (getbundle) and returns
// the writer for the uncompressed payload, with the media type and
// engine chosen as wireprotoserver._httpresponsetype does. Close the
// writer to finish compression.
func (s *Server) streamResponse(w *logRecorder, pc protoCaps, preferUncompressed bool) (io.WriteCloser, error) {
	engine := "zlib"
	media := mediaTypeV1
	if pc.v02 {
		media = mediaTypeV2
		engine = ""
		if preferUncompressed {
			engine = "none"
		} else {
			for _, e := range serverEngines {
				if contains(pc.comp, e) {
					engine = e
					break
				}
			}
		}
		if engine == "" {
			media, engine = mediaTypeV1, "zlib"
		}
	}
	w.Header().Set("Content-Type", media)
	w.WriteHeaderStatus(http.StatusOK, statusOK)
	w.limitWrites(s.cfg.WriteTimeout)
	if media == mediaTypeV2 {
		if _, err := w.Write(append([]byte{byte(len(engine))}, engine...)); err != nil {
			return nil, err
		}
	}
	switch engine {
	case "zstd":
		return s.zstd.get(w)
	case "zlib":
		return zlib.NewWriterLevel(w, s.cfg.ZlibLevel)
	}
	return nopWriteCloser{w}, nil
}

// serverEngines are the compression engines served, in server priority
// order (mercurial/utils/compression.py: zstd 50, zlib 20; "none" is
// never advertised).
var serverEngines = []string{"zstd", "zlib"}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
