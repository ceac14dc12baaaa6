package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/internal/hugeheap"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/wireproto"
)

// serveReadyFdEnv names the descriptor on which a daemonized server tells
// the parent it listens ("R <listening line>") or why it failed.
const serveReadyFdEnv = "HGFS_SERVE_READY_FD"

// shutdownGrace bounds how long in-flight responses may run on after
// SIGINT/SIGTERM before their connections are closed.
const shutdownGrace = 30 * time.Second

func init() {
	register(&command{
		name:     "serve",
		synopsis: "[-R REPO | --web-conf FILE] [-a ADDRESS] [-p PORT] [-d --pid-file FILE] [--accesslog FILE] [--errorlog FILE] | -R REPO serve --stdio",
		help: `serve a repository over HTTP or ssh for clones and pulls (read-only)

Speaks Mercurial's HTTP wire protocol, as "hg serve" does, for what clones
and pulls need: capabilities, heads, known, lookup, branchmap, listkeys,
batch, stream_out (legacy stream clones), getbundle (bundle2 with a
changegroup or a "stream2" stream clone, bookmarks, listkeys, obsolescence
markers and phases; a bare changegroup for pre-bundle2 clients), and the
legacy changegroup, changegroupsubset, between and branches. "hg clone",
"hg clone --stream", "hg pull [-r REV]" and "hg incoming" work from it;
secret and hidden changesets are never sent in a changegroup. Pushes are
refused.

With --stdio it speaks the ssh protocol on its standard input and output
instead, as "hg serve --stdio" does for a client that reached it with
ssh: "hg clone --remotecmd hgfs ssh://HOST/PATH" and "hgfs clone
--remotecmd hgfs ssh://HOST/PATH" run "hgfs -R PATH serve --stdio" on
HOST. As hg does, the command line must then be exactly that (no other
option, so an ssh access tool can allow only it). The session ends when
the client closes it. The sessions, one process each, share the
serve-streams turns through lock files in .hg/hgfs-serve-turns.

Clone bundles: while .hg/clonebundles.manifest exists, the server
advertises it (the clonebundles and clonebundles_manifest capabilities)
and answers those commands with it, as "hg serve" with the clonebundles
extension does, so "hg clone" and "hgfs clone" take most of the history
from the bundles it lists and only the rest from the server.

Streaming honours hg's settings: server.uncompressed (allow stream clones),
server.uncompressedallowsecret (stream despite secret changesets, which a
stream cannot hide), server.bundle2.stream, server.preferuncompressed and
phases.publish; experimental.changegroup3 offers changegroup version 03,
experimental.evolution (exchange) obsolescence markers.

A browser (or curl) at the server's address without ?cmd= gets a small
page: the tip, heads, branches and bookmarks of what a clone would bring
(no secret or hidden changeset), and the hg clone and hgfs clone --mount
commands for the address it was reached at (web.baseurl overrides it;
web.name, web.description and web.contact are shown).

With --web-conf FILE it serves the repositories the [paths] section of
FILE names, as hg serve --web-conf does: "NAME = PATH" serves PATH at
/NAME (hg clone http://HOST:PORT/NAME), "PREFIX = DIR/*" every repository
found in DIR at /PREFIX/SUBPATH ("DIR/**" looks inside repositories too),
and / lists them (web.hidden ones not; web.descend = false lists only the
top level). The repositories are found when the server starts.

The server listens on 127.0.0.1 port 8000 by default; "-p 0" picks a free
port. SIGINT, SIGTERM or SIGHUP stop it (with --stdio too): responses in
progress get some time to finish. With -d it runs in the background and the command returns once it
listens; --pid-file records its pid.`,
		options: []option{
			{'a', "address", optString, "", "address to listen on (default: 127.0.0.1)"},
			{'p', "port", optInt, "", "port to listen on (default: 8000)"},
			{'d', "daemon", optBool, "", "run server in background"},
			{0, "pid-file", optString, "", "name of file to write process ID to"},
			{'A', "accesslog", optString, "", "name of access log file to write to"},
			{'E', "errorlog", optString, "", "name of error log file to write to"},
			{0, "web-conf", optString, "", "name of the hgweb config file (see 'hg help hgweb')"},
			{0, "stdio", optBool, "", "for remote clients (ADVANCED)"},
		},
		run: runServe,
	})
}

// serverConfig reads hg's serving settings from the configuration.
func serverConfig(cfg *config.Config) (wireproto.ServerConfig, error) {
	sc := wireproto.DefaultServerConfig()
	var errs []error
	b := func(cfg *config.Config, dst *bool, k config.Known) {
		v, err := cfg.GetBool(k)
		errs = append(errs, err)
		*dst = v
	}
	// hg reads these two with untrusted=True: the repository's owner
	// decides whether it may be stream-cloned and whether it publishes,
	// even in a .hg/hgrc the serving user does not trust. The others
	// are the server's to choose.
	untrusted := cfg.Untrusted()
	b(untrusted, &sc.Uncompressed, config.ServerUncompressed)
	b(cfg, &sc.UncompressedAllowSecret, config.ServerUncompressedAllowSecret)
	b(cfg, &sc.Bundle2Stream, config.ServerBundle2Stream)
	b(cfg, &sc.PreferUncompressed, config.ServerPreferUncompressed)
	b(untrusted, &sc.Publishing, config.PhasesPublish)
	b(cfg, &sc.Changegroup3, config.Changegroup3)
	_, exchange, err := cfg.Evolution()
	errs = append(errs, err)
	sc.ExchangeMarkers = exchange
	n, err := cfg.GetInt(config.ServerMaxHTTPHeaderLen)
	errs = append(errs, err)
	if n > 0 {
		sc.MaxHTTPHeaderLen = n
	}
	k := config.HgfsServeStreams
	streams, err := cfg.GetInt(k)
	errs = append(errs, err)
	if err == nil && streams < 0 {
		errs = append(errs, fmt.Errorf("%s must be at least 0", k.Key()))
	}
	sc.MaxStreams = streams
	wt := cfg.Get(config.HgfsServeWriteTimeout)
	if sc.WriteTimeout, err = time.ParseDuration(wt); err != nil || sc.WriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("%s is not a duration ('%s')", config.HgfsServeWriteTimeout.Key(), wt))
	}
	if err := errors.Join(errs...); err != nil {
		return sc, abortf("%v", err)
	}
	return sc, nil
}

func runServe(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 0 {
		return &usageError{msg: "invalid arguments"}
	}
	webConf := c.opts.String("web-conf") != ""
	if r := c.opts.String("repository"); r != "" && !webConf {
		if _, err := os.Stat(filepath.Join(c.abs(r), "index.db")); err == nil {
			// Serving straight from a cache needs streamclone to generate
			// from fsnode, and fsnode's index is locked while mounted.
			return abortf("%s is an hgfs cache, not a repository", r).withHint("mount it (hgfs mount) and serve the mount point: hgfs serve -R MOUNTPOINT")
		}
	}
	var root string
	var err error
	if !webConf {
		if root, err = c.repoRoot(); err != nil {
			return err
		}
	}
	sc, err := serverConfig(c.ui.cfg)
	sc.StoreWalkers = c.ui.storeWalkers()
	if err != nil {
		return err
	}
	if c.opts.Bool("stdio") {
		return serveStdio(ctx, c, root, sc)
	}
	addr := c.opts.String("address")
	if addr == "" {
		addr = "127.0.0.1"
	}
	port := 8000
	if c.opts.Changed("port") {
		port = c.opts.Int("port")
	}
	if port < 0 || port > 65535 {
		return abortf("invalid port number: %d", port)
	}
	if c.opts.Bool("daemon") && os.Getenv(serveReadyFdEnv) == "" {
		return serveDaemonize(ctx, c, root)
	}
	hugeheap.Reserve(heapReserve) // the serving process only (see -d above)
	ready := serveNotifier()
	err = serve(ctx, c, root, addr, port, sc, ready)
	if err != nil {
		ready.send("E " + err.Error())
	}
	return err
}

// openLog opens an append-only log file ("-" is stdout).
func openLog(c *cmdContext, name string) (io.Writer, func(), error) {
	if name == "" {
		return nil, func() {}, nil
	}
	if name == "-" {
		return &syncWriter{w: flushWriter{c.ui.out}}, func() {}, nil
	}
	f, err := os.OpenFile(c.abs(name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, abortf("%v", err)
	}
	return &syncWriter{w: f}, func() {
		if err := f.Close(); err != nil {
			c.ui.warn("hgfs: closing %s: %v\n", name, err)
		}
	}, nil
}

// syncWriter serializes the server's log lines. They quote what clients
// sent (request paths, arguments, error text), so control characters are
// escaped as in messages (termsafe.go): a client cannot reach the terminal
// of whoever reads the log, be it stderr, -A - or tail -f of a file.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.w, termSafe(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func serve(ctx context.Context, c *cmdContext, root, addr string, port int, sc wireproto.ServerConfig, ready *serveReady) error {
	var closers []func()
	defer func() {
		for _, f := range closers {
			f()
		}
	}()
	var err error
	var cl func()
	if sc.AccessLog, cl, err = openLog(c, c.opts.String("accesslog")); err != nil {
		return err
	}
	closers = append(closers, cl)
	if sc.ErrorLog, cl, err = openLog(c, c.opts.String("errorlog")); err != nil {
		return err
	}
	closers = append(closers, cl)
	if sc.ErrorLog == nil {
		sc.ErrorLog = &syncWriter{w: c.ui.err}
	}
	srv, err := serveHandler(c, root, sc) // serve_web.go
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return abortf("cannot start server at '%s:%d': %v", addr, port, errorsCause(err))
	}
	if pf := c.opts.String("pid-file"); pf != "" {
		if err := os.WriteFile(c.abs(pf), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			ln.Close()
			return abortf("writing pid file: %v", err)
		}
	}
	line := listeningLine(addr, ln.Addr().(*net.TCPAddr))
	if ready.active() {
		ready.send("R " + line)
	} else {
		c.ui.status("%s", line)
		c.ui.out.Flush()
	}
	hs := wireproto.HTTPServer(srv)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return abortf("server: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return abortf("server: %v", err)
	}
	return nil
}

// serveStdio serves one ssh session on stdin and stdout (hg's
// wireprotoserver.sshserver). Nothing else may write to stdout: it is
// the protocol's; errors and what the client should print go to stderr.
func serveStdio(ctx context.Context, c *cmdContext, root string, sc wireproto.ServerConfig) error {
	sc.ErrorLog = &syncWriter{w: c.ui.err}
	// Each session is a process: their stream turns are shared through
	// the repository.
	sc.TurnDir = filepath.Join(root, ".hg", "hgfs-serve-turns")
	srv, err := wireproto.NewServer(root, sc)
	if err != nil {
		return abortf("%v", err)
	}
	hugeheap.Reserve(heapReserve)
	c.ui.out.Flush()
	err = srv.ServeSSH(ctx, c.ui.in, flushWriter{c.ui.out}, c.ui.err, shutdownGrace)
	if err != nil {
		return abortf("%v", err)
	}
	return nil
}

// checkStdioInvocation is hg's dispatch check: with --stdio, the command
// line must be exactly "-R REPO serve --stdio", REPO not starting with
// "--", so that ssh access tools allowing only that cannot be talked into
// running anything else (--config, --debugger...).
func checkStdioInvocation(args []string) error {
	if len(args) == 4 && args[0] == "-R" && !strings.HasPrefix(args[1], "--") && args[2] == "serve" && args[3] == "--stdio" {
		return nil
	}
	return abortf("potentially unsafe serve --stdio invocation: %s", pprintList(args))
}

// pprintList is hg's stringutil.pprint of a list of bytes:
// ['a', 'b\'c'], each item escaped as codecs.escape_encode does.
func pprintList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + hgfmt.StringEscape(s) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// listeningLine is hg's "listening at http://HOST:PORT/ (bound to
// ADDR:PORT)", HOST being the address's name as socket.getfqdn finds it.
func listeningLine(addr string, bound *net.TCPAddr) string {
	host := addr
	if ip := net.ParseIP(addr); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	} else if ip != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		names, err := net.DefaultResolver.LookupAddr(ctx, addr)
		cancel()
		if err == nil && len(names) > 0 {
			host = trimDot(names[0])
		}
	}
	boundHost := bound.IP.String()
	if bound.IP.To4() == nil {
		boundHost = "[" + boundHost + "]"
		if net.ParseIP(host) != nil {
			host = "[" + host + "]"
		}
	}
	return fmt.Sprintf("listening at http://%s:%d/ (bound to %s:%d)\n", host, bound.Port, boundHost, bound.Port)
}

func trimDot(s string) string {
	if len(s) > 1 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

// serveDaemonize re-runs this command in the background and returns once
// the child listens (or failed to).
func serveDaemonize(ctx context.Context, c *cmdContext, root string) error {
	exe, err := os.Executable()
	if err != nil {
		return abortf("cannot find the hgfs executable: %v", err)
	}
	args := []string{"serve"}
	if root != "" {
		args = append(args, "-R", root)
	}
	for _, o := range []string{"address", "pid-file", "accesslog", "errorlog", "web-conf"} {
		if v := c.opts.String(o); v != "" {
			if o != "address" {
				v = c.abs(v)
			}
			args = append(args, "--"+o, v)
		}
	}
	if c.opts.Changed("port") {
		args = append(args, "--port", strconv.Itoa(c.opts.Int("port")))
	}
	for _, kv := range c.opts.List("config") {
		args = append(args, "--config", kv)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = c.cwd
	cmd.Env = append(os.Environ(), serveReadyFdEnv+"=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = mount.DaemonAttr(!c.ui.tune.Enabled(tune.SameSession))
	if err := cmd.Start(); err != nil {
		w.Close()
		return abortf("starting the server daemon: %v", err)
	}
	w.Close()
	go func() {
		<-ctx.Done()
		r.Close()
	}()
	msg, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if len(msg) > 2 && string(msg[:2]) == "R " {
		c.ui.status("%s", msg[2:])
		return cmd.Process.Release()
	}
	_ = cmd.Wait()
	if len(msg) > 2 {
		return abortf("%s", trimAbort(string(msg[2:])))
	}
	return abortf("the server daemon exited before listening")
}

func trimAbort(s string) string {
	const p = "abort: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// serveReady reports readiness to a waiting parent, when there is one.
type serveReady struct{ f *os.File }

func serveNotifier() *serveReady {
	v := os.Getenv(serveReadyFdEnv)
	if v == "" {
		return &serveReady{}
	}
	os.Unsetenv(serveReadyFdEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return &serveReady{}
	}
	return &serveReady{f: os.NewFile(uintptr(fd), "ready")}
}

func (n *serveReady) active() bool { return n.f != nil }

func (n *serveReady) send(msg string) {
	if n.f == nil {
		return
	}
	io.WriteString(n.f, msg)
	n.f.Close()
	n.f = nil
}

// flushWriter writes through a bufio.Writer and flushes, for log lines
// sent to stdout.
type flushWriter struct {
	b interface {
		Write([]byte) (int, error)
		Flush() error
	}
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.b.Write(p)
	if err == nil {
		err = f.b.Flush()
	}
	return n, err
}
