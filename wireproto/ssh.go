package wireproto

// The ssh transport, version 1 (mercurial/sshpeer.py,
// mercurial/wireprotoserver.py _runsshserver). The client runs
//
//	<ssh command> [-p PORT] [USER@]HOST '<remotecmd> -R <path> serve --stdio'
//
// through /bin/sh and talks over the process's stdin/stdout:
//
//	request:  <command>\n then, for each argument the command declares,
//	          "<name> <len>\n<value>"; a "*" argument is "* <count>\n"
//	          followed by count such pairs.
//	response: "<len>\n<data>" for ordinary commands; stream_out and
//	          getbundle write their stream raw (its end is known only by
//	          parsing it). A bare "\n" is an out-of-band error whose text
//	          went to stderr.
//
// The handshake sends "hello" and "between" with the null pair; the server
// may print a login banner first, so lines are read until the between
// reply "1\n\n", and the capabilities come from hello's
// "capabilities: ..." line.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handshake bounds (keep in sync with sshpeer._performhandshake: 500 lines
// of banner noise).
const (
	maxHandshakeLines = 500
	maxLineLen        = 1 << 20
)

// SSHPeer talks to "hg serve --stdio" over an ssh command, or to a
// server in this process over pipes (DialLocal).
type SSHPeer struct {
	source string
	// stop ends the other side at once (the ssh command's process
	// group, the local server); wait waits for it to have ended.
	stop   func()
	wait   func() error
	stdin  io.WriteCloser
	stdout *bufio.Reader
	caps   Caps
	opt    Options

	stderrDone chan struct{}
	stderrTail *tailBuffer

	mu      sync.Mutex
	busy    bool // a stream response is being read
	broken  error
	closed  bool
	waitErr error
}

var _ Peer = (*SSHPeer)(nil)

// SSHLocation is a parsed ssh:// URL.
type SSHLocation struct {
	User, Host, Port string
	Path             string // remote path; "." for none
}

// ParseSSHURL parses ssh://[user@]host[:port][/path] as hg does: the path
// is what follows the slash after the host (so "//abs" is absolute), and
// a host or user starting with "-" is refused (it would be an ssh option).
func ParseSSHURL(source string) (*SSHLocation, error) {
	rest, ok := strings.CutPrefix(source, "ssh://")
	if !ok {
		return nil, unsupportedf("couldn't parse location %s", source)
	}
	if unq, err := url.PathUnescape(source); err == nil && strings.HasPrefix(unq, "ssh://-") {
		return nil, unsupportedf("potentially unsafe url: '%s'", source)
	}
	hostpart, path, hasPath := strings.Cut(rest, "/")
	loc := &SSHLocation{Path: "."}
	if hasPath && path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return nil, unsupportedf("couldn't parse location %s", source)
		}
		loc.Path = p
	}
	if at := strings.LastIndex(hostpart, "@"); at >= 0 {
		loc.User, hostpart = hostpart[:at], hostpart[at+1:]
		if strings.Contains(loc.User, ":") {
			return nil, unsupportedf("password in URL not supported")
		}
	}
	if strings.HasPrefix(hostpart, "[") {
		end := strings.Index(hostpart, "]")
		if end < 0 {
			return nil, unsupportedf("couldn't parse location %s", source)
		}
		loc.Host, hostpart = hostpart[1:end], hostpart[end+1:]
		if p, ok := strings.CutPrefix(hostpart, ":"); ok {
			loc.Port = p
		}
	} else if h, p, ok := strings.Cut(hostpart, ":"); ok {
		loc.Host, loc.Port = h, p
	} else {
		loc.Host = hostpart
	}
	if loc.Host == "" {
		return nil, unsupportedf("couldn't parse location %s", source)
	}
	if loc.Port != "" {
		if _, err := strconv.ParseUint(loc.Port, 10, 16); err != nil {
			return nil, unsupportedf("couldn't parse location %s (bad port)", source)
		}
	}
	who := loc.Host
	if loc.User != "" {
		who = loc.User + "@" + loc.Host
	}
	if strings.HasPrefix(who, "-") {
		return nil, unsupportedf("illegal ssh hostname or username starting with -: %s", who)
	}
	return loc, nil
}

// Command is the shell command line that starts the remote server
// (sshpeer._makeconnection with posix.sshargs).
func (l *SSHLocation) Command(sshCmd, remoteCmd string) string {
	if sshCmd == "" {
		sshCmd = "ssh"
	}
	if remoteCmd == "" {
		remoteCmd = "hg"
	}
	who := l.Host
	if l.User != "" {
		who = l.User + "@" + l.Host
	}
	args := shellQuote(who)
	if l.Port != "" {
		args = "-p " + shellQuote(l.Port) + " " + args
	}
	remote := serverQuote(remoteCmd) + " -R " + serverQuote(l.Path) + " serve --stdio"
	return sshCmd + " " + args + " " + shellQuote(remote)
}

// Compiled when first used: every hgfs process starts with this package
// linked, and few quote for ssh (package-level regexps cost each start
// about 0.1 ms, as inittrace shows).
var (
	serverSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9@%_+=:,./-]*$`) })
	shellSafe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9._/+-]+$`) })
)

// serverQuote quotes for the remote shell, as sshpeer._serverquote.
func serverQuote(s string) string {
	if s == "" || serverSafe().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellQuote quotes for the local shell, as posix.shellquote.
func shellQuote(s string) string {
	if shellSafe().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DialSSH starts the ssh command for source and performs the handshake.
func DialSSH(ctx context.Context, source string, opt Options) (*SSHPeer, error) {
	loc, err := ParseSSHURL(source)
	if err != nil {
		return nil, err
	}
	line := loc.Command(opt.SSHCommand, opt.RemoteCommand)
	opt.debugf("running %s\n", line)
	cmd := exec.Command("/bin/sh", "-c", line)
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &ConnError{Op: "ssh", Err: err}
	}
	p := &SSHPeer{
		source: source, stdin: stdin,
		stop:       func() { killProcessGroup(cmd) },
		wait:       cmd.Wait,
		stdout:     bufio.NewReaderSize(stdout, 64<<10),
		opt:        opt,
		stderrDone: make(chan struct{}),
		stderrTail: &tailBuffer{max: 4096},
	}
	return p.start(ctx, stderr)
}

// ServeFunc serves one ssh protocol session (wireproto.Server.ServeSSH)
// on in, out and errOut until in ends or ctx is done.
type ServeFunc func(ctx context.Context, in io.Reader, out, errOut io.Writer) error

// DialLocal speaks the ssh protocol to serve, run in this process on
// pipes: a local repository as a peer, for what a clone or pull of one
// does as of a server (-r, --branch), as hg's localpeer. source names it
// in messages.
func DialLocal(ctx context.Context, source string, serve ServeFunc, opt Options) (*SSHPeer, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := serve(sctx, inR, outW, errW)
		outW.Close()
		errW.Close()
		done <- err
	}()
	killed := errors.New("local server stopped")
	p := &SSHPeer{
		source: source, stdin: inW,
		stop: func() {
			cancel()
			inR.CloseWithError(killed)
			outR.CloseWithError(killed)
			errR.CloseWithError(killed)
		},
		wait: func() error {
			err := <-done
			cancel()
			return err
		},
		stdout:     bufio.NewReaderSize(outR, 64<<10),
		opt:        opt,
		stderrDone: make(chan struct{}),
		stderrTail: &tailBuffer{max: 4096},
	}
	return p.start(ctx, errR)
}

// start forwards the other side's stderr and performs the handshake.
func (p *SSHPeer) start(ctx context.Context, stderr io.Reader) (*SSHPeer, error) {
	go p.forwardStderr(stderr)

	stop := context.AfterFunc(ctx, p.stop)
	err := p.handshake()
	if !stop() || ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	if p.caps.Has("protocaps") {
		// Tell the server what we decode (sshpeer.instance); over ssh
		// this changes nothing today, but keeps the server's view right.
		stop := context.AfterFunc(ctx, p.stop)
		_, err := p.call("protocaps", []sshArg{{"caps", "comp=" + strings.Join(clientCompression, ",")}})
		if !stop() {
			err = ctx.Err()
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("capability exchange failed: %w", err)
		}
	}
	return p, nil
}

func (p *SSHPeer) handshake() error {
	pairs := NullHex + "-" + NullHex
	p.opt.debugf("sending hello command\n")
	p.opt.debugf("sending between command\n")
	req := "hello\nbetween\npairs " + strconv.Itoa(len(pairs)) + "\n" + pairs
	if _, err := io.WriteString(p.stdin, req); err != nil {
		return p.badResponse(err)
	}
	lines, err := readHandshake(p.stdout)
	if err != nil {
		return p.badResponse(err)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(lines[i], "capabilities:"); ok {
			caps, err := ParseCaps([]byte(v))
			if err != nil {
				return p.badResponse(err)
			}
			p.caps = caps
			break
		}
	}
	if len(p.caps) == 0 {
		return p.badResponse(errors.New("no capabilities in the hello reply"))
	}
	return nil
}

// readHandshake reads lines up to and including the between reply
// "1\n" "\n", returning them without newlines.
func readHandshake(r *bufio.Reader) ([]string, error) {
	var lines []string
	prev := ""
	for range maxHandshakeLines {
		l, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if prev == "1\n" && l == "\n" {
			return lines, nil
		}
		lines = append(lines, strings.TrimSuffix(l, "\n"))
		prev = l
	}
	return nil, fmt.Errorf("%w: no end of handshake after %d lines", ErrProtocol, maxHandshakeLines)
}

// readLine reads one "\n"-terminated line of at most maxLineLen bytes.
func readLine(r *bufio.Reader) (string, error) {
	l, err := readBoundedLine(r, maxLineLen)
	switch {
	case err == io.EOF:
		return "", io.ErrUnexpectedEOF
	case errors.Is(err, errLineTooLong):
		return "", fmt.Errorf("%w: line longer than %d bytes", ErrProtocol, maxLineLen)
	}
	return l, err
}

var errLineTooLong = errors.New("line too long")

// readBoundedLine reads one line, newline included, of at most max
// bytes: errLineTooLong beyond; io.EOF, with what was read, if the input
// ends first.
func readBoundedLine(r *bufio.Reader, max int) (string, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			return "", errLineTooLong
		}
		buf = append(buf, chunk...)
		switch err {
		case nil:
			return string(buf), nil
		case bufio.ErrBufferFull:
			continue
		default:
			return string(buf), err
		}
	}
}

// badResponse is sshpeer's "no suitable response from remote hg", after
// the remote's stderr has been forwarded.
func (p *SSHPeer) badResponse(cause error) error {
	p.stdin.Close()
	p.waitStderr(2 * time.Second)
	p.opt.debugf("ssh handshake: %v\n", cause)
	return &ConnError{Op: "ssh", Err: errNoSuitableResponse}
}

var errNoSuitableResponse = errors.New("no suitable response from remote hg")

// IsNoSuitableResponse reports whether err is the ssh handshake failure,
// which hg prints without the "error: " prefix.
func IsNoSuitableResponse(err error) bool { return errors.Is(err, errNoSuitableResponse) }

func (p *SSHPeer) forwardStderr(r io.Reader) {
	defer close(p.stderrDone)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			p.stderrTail.Write([]byte(line))
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			fmt.Fprintf(p.opt.stderr(), "remote: %s", line)
		}
		if err != nil {
			return
		}
	}
}

func (p *SSHPeer) waitStderr(d time.Duration) {
	select {
	case <-p.stderrDone:
	case <-time.After(d):
	}
}

// URL implements Peer.
func (p *SSHPeer) URL() string { return p.source }

// Capabilities implements Peer.
func (p *SSHPeer) Capabilities() Caps { return p.caps }

// Close implements Peer: an empty request line asks the server to exit;
// a server that does not within a few seconds is killed.
func (p *SSHPeer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.stdin.Close()
	// Read the remote's last words before Wait closes the pipe.
	select {
	case <-p.stderrDone:
	case <-time.After(5 * time.Second):
		p.stop()
	}
	done := make(chan struct{})
	go func() {
		p.waitErr = p.wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.stop()
		<-done
	}
	return nil
}

type sshArg struct{ name, value string }

// begin claims the connection for one command.
func (p *SSHPeer) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return fmt.Errorf("%w: ssh peer is closed", ErrConnection)
	case p.broken != nil:
		return p.broken
	case p.busy:
		return fmt.Errorf("%w: ssh peer is busy with a stream response", ErrProtocol)
	}
	return nil
}

func (p *SSHPeer) fail(err error) error {
	p.mu.Lock()
	if p.broken == nil {
		p.broken = err
	}
	p.mu.Unlock()
	return err
}

// send writes a request. args are written in the given order; star args
// (for "*") are written as a counted group.
func (p *SSHPeer) send(cmd string, args []sshArg, star map[string]string) error {
	p.opt.debugf("sending %s command\n", cmd)
	var b bytes.Buffer
	b.WriteString(cmd + "\n")
	for _, a := range args {
		fmt.Fprintf(&b, "%s %d\n%s", a.name, len(a.value), a.value)
	}
	if star != nil {
		fmt.Fprintf(&b, "* %d\n", len(star))
		for _, k := range sortedKeys(star) {
			fmt.Fprintf(&b, "%s %d\n%s", k, len(star[k]), star[k])
		}
	}
	if _, err := p.stdin.Write(b.Bytes()); err != nil {
		return p.fail(p.remoteGone(err))
	}
	return nil
}

// remoteGone explains a dead connection with what the remote last said.
func (p *SSHPeer) remoteGone(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// Not io.ErrUnexpectedEOF itself: readers of bundles and
		// changegroups would call the data truncated.
		err = errRemoteClosed
	}
	p.waitStderr(time.Second)
	if tail := strings.TrimSpace(p.stderrTail.String()); tail != "" {
		return &ConnError{Op: "ssh", Err: fmt.Errorf("%w (remote said: %s)", err, tail)}
	}
	return &ConnError{Op: "ssh", Err: err}
}

// call runs a command with a framed response.
func (p *SSHPeer) call(cmd string, args []sshArg) ([]byte, error) {
	return p.callStar(cmd, args, nil)
}

// callStar is call for commands whose argument spec ends in "*" (known,
// getbundle): the server then reads a "* <count>" line too, even when
// there are no extra arguments, as sshpeer._sendrequest always sends it.
func (p *SSHPeer) callStar(cmd string, args []sshArg, star map[string]string) ([]byte, error) {
	if err := p.begin(); err != nil {
		return nil, err
	}
	if err := p.send(cmd, args, star); err != nil {
		return nil, err
	}
	data, err := readFrame(p.stdout, p.opt.maxResponse())
	if err != nil {
		if errors.Is(err, errOutOfBand) {
			p.waitStderr(100 * time.Millisecond)
			return nil, &RemoteError{Hint: "check previous remote output"}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, p.fail(p.remoteGone(err))
		}
		return nil, p.fail(fmt.Errorf("%s: %w", cmd, err))
	}
	return data, nil
}

var errOutOfBand = errors.New("out-of-band error")

// errRemoteClosed is the remote's output ending before the reply did.
var errRemoteClosed = errors.New("connection closed before the end of the reply")

// readFrame reads one "<len>\n<data>" response. A bare "\n" is the
// out-of-band error marker.
func readFrame(r *bufio.Reader, max int64) ([]byte, error) {
	l, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if l == "\n" {
		return nil, errOutOfBand
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(l, "\n"), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: %q", ErrProtocol, truncate(l, 64))
	}
	if n > max {
		return nil, fmt.Errorf("%w: frame of %d bytes (limit %d)", ErrTooLarge, n, max)
	}
	// Read in bounded steps so a lying length costs no more memory than
	// the bytes actually sent.
	data, err := io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != n {
		return nil, io.ErrUnexpectedEOF
	}
	return data, nil
}

// withCtx runs f, killing the connection if ctx ends first.
func (p *SSHPeer) withCtx(ctx context.Context, f func() ([]byte, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() {
		p.fail(ctx.Err())
		p.stop()
	})
	data, err := f()
	if !stop() {
		return nil, ctx.Err()
	}
	return data, err
}

// Heads implements Peer.
func (p *SSHPeer) Heads(ctx context.Context) ([]string, error) {
	data, err := p.withCtx(ctx, func() ([]byte, error) { return p.call("heads", nil) })
	if err != nil {
		return nil, err
	}
	return decodeHeads(data)
}

// Branchmap implements Peer.
func (p *SSHPeer) Branchmap(ctx context.Context) (map[string][]string, error) {
	data, err := p.withCtx(ctx, func() ([]byte, error) { return p.call("branchmap", nil) })
	if err != nil {
		return nil, err
	}
	return decodeBranchmap(data)
}

// ListKeys implements Peer.
func (p *SSHPeer) ListKeys(ctx context.Context, namespace string) (map[string]string, error) {
	if !p.caps.Has("pushkey") {
		return map[string]string{}, nil
	}
	data, err := p.withCtx(ctx, func() ([]byte, error) {
		return p.call("listkeys", []sshArg{{"namespace", namespace}})
	})
	if err != nil {
		return nil, err
	}
	return decodeKeys(data)
}

// Lookup implements Peer.
func (p *SSHPeer) Lookup(ctx context.Context, key string) (string, error) {
	if !p.caps.Has("lookup") {
		return "", errNoLookup
	}
	data, err := p.withCtx(ctx, func() ([]byte, error) {
		return p.call("lookup", []sshArg{{"key", key}})
	})
	if err != nil {
		return "", err
	}
	return decodeLookup(data)
}

// StreamOut implements Peer.
func (p *SSHPeer) StreamOut(ctx context.Context) (io.ReadCloser, error) {
	return p.stream(ctx, "stream_out", nil)
}

// GetBundle implements Peer. Over ssh the bundle is never compressed by
// the transport.
func (p *SSHPeer) GetBundle(ctx context.Context, args map[string]string) (io.ReadCloser, error) {
	if !p.caps.Has("getbundle") {
		return nil, errNoGetbundle
	}
	if args == nil {
		args = map[string]string{}
	}
	return p.stream(ctx, "getbundle", args)
}

// stream sends a command whose response is a raw stream. The connection
// stays claimed until the returned reader is closed; the caller must have
// read the whole response by then (a stream decoder does), or the
// connection is marked unusable.
func (p *SSHPeer) stream(ctx context.Context, cmd string, star map[string]string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.begin(); err != nil {
		return nil, err
	}
	if err := p.send(cmd, nil, star); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.busy = true
	p.mu.Unlock()
	s := &sshStream{p: p, ctx: ctx}
	s.stop = context.AfterFunc(ctx, func() {
		p.fail(ctx.Err())
		p.stop()
	})
	return s, nil
}

type sshStream struct {
	p      *SSHPeer
	ctx    context.Context
	stop   func() bool
	closed bool
}

func (s *sshStream) Read(b []byte) (int, error) {
	if s.closed {
		return 0, errors.New("read of closed ssh stream")
	}
	n, err := s.p.stdout.Read(b)
	if err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return n, ctxErr
		}
		if err == io.EOF {
			// The server never ends a stream by closing: EOF means it
			// died (hg's stream_out aborts, for instance).
			return n, s.p.fail(s.p.remoteGone(io.ErrUnexpectedEOF))
		}
		return n, s.p.fail(s.p.remoteGone(err))
	}
	return n, nil
}

func (s *sshStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stop()
	p := s.p
	p.mu.Lock()
	p.busy = false
	if p.stdout.Buffered() > 0 && p.broken == nil {
		p.broken = fmt.Errorf("%w: unread data after a stream response", ErrProtocol)
	}
	p.mu.Unlock()
	return nil
}

// tailBuffer keeps the last max bytes written (the remote's last words).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
