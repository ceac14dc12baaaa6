package wireproto

// The server side of the ssh transport, version 1, as `hg serve --stdio`
// answers it (mercurial/wireprotoserver.py _runsshserver and
// sshv1protocolhandler; the client's view of the framing is in ssh.go):
//
//	request:  <command>\n, then for each name of the command's argument
//	          spec (wireCommands) "<name> <len>\n<value>", where "*" is
//	          "* <count>\n" and count such name/length/value triples
//	empty line or end of input: the session ends
//	unknown command: "0\n" (an empty reply; its arguments, if any, are
//	          not read: hg cannot know them either), which is also what
//	          a client's protocol "upgrade <token> <caps>" line gets
//	bytes reply: "<len>\n<data>"
//	stream_out, getbundle, changegroup, changegroupsubset: the stream,
//	          raw (getbundle's bundle2 is never
//	          compressed by the transport: wireprotoserver's
//	          _sshv1respondstream sends the generator as it is)
//	out-of-band error: "<message>\n-\n" on stderr, "\n" on stdout
//
// Everything read is untrusted and bounded: lines (maxSSHLine), all of a
// request's argument values together (maxArgBytes), "*" groups
// (maxSSHStarArgs). Malformed framing cannot be resynchronised: the
// session ends with an ErrBadRequest, as hg's server ends with an
// exception.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Bounds of the ssh request decoder.
const (
	// maxSSHLine bounds a command or argument line. Real ones are a
	// command name, or a name and a length (an "upgrade" line carries a
	// token and a few capabilities).
	maxSSHLine = 4 << 10
	// maxSSHStarArgs bounds the arguments of a "*" group (getbundle
	// sends about ten).
	maxSSHStarArgs = 1024
)

// sshRequest is one decoded request.
type sshRequest struct {
	cmd   string
	known bool              // in wireCommands: its arguments were read
	args  map[string]string // declared arguments, then "*" ones not declared
}

// readSSHRequest reads one request as sshv1protocolhandler.getargs does.
// It returns io.EOF at the end of input before a request starts, and a
// request with an empty cmd for an empty line (the client's goodbye).
func readSSHRequest(r *bufio.Reader) (*sshRequest, error) {
	line, err := readSSHLine(r)
	if err != nil {
		return nil, err
	}
	req := &sshRequest{cmd: line}
	c, ok := wireCommands[line]
	if !ok {
		return req, nil
	}
	req.known = true
	req.args = map[string]string{}
	keys := strings.Fields(c.args)
	budget := maxArgBytes
	seen := map[string]bool{}
	star := map[string]string{}
	for range keys {
		name, n, err := readSSHArgHeader(r, line)
		if err != nil {
			return nil, err
		}
		if !contains(keys, name) {
			return nil, fmt.Errorf("%w: %s: unexpected parameter %q", ErrBadRequest, line, truncate(name, 64))
		}
		seen[name] = true
		if name != "*" {
			if req.args[name], err = readSSHValue(r, n, &budget); err != nil {
				return nil, err
			}
			continue
		}
		if n > maxSSHStarArgs {
			return nil, fmt.Errorf("%w: %s: more than %d arguments", ErrBadRequest, line, maxSSHStarArgs)
		}
		for range n {
			k, l, err := readSSHArgHeader(r, line)
			if err != nil {
				return nil, err
			}
			if star[k], err = readSSHValue(r, l, &budget); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range keys {
		if !seen[k] {
			return nil, fmt.Errorf("%w: %s: missing argument %q", ErrBadRequest, line, k)
		}
	}
	for k, v := range star {
		if _, declared := req.args[k]; !declared {
			req.args[k] = v
		}
	}
	return req, nil
}

// readSSHLine reads a line without its newline: io.EOF when the input
// ends before it starts, a line over maxSSHLine or cut by the end of
// input is an ErrBadRequest.
func readSSHLine(r *bufio.Reader) (string, error) {
	l, err := readBoundedLine(r, maxSSHLine)
	switch {
	case err == io.EOF && l == "":
		return "", io.EOF
	case err == io.EOF:
		return "", fmt.Errorf("%w: input ends within a line", ErrBadRequest)
	case errors.Is(err, errLineTooLong):
		return "", fmt.Errorf("%w: line longer than %d bytes", ErrBadRequest, maxSSHLine)
	case err != nil:
		return "", err
	}
	return strings.TrimSuffix(l, "\n"), nil
}

// readSSHArgHeader reads "<name> <number>".
func readSSHArgHeader(r *bufio.Reader, cmd string) (string, int, error) {
	line, err := readSSHLine(r)
	if err == io.EOF {
		err = fmt.Errorf("%w: %s: input ends before its arguments", ErrBadRequest, cmd)
	}
	if err != nil {
		return "", 0, err
	}
	f := strings.Fields(line)
	if len(f) == 2 {
		if n, err := strconv.Atoi(f[1]); err == nil && n >= 0 && isDigits(f[1]) {
			return f[0], n, nil
		}
	}
	return "", 0, fmt.Errorf("%w: %s: malformed argument line %q", ErrBadRequest, cmd, truncate(line, 64))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// readSSHValue reads an argument value of n bytes, n taken from budget.
func readSSHValue(r *bufio.Reader, n int, budget *int) (string, error) {
	if n > *budget {
		return "", fmt.Errorf("%w: arguments exceed %d bytes", ErrBadRequest, maxArgBytes)
	}
	*budget -= n
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return "", fmt.Errorf("%w: input ends within an argument", ErrBadRequest)
		}
		return "", err
	}
	return string(b), nil
}

// ServeSSH serves one ssh session, as `hg serve --stdio`: requests are
// read from in, replies written to out, and what the client should print
// (out-of-band errors) to errOut, which the ssh client forwards as
// "remote: ..." lines.
//
// The session ends when in ends or the client sends an empty line
// (nil), on malformed input or a failed stream (an error: the client
// cannot tell where the reply would have ended), or when ctx ends: then
// between requests at once (nil), and a reply in progress is given grace
// to finish before it is cut (ctx's error). Each stream clone takes its
// turn like an HTTP request's (ServerConfig.MaxStreams).
func (s *Server) ServeSSH(ctx context.Context, in io.Reader, out, errOut io.Writer, grace time.Duration) error {
	work, cut := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cut(nil)
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { cut(context.Cause(ctx)) })
		context.AfterFunc(work, func() { t.Stop() })
	})
	defer stopGrace()

	type read struct {
		req *sshRequest
		err error
	}
	reqs := make(chan read)
	done := make(chan struct{})
	defer close(done)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			req, err := readSSHRequest(br)
			select {
			case reqs <- read{req, err}:
			case <-done:
				return
			}
			if err != nil || req.cmd == "" {
				return
			}
		}
	}()

	ss := &sshSession{s: s, out: bufio.NewWriterSize(out, streamWriteBuffer), errOut: errOut,
		pc: protoCaps{ssh: true, comp: []string{"zlib", "none"}}}
	for {
		if ctx.Err() != nil {
			return nil
		}
		var r read
		select {
		case <-ctx.Done():
			return nil
		case r = <-reqs:
		}
		switch {
		case r.err == io.EOF:
			return nil
		case r.err != nil:
			return r.err
		case r.req.cmd == "":
			return nil
		}
		if err := ss.run(work, r.req); err != nil {
			if work.Err() != nil {
				return context.Cause(work)
			}
			return err
		}
	}
}

// sshSession is one ssh client's state: what it said of itself
// (protocaps) and where replies go.
type sshSession struct {
	s      *Server
	out    *bufio.Writer
	errOut io.Writer
	pc     protoCaps
}

// run answers one request. An error ends the session.
func (ss *sshSession) run(ctx context.Context, req *sshRequest) error {
	s := ss.s
	switch {
	case !req.known:
		return ss.bytes("")
	case wireCommands[req.cmd].push:
		return ss.oob(msgReadOnly)
	case req.cmd == "stream_out":
		started := false
		err := s.streamOut(ctx, func(int64) (io.Writer, error) {
			started = true
			return ss.out, nil
		})
		return ss.streamEnd("stream_out", started, err)
	case req.cmd == "getbundle":
		started := false
		err := s.getbundle(ctx, req.args, func(bool) (io.WriteCloser, error) {
			started = true
			return nopWriteCloser{ss.out}, nil
		})
		return ss.streamEnd("getbundle", started, err)
	case req.cmd == "changegroup" || req.cmd == "changegroupsubset":
		started := false
		err := s.legacyChangegroup(ctx, req.cmd, req.args, func(bool) (io.WriteCloser, error) {
			started = true
			return nopWriteCloser{ss.out}, nil
		})
		return ss.streamEnd(req.cmd, started, err)
	}
	out, err := s.answer(req.cmd, req.args, ss.pc)
	switch {
	case errors.Is(err, errNotServed):
		return ss.oob(fmt.Sprintf("hgfs serve does not implement the %s command", req.cmd))
	case err != nil:
		s.logError("%s: %v", req.cmd, err)
		return ss.oob(fmt.Sprintf("%s: %v", req.cmd, err))
	}
	if req.cmd == "protocaps" {
		// wireprotov1server.protocaps: the session remembers them.
		ss.pc.comp = parseCompCaps(req.args["caps"])
	}
	return ss.bytes(out)
}

// streamEnd finishes a stream reply. An error before anything was sent
// is what hg's server ends with (an exception, or "cannot do better for
// bundle1 + ssh"): its message goes to the client's stderr and the
// session ends; after, the reply is cut, which the client sees as its
// end of input.
func (ss *sshSession) streamEnd(cmd string, started bool, err error) error {
	if err == nil {
		return ss.out.Flush()
	}
	if started {
		ss.out.Flush()
		return fmt.Errorf("%s: %w", cmd, err)
	}
	var oob *oobError
	if errors.As(err, &oob) {
		return errors.New(strings.TrimSuffix(oob.msg, "\n"))
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// bytes sends a bytes reply (_sshv1respondbytes).
func (ss *sshSession) bytes(data string) error {
	ss.out.WriteString(strconv.Itoa(len(data)) + "\n")
	ss.out.WriteString(data)
	return ss.out.Flush()
}

// oob sends an out-of-band error (_sshv1respondooberror).
func (ss *sshSession) oob(msg string) error {
	io.WriteString(ss.errOut, msg+"\n-\n")
	ss.out.WriteString("\n")
	return ss.out.Flush()
}

// parseCompCaps reads the compression engines of a protocaps list
// (wireprotov1server.clientcompressionsupport, with its default).
func parseCompCaps(caps string) []string {
	var comp []string
	for _, c := range strings.Split(caps, " ") {
		if e, ok := strings.CutPrefix(c, "comp="); ok {
			comp = strings.Split(e, ",")
		}
	}
	if comp == nil {
		comp = []string{"zlib", "none"}
	}
	return comp
}
