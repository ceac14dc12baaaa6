package wireproto

// The HTTP transport (mercurial/httppeer.py): every command is
//
//	GET <base>?cmd=<name>
//	X-HgArg-1: <urlencoded sorted args, split into headers of at most the
//	           server's httpheader= size>
//	X-HgProto-1: 0.1 0.2 comp=zstd,zlib,none
//
// capabilities is sent first, with no arguments and no X-HgProto (the
// client may only advertise protocol parameters after the handshake). A
// server without httpheader gets the arguments in the query string
// (Mercurial < 1.9).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTPPeer talks to hg serve or hgweb.
type HTTPPeer struct {
	source string   // as given, for URL()
	base   *url.URL // command URL without query or userinfo; may change on redirect
	auth   *credentials
	client *http.Client
	caps   Caps
	opt    Options
}

// credentials are the user and password of the URL given, sent (as basic
// authentication, from the first request on) only to that URL's origin:
// never to another host, port or scheme a redirect leads to. hg keeps them
// to the URL's host and port (and path) too, but answers a server's
// challenge with any credentials it sent once, on whatever host
// (url.httpbasicauthhandler); a redirect there gets nothing from hgfs.
type credentials struct {
	origin         string
	user, password string
}

// origin is a URL's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// authorize adds the credentials to a request for their origin.
func (p *HTTPPeer) authorize(req *http.Request) {
	if p.auth != nil && origin(req.URL) == p.auth.origin {
		req.SetBasicAuth(p.auth.user, p.auth.password)
	}
}

// checkRedirect decides the credentials of each redirected request:
// net/http copies the Authorization header to the same host name on
// another port or scheme, and to its subdomains.
func (p *HTTPPeer) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		req.Header.Del("Authorization")
		p.authorize(req)
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 { // net/http's own limit
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

var _ Peer = (*HTTPPeer)(nil)

// defaultHTTPClient has connection-level timeouts only: a stream clone may
// run for hours, so overall deadlines come from the caller's context.
// With quickAck, its connections acknowledge responses at once
// (quickack.go).
func defaultHTTPClient(quickAck bool) *http.Client {
	dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if quickAck {
		dial = quickAckDialer(dial)
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute, // a server may scan a big store before answering
		MaxIdleConnsPerHost:   2,
		// Compressed responses are decoded by the wire protocol, never by
		// the transport.
		DisableCompression: true,
	}
	return &http.Client{Transport: tr}
}

// DialHTTP connects to an http(s) URL and fetches the capabilities.
func DialHTTP(ctx context.Context, source string, opt Options) (*HTTPPeer, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, unsupportedf("%v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, unsupportedf("unsupported URL scheme %q", u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		comp := u.RawQuery
		if comp == "" {
			comp = u.Fragment
		}
		return nil, unsupportedf("unsupported URL component: %q", comp)
	}
	p := &HTTPPeer{source: source, base: u, opt: opt}
	if u.User != nil {
		pw, _ := u.User.Password()
		p.auth = &credentials{origin: origin(u), user: u.User.Username(), password: pw}
		u.User = nil
	}
	// A copy: the redirect policy is this peer's, not the caller's client's.
	if opt.HTTPClient != nil {
		c := *opt.HTTPClient
		p.client = &c
	} else {
		p.client = defaultHTTPClient(opt.QuickAck)
	}
	p.client.CheckRedirect = p.checkRedirect(p.client.CheckRedirect)
	opt.debugf("using %s\n", u)
	data, err := p.call(ctx, "capabilities", nil, false)
	if err != nil {
		return nil, err
	}
	if p.caps, err = ParseCaps(data); err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	return p, nil
}

func redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), "***")
		}
	}
	return c.String()
}

// URL implements Peer.
func (p *HTTPPeer) URL() string { return p.source }

// Capabilities implements Peer.
func (p *HTTPPeer) Capabilities() Caps { return p.caps }

// Close implements Peer; idle connections are released.
func (p *HTTPPeer) Close() error {
	p.client.CloseIdleConnections()
	return nil
}

// Heads implements Peer.
func (p *HTTPPeer) Heads(ctx context.Context) ([]string, error) {
	data, err := p.call(ctx, "heads", nil, false)
	if err != nil {
		return nil, err
	}
	return decodeHeads(data)
}

// Branchmap implements Peer.
func (p *HTTPPeer) Branchmap(ctx context.Context) (map[string][]string, error) {
	data, err := p.call(ctx, "branchmap", nil, false)
	if err != nil {
		return nil, err
	}
	return decodeBranchmap(data)
}

// ListKeys implements Peer.
func (p *HTTPPeer) ListKeys(ctx context.Context, namespace string) (map[string]string, error) {
	if !p.caps.Has("pushkey") {
		return map[string]string{}, nil
	}
	data, err := p.call(ctx, "listkeys", map[string]string{"namespace": namespace}, false)
	if err != nil {
		return nil, err
	}
	return decodeKeys(data)
}

// Lookup implements Peer.
func (p *HTTPPeer) Lookup(ctx context.Context, key string) (string, error) {
	if !p.caps.Has("lookup") {
		return "", errNoLookup
	}
	data, err := p.call(ctx, "lookup", map[string]string{"key": key}, false)
	if err != nil {
		return "", err
	}
	return decodeLookup(data)
}

// StreamOut implements Peer.
func (p *HTTPPeer) StreamOut(ctx context.Context) (io.ReadCloser, error) {
	return p.stream(ctx, "stream_out", nil, false)
}

// GetBundle implements Peer.
func (p *HTTPPeer) GetBundle(ctx context.Context, args map[string]string) (io.ReadCloser, error) {
	if !p.caps.Has("getbundle") {
		return nil, errNoGetbundle
	}
	return p.stream(ctx, "getbundle", args, true)
}

// call runs a command whose response is small and read whole.
func (p *HTTPPeer) call(ctx context.Context, cmd string, args map[string]string, compressible bool) ([]byte, error) {
	body, err := p.stream(ctx, cmd, args, compressible)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := readBounded(body, p.opt.maxResponse(), cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, p.connErr(err))
	}
	return data, nil
}

// stream sends cmd and returns the decoded response body.
func (p *HTTPPeer) stream(ctx context.Context, cmd string, args map[string]string, compressible bool) (io.ReadCloser, error) {
	req, err := p.newRequest(ctx, cmd, args)
	if err != nil {
		return nil, err
	}
	p.opt.debugf("sending %s command\n", cmd)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, p.connErr(err)
	}
	body, err := p.parseResponse(cmd, resp, compressible)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	return &httpBody{r: body, resp: resp, peer: p}, nil
}

func (p *HTTPPeer) newRequest(ctx context.Context, cmd string, args map[string]string) (*http.Request, error) {
	u := *p.base
	query := "cmd=" + quotePlus(cmd)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "", nil)
	if err != nil {
		return nil, err
	}
	var vary []string
	if len(args) > 0 {
		headerSize := 0
		if v, ok := p.caps.Get("httpheader"); ok {
			first, _, _ := strings.Cut(v, ",")
			headerSize, _ = strconv.Atoi(first)
		}
		encoded := formEncode(args)
		if headerSize > 0 {
			for i, v := range splitHeaderValue(encoded, "X-HgArg", headerSize) {
				name := "X-HgArg-" + strconv.Itoa(i+1)
				req.Header[name] = []string{v}
				vary = append(vary, name)
			}
		} else {
			query += "&" + encoded
		}
	}
	if p.caps != nil {
		if params := p.protoParams(); params != "" {
			req.Header["X-HgProto-1"] = []string{params}
			vary = append(vary, "X-HgProto-1")
		}
	}
	if len(vary) > 0 {
		req.Header.Set("Vary", strings.Join(vary, ","))
	}
	u.RawQuery = query
	req.URL = &u
	req.Host = u.Host
	p.authorize(req)
	req.Header.Set("Accept", "application/mercurial-0.1")
	req.Header.Set("User-Agent", "mercurial/proto-1.0 (hgfs)")
	return req, nil
}

// protoParams is the X-HgProto-1 value: the media types and compression
// engines this client accepts, limited to what the server advertised
// (httppeer.makev1commandrequest). "partial-pull" is deliberately not
// sent: a server may then answer with a pre-built changegroup bundle,
// which a stream clone cannot use.
func (p *HTTPPeer) protoParams() string {
	var params []string
	mt, ok := p.caps.Get("httpmediatype")
	if !ok {
		return ""
	}
	params = append(params, "0.1")
	has02 := false
	for _, m := range strings.Split(mt, ",") {
		if m == "0.2tx" {
			has02 = true
		}
	}
	if has02 {
		params = append(params, "0.2")
		if p.caps.Has("compression") {
			params = append(params, "comp="+strings.Join(clientCompression, ","))
		}
	}
	return strings.Join(params, " ")
}

// splitHeaderValue splits value into header values so that each
// "<prefix>-N: value\r\n" line fits in limit bytes
// (httppeer.encodevalueinheaders).
func splitHeaderValue(value, prefix string, limit int) []string {
	valueLen := limit - len(prefix+"-000") - len(": \r\n")
	if valueLen < 1 {
		valueLen = 1
	}
	var out []string
	for i := 0; i < len(value); i += valueLen {
		out = append(out, value[i:min(i+valueLen, len(value))])
	}
	return out
}

func (p *HTTPPeer) parseResponse(cmd string, resp *http.Response, compressible bool) (io.ReadCloser, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
		if reason == "" {
			reason = http.StatusText(resp.StatusCode)
		}
		where := *resp.Request.URL
		where.RawQuery = ""
		return nil, &HTTPError{URL: redact(&where), Code: resp.StatusCode, Reason: reason,
			Challenged: resp.Header.Get("WWW-Authenticate") != "", Authorized: resp.Request.Header.Get("Authorization") != ""}
	}
	if cmd == "capabilities" {
		p.followRedirect(resp)
	}
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, mediaTypeError) {
		msg, err := readBounded(resp.Body, 1<<20, cmd)
		if err != nil {
			return nil, err
		}
		return nil, &RemoteError{Message: string(msg)}
	}
	if !strings.HasPrefix(ct, mediaPrefix) {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		if ct == "" {
			ct = "no content-type"
		}
		return nil, &NotRepositoryError{URL: redact(p.base), ContentType: ct, Body: string(head)}
	}
	major, minor, err := parseMediaVersion(ct)
	if err != nil {
		return nil, fmt.Errorf("'%s' sent a broken Content-Type header (%s): %w", redact(p.base), ct, err)
	}
	r, engine, err := payloadReader(major, minor, resp.Body, compressible)
	if err == nil {
		p.opt.debugf("%s response: %s, compression %s\n", cmd, ct, engine)
	}
	return r, err
}

// followRedirect adopts the URL a redirected capabilities request ended
// at as the new base, as hg does ("real URL is ..."). The credentials
// stay with their origin (authorize).
func (p *HTTPPeer) followRedirect(resp *http.Response) {
	final := resp.Request.URL
	if final == nil || (final.Scheme == p.base.Scheme && final.Host == p.base.Host && strings.TrimRight(final.Path, "/") == strings.TrimRight(p.base.Path, "/")) {
		return
	}
	nb := *final
	nb.RawQuery, nb.Fragment, nb.User = "", "", nil
	p.base = &nb
	if !p.opt.Quiet {
		fmt.Fprintf(p.opt.stderr(), "real URL is %s\n", redact(&nb))
	}
}

// connErr turns transport failures into *ConnError; context errors pass
// through so callers see cancellation as such.
func (p *HTTPPeer) connErr(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A body cut short (the server failed half-way, or the connection
		// broke), not a malformed one: readers of bundles and
		// changegroups that see io.ErrUnexpectedEOF call the data
		// truncated, so it must not show through.
		return &ConnError{Op: "http", Err: ErrIncompleteResponse}
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) {
		return &ConnError{Op: "http", Err: err}
	}
	return err
}

// ErrIncompleteResponse is an HTTP response whose body ended before its
// end (hg's url.wrapresponse message).
var ErrIncompleteResponse = errors.New("HTTP request error (incomplete response)")

// NotRepositoryError is an answer that is not from Mercurial (an HTML
// page, a proxy's error); Error reads like hg's message.
type NotRepositoryError struct {
	URL         string
	ContentType string
	Body        string // first KiB
}

func (e *NotRepositoryError) Error() string {
	return fmt.Sprintf("'%s' does not appear to be an hg repository:\n---%%<--- (%s)\n%s\n---%%<---", e.URL, e.ContentType, e.Body)
}

func (e *NotRepositoryError) Is(target error) bool { return target == ErrNotRepository }

// httpBody closes the decoder and the HTTP body together, and reports
// connection failures while reading as *ConnError.
type httpBody struct {
	r    io.ReadCloser
	resp *http.Response
	peer *HTTPPeer
}

func (b *httpBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.peer.connErr(err)
	}
	return n, err
}

func (b *httpBody) Close() error {
	err := b.r.Close()
	if err2 := b.resp.Body.Close(); err == nil {
		err = err2
	}
	return err
}
