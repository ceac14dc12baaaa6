package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/internal/hugeheap"
)

// command is one hgfs subcommand. Each lives in its own file and registers
// itself with register in an init function.
type command struct {
	name     string
	aliases  []string
	synopsis string // arguments, as in "hgfs help": "[-r REV] FILE..."
	help     string // first line is the summary
	options  []option
	// run executes the command. Returning errNothing exits 1 quietly;
	// *abortError and other errors print "abort: ..." and exit 255.
	run func(ctx context.Context, c *cmdContext, args []string) error
	// bigHeap marks the commands that grow a heap of tens of MB (pulls,
	// bundles, whole-repository checks): they ask for huge pages for it
	// first (hugeheap.Reserve, a few ms that the others skip). mount and
	// serve ask in the process that serves, not in one that only starts
	// a daemon and waits for it, and clone where its heap grows: into a
	// cache, and a changegroup's apply (runClone, changegroupClone). A
	// stream clone into a directory keeps a heap of a few MB, and the
	// huge pages gave it no time and added to its peak RSS: 1-2 MB as a
	// rule (12 alternated pairs, 20,000 and 250,000 files), and at a
	// tighter GC pace (GOGC 25) 80 MB in 4 of 30 runs of the
	// 20,000-file clone, none of 30 without the reservation: the advised
	// 64 MiB, whole, in huge pages.
	bigHeap bool
	// norepo marks a command that takes no repository (hg's norepo:
	// clone): the .hg/hgrc of a repository around the working directory
	// is not part of its configuration.
	norepo bool
}

// heapReserve is how much heap growth a bigHeap command asks huge pages
// for: more than a clone of the 20,000-file store into a cache grows its
// heap to (about 45 MB).
const heapReserve = 64 << 20

var commands = map[string]*command{}

func register(c *command) {
	for _, n := range append([]string{c.name}, c.aliases...) {
		if _, dup := commands[n]; dup {
			panic("hgfs: command registered twice: " + n)
		}
		commands[n] = c
	}
}

// globalOptions are accepted before or after any command, as in hg.
var globalOptions = []option{
	{'R', "repository", optString, "", "repository root directory or name of overlay bundle file"},
	{0, "cwd", optString, "", "change working directory"},
	{'y', "noninteractive", optBool, "", "do not prompt, automatically pick the first choice for all prompts"},
	{'q', "quiet", optBool, "", "suppress output"},
	{'v', "verbose", optBool, "", "enable additional output"},
	{0, "config", optList, "", "set/override config option (use 'section.name=value')"},
	{0, "debug", optBool, "", "enable debugging output"},
	{0, "traceback", optBool, "", "always print a traceback on exception"},
	{0, "time", optBool, "", "time how long the command takes"},
	{0, "profile", optBool, "", "print command execution profile"},
	{0, "version", optBool, "", "output version information and exit"},
	{'h', "help", optBool, "", "display help and exit"},
}

// cmdContext is what a command sees: its parsed options, the ui, and the
// working directory the command line was given in.
type cmdContext struct {
	ui   *ui
	opts *opts
	cwd  string
	cmd  *command
}

// abortError is an hg-style abort: "abort: msg" and optional "(hint)".
type abortError struct {
	msg   string
	hint  string
	err   error
	stack []uintptr // where abortf was called, for --traceback
}

func (e *abortError) Error() string { return e.msg }
func (e *abortError) Unwrap() error { return e.err }

// The first error among args is kept as the abort's cause, so that
// errors.Is/As and the hints carried by errors (revlog.FlagError) still
// reach the dispatcher through an abort that only rephrases them.
func abortf(format string, args ...any) *abortError {
	pc := make([]uintptr, 32)
	n := runtime.Callers(2, pc)
	e := &abortError{msg: fmt.Sprintf(format, args...), stack: pc[:n]}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.err = err
			break
		}
	}
	return e
}

// formatStack renders program counters as Go prints a goroutine's stack.
func formatStack(pc []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pc)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s()\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			return b.String()
		}
	}
}

// withHint returns e with a hint line.
func (e *abortError) withHint(format string, args ...any) *abortError {
	e.hint = fmt.Sprintf(format, args...)
	return e
}

// errNothing means "nothing to do": exit status 1, no message.
var errNothing = errors.New("nothing to do")

// exitError carries an explicit exit status (e.g. verify's 1) after the
// command has reported its own problems.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// findCommand resolves name exactly, by alias, or by unique prefix, as hg
// does, among the built-in commands.
func findCommand(name string) (*command, error) {
	c, _, err := resolveCommand(name, nil)
	return c, err
}

// splitCommand finds the command word: the first argument that is neither
// an option nor the value of a global option taking one. It returns the
// arguments before and after it.
func splitCommand(args []string) (name string, before, after []string) {
	takesValue := map[string]bool{}
	for _, op := range globalOptions {
		if op.kind != optBool {
			takesValue["--"+op.long] = true
			if op.short != 0 {
				takesValue["-"+string(op.short)] = true
			}
		}
	}
	for alias, long := range longAliases {
		if takesValue["--"+long] {
			takesValue["--"+alias] = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			if takesValue[a] {
				i++
			}
			continue
		}
		return a, args[:i:i], args[i+1:]
	}
	return "", args, nil
}

// earlyOptions are the global options needed before the command is
// known (hg's _earlyparseopts): where the configuration comes from, for
// [alias].
type earlyOptions struct {
	cwd, repo string
	config    []string
}

func parseEarlyOptions(args []string) earlyOptions {
	var e earlyOptions
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-R") && len(a) > 2 {
			name, val, hasVal = "-R", a[2:], true
		}
		var dst *string
		switch name {
		case "--cwd":
			dst = &e.cwd
		case "-R", "--repository", "--repo":
			dst = &e.repo
		case "--config":
		default:
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				break
			}
			i++
			val = args[i]
		}
		if dst != nil {
			*dst = val
		} else {
			e.config = append(e.config, val)
		}
	}
	return e
}

// resolveCwd is --cwd applied to the process's directory. The process's
// own directory is left alone (commands resolve paths with
// cmdContext.abs), so run can be called in-process.
func resolveCwd(flag string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", abortf("cannot get working directory: %v", err)
	}
	if flag == "" {
		return cwd, nil
	}
	// The process's own directory is left alone (commands resolve paths
	// with cmdContext.abs), so run can be called in-process.
	d := absFrom(cwd, flag)
	if fi, err := os.Stat(d); err != nil {
		return "", abortf("%s: %v", flag, errorsCause(err))
	} else if !fi.IsDir() {
		return "", abortf("%s: not a directory", flag)
	}
	return filepath.Clean(d), nil
}

// run is the whole program: parse, dispatch, report. It returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	start := time.Now()
	out := bufio.NewWriterSize(stdout, 64<<10)
	u := &ui{in: stdin, out: out, err: stderr, stdout: stdout, ttyOut: isTerminal(stdout)}
	defer out.Flush()
	applyTune(u)

	if m, ok, err := helperForm(args); err != nil {
		return u.report(err, false)
	} else if ok {
		args = m
	}
	name, before, after := splitCommand(args)
	rest := append(append([]string{}, before...), after...)
	var cmd *command
	var alias *aliasDef
	var pre *earlyConfig
	if name != "" {
		// [alias] comes from the configuration, read here from where the
		// early options say, its warnings held back for the reading below.
		var aliases map[string]string
		early := parseEarlyOptions(args)
		if cwd, err := resolveCwd(early.cwd); err == nil {
			e := &earlyConfig{root: findRepo(cwd, early.repo), overrides: early.config}
			if e.cfg, err = loadConfig(early.config, e.root, true, func(m string) { e.warnings = append(e.warnings, m) }); err == nil {
				aliases = commandAliases(e.cfg)
				pre = e
			}
		}
		var err error
		if cmd, alias, err = resolveCommand(name, aliases); err != nil {
			return u.report(err, false)
		}
		if alias != nil {
			var expanded []string
			if cmd, expanded, err = alias.expand(after); err != nil {
				return u.report(err, false)
			}
			rest = append(append([]string{}, before...), expanded...)
			name = alias.name
		} else {
			name = cmd.name
		}
	}
	if cmd != nil && cmd.name == "serve" && slices.Contains(rest, "--stdio") {
		if err := checkStdioInvocation(args); err != nil {
			return u.report(err, false)
		}
	}
	table := globalOptions
	if cmd != nil {
		table = append(append([]option{}, globalOptions...), cmd.options...)
	}
	o := newOpts()
	pos, err := parseArgs(rest, table, o)
	if err != nil {
		if cmd == nil {
			u.errorf("hgfs: %v\n(use 'hgfs help -v' for a list of global options)\n", err)
			return 255
		}
		return u.usage(&helpTopic{name: name, cmd: cmd, alias: alias}, err)
	}
	o.setDefaults(table)
	cwd, err := resolveCwd(o.String("cwd"))
	if err != nil {
		return u.report(err, false)
	}
	var flags []string
	for flag, item := range map[string]string{"quiet": "ui.quiet", "verbose": "ui.verbose", "debug": "ui.debug", "traceback": "ui.traceback"} {
		if o.Bool(flag) {
			flags = append(flags, item+"=true")
		}
	}
	warn := func(msg string) { u.warn("%s", msg) }
	cfg, err := pre.reuse(findRepo(cwd, o.String("repository")), o.List("config"), flags, cmd == nil || !cmd.norepo, warn)
	if err != nil {
		return u.report(err, false)
	}
	u.cfg = cfg
	for _, b := range []struct {
		dst *bool
		key config.Known
	}{{&u.quiet, config.UIQuiet}, {&u.verbose, config.UIVerbose}, {&u.debug, config.UIDebug}, {&u.traceback, config.UITraceback}} {
		if *b.dst, err = cfg.GetBool(b.key); err != nil {
			return u.report(abortf("%v", err), false)
		}
	}
	if u.debug {
		u.verbose = true
		cfg.Debug = func(msg string) { u.debugf("%s", msg) }
	}

	switch {
	case o.Bool("version"):
		writeVersion(u)
		return 0
	case cmd == nil || o.Bool("help"):
		if cmd == nil {
			return helpCommand(u, nil)
		}
		return helpCommand(u, &helpTopic{name: name, cmd: cmd, alias: alias})
	}

	ctx, stop := notifySignals()
	defer stop()

	if o.Bool("time") {
		defer func() { u.errorf("%s\n", timeLine(time.Since(start))) }()
	}
	if o.Bool("profile") {
		p, err := startProfile(u)
		if err != nil {
			return u.report(err, false)
		}
		defer func() {
			if err := p.stop(); err != nil {
				u.errorf("abort: profile: %v\n", err)
				status = 255
			}
		}()
	}

	c := &cmdContext{ui: u, opts: o, cwd: cwd, cmd: cmd}
	err = c.call(ctx, pos)
	if ctx.Err() != nil && err != nil {
		out.Flush()
		u.errorf("%s", interruptMessage(ctx))
		return 255
	}
	var ue *usageError
	if errors.As(err, &ue) {
		out.Flush()
		return u.usage(&helpTopic{name: name, cmd: cmd, alias: alias}, ue)
	}
	return u.report(err, true)
}

// signalError is why notifySignals cancelled its context.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return e.sig.String() + " signal received" }

// notifySignals returns a context cancelled by SIGINT, SIGTERM or SIGHUP
// (SIGHUP too, as hg's catchterm: a terminal or ssh session closing under
// a long clone must clean up like Ctrl-C, not leave a partial destination
// behind), with the signal as its cause.
func notifySignals() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-ch:
			cancel(signalError{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// interruptMessage is what hg's dispatch prints for an interrupted
// command: "interrupted!" for SIGINT (KeyboardInterrupt), "killed!" for
// the signals catchterm turns into SignalInterrupt (SIGTERM, SIGHUP).
func interruptMessage(ctx context.Context) string {
	var se signalError
	if errors.As(context.Cause(ctx), &se) && se.sig != os.Interrupt {
		return "killed!\n"
	}
	return "interrupted!\n"
}

// call runs the command, turning a panic into an abort that names the bug
// rather than a crash with no context.
func (c *cmdContext) call(ctx context.Context, args []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &abortError{msg: fmt.Sprintf("internal error: %v", r), hint: "this is a bug in hgfs; please report it with the output of --traceback"}
			if c.ui.traceback {
				c.ui.errorf("%s", debug.Stack())
			}
		}
	}()
	if c.cmd.bigHeap {
		hugeheap.Reserve(heapReserve)
	}
	return c.cmd.run(ctx, c, args)
}

func errorsCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// report prints err as hg would and returns the exit status.
func (u *ui) report(err error, flush bool) int {
	if flush {
		u.out.Flush()
	}
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, errNothing) {
		return 1
	}
	var ue *usageError
	if errors.As(err, &ue) {
		u.errorf("hgfs: %s\n", ue.msg)
		return 255
	}
	var unknown *unknownCommandError
	if errors.As(err, &unknown) {
		u.errorf("hgfs: unknown command '%s'\n", unknown.name)
		if hint := similarityHint(unknown.similar); hint != "" {
			u.errorf("(%s)\n", hint)
		} else {
			u.errorf("(use 'hgfs help' for a list of commands)\n")
		}
		return 255
	}
	var ambiguous *ambiguousCommandError
	if errors.As(err, &ambiguous) {
		u.errorf("hgfs: %s\n", ambiguous.Error())
		return 255
	}
	var ce *configError
	if errors.As(err, &ce) {
		u.errorf("config error: %s\n", ce.msg)
		if ce.hint != "" {
			u.errorf("(%s)\n", ce.hint)
		}
		return 255
	}
	var ae *abortError
	hint := ""
	if errors.As(err, &ae) {
		u.errorf("abort: %s\n", ae.msg)
		hint = ae.hint
	} else {
		u.errorf("abort: %v\n", err)
	}
	// Errors that carry hg's hint (revlog.FlagError) give it when the
	// abort has none of its own.
	var h interface{ Hint() string }
	if hint == "" && errors.As(err, &h) {
		hint = h.Hint()
	}
	if hint != "" {
		u.errorf("(%s)\n", hint)
	}
	if u.traceback {
		u.errorf("Traceback (most recent call first):\n")
		if ae != nil && len(ae.stack) > 0 {
			u.errorf("%s", formatStack(ae.stack))
		} else {
			u.errorf("%s", debug.Stack())
		}
	}
	return 255
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0+dev"
}
