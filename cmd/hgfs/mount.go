package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/internal/hugeheap"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/mount"
)

// readyFdEnv names the file descriptor on which a daemonized mount tells
// the parent it is up ('R') or why it failed (any other text), as sshfs and
// gocryptfs do. The parent exits only once the mount answers requests.
const readyFdEnv = "HGFS_MOUNT_READY_FD"

func init() {
	register(&command{
		name:     "mount",
		synopsis: "[--foreground] [--create] [--allow-non-empty] [--allow-other] [--debug-fuse] [--backend NAME] CACHE|REPO MOUNTPOINT",
		help: `mount a cache (or a repository, read-only) on a directory

CACHE is an hgfs cache directory. An empty directory becomes a new empty
cache (hg init or hg clone into the mount then fills it); so does a
missing one with --create (without it, a mistyped path is an error). If
the first argument is a Mercurial repository (a directory holding .hg),
its .hg is shown read-only at MOUNTPOINT/.hg, so "hg -R MOUNTPOINT log"
works.

MOUNTPOINT must be an empty directory: the mount would hide the files of
a non-empty one, which --allow-non-empty accepts.

The command returns once the mount answers requests, leaving a daemon to
serve it; --foreground keeps serving in this process instead. Only the
mounting user can use the mount unless --allow-other is given.

SIGINT, SIGTERM or SIGHUP to the daemon, "hgfs unmount MOUNTPOINT" or
"fusermount3 -u MOUNTPOINT" make everything written durable and unmount.

MOUNTPOINT/.hgfs is a read-only directory, not listed in the root's
listing, showing the repository's revisions as files:

    rev/REV/PATH       file PATH of changeset REV (a number, a node or
                       prefix, tip, a tag, a bookmark, a branch)
    tag/NAME, bookmark/NAME, branch/NAME
                       links to rev/FULLNODE; a name with slashes
                       (feature/x) is a path
    log heads tags bookmarks branches
                       what those hg commands print
    revlogs/STOREPATH/index, revlogs/STOREPATH/N
                       hg debugindex --debug and hg debugdata
    stats              the daemon and its committer, as JSON (hgfs stats)

The daemon's output goes to --log FILE, or nowhere.

--backend chooses the FUSE adapter: gofuse (go-fuse, the default on
Linux) or cgofuse (WinFsp on Windows, its default and only one; on Linux
only in builds made with -tags cgofuse,fuse3). A repository is mounted
with gofuse only.

On Windows there is no daemon: the command always serves in the
foreground, as with --foreground, until Ctrl-C. MOUNTPOINT is a free
drive letter (X:) or a directory that does not exist yet, in an existing
parent: WinFsp creates it and removes it at unmount.`,
		options: []option{
			{'f', "foreground", optBool, "", "serve in this process; do not return until unmounted"},
			{0, "create", optBool, "", "create CACHE (a new empty cache) if it does not exist"},
			{0, "allow-non-empty", optBool, "", "mount over a non-empty directory, hiding its files"},
			{0, "allow-other", optBool, "", "let other users access the mount (FUSE allow_other)"},
			{0, "debug-fuse", optBool, "", "log every FUSE request and reply"},
			{0, "read-only", optBool, "", "mount read-only"},
			{0, "log", optString, "", "file the daemon appends its messages to"},
			backendOption,
		},
		run: runMount,
	})
}

// backendOption is --backend, on "hgfs mount" and "hgfs clone --mount".
var backendOption = option{0, "backend", optString, "", "FUSE adapter: gofuse (Linux) or cgofuse (WinFsp; Linux builds with -tags cgofuse,fuse3)"}

// noDaemon is set where a mount is always served in the foreground. On
// Windows there is no fork-and-setsid equivalent worth having: a detached
// process would hold WinFsp's mount with no terminal to stop it and no
// "hgfs unmount" (see unmount.go) to end it, so --foreground is implied and
// Ctrl-C unmounts.
const noDaemon = runtime.GOOS == "windows"

// existingMountpoint is set where the mountpoint must be an existing
// directory, as FUSE on Linux wants. WinFsp wants the opposite (a drive
// letter, or a directory it creates); the adapter checks that itself.
const existingMountpoint = runtime.GOOS != "windows"

// mountpointArg resolves a MOUNTPOINT argument: a Windows drive letter
// ("X:", which is not an absolute path) stays as it is, anything else is
// made absolute.
func mountpointArg(c *cmdContext, arg string) string {
	if v := filepath.VolumeName(arg); v != "" && len(v) == 2 && (arg == v || arg == v+`\` || arg == v+"/") {
		return v
	}
	return c.abs(arg)
}

func runMount(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 2 {
		return &usageError{msg: "invalid arguments"}
	}
	if c.opts.Bool("foreground") || noDaemon {
		// This process serves (a daemonizing one only waits): huge pages
		// for its heap, asked before a gated daemon's wait so that the
		// cost overlaps the clone.
		hugeheap.Reserve(heapReserve)
	}
	if !passGate() {
		return nil // a clone --mount that failed: nothing to mount
	}
	source, mp := c.abs(args[0]), mountpointArg(c, args[1])
	if existingMountpoint {
		if fi, err := os.Stat(mp); err != nil {
			return abortf("mount point %s: %v", args[1], errorsCause(err))
		} else if !fi.IsDir() {
			return abortf("mount point %s is not a directory", args[1])
		}
	}
	if info, err := mount.ReadInfo(mp); err == nil {
		return abortf("%s is already an hgfs mount (of %s, pid %d)", args[1], info.Source, info.Pid)
	}
	if _, err := os.Stat(source); errors.Is(err, fs.ErrNotExist) && !c.opts.Bool("create") {
		return abortf("cache %s does not exist", args[0]).withHint("use --create to make a new empty cache there")
	}
	if existingMountpoint && !c.opts.Bool("allow-non-empty") {
		if ents, err := os.ReadDir(mp); err == nil && len(ents) > 0 {
			return abortf("mount point %s is not empty", args[1]).withHint("the mount would hide its files; use --allow-non-empty to mount anyway")
		}
	}
	if !c.opts.Bool("foreground") && !noDaemon {
		return daemonize(ctx, c, source, mp)
	}
	ready := readyNotifier()
	err := serveMount(ctx, c, source, mp, ready)
	if err != nil {
		ready.fail(err)
	}
	return err
}

// serveMount mounts and serves until the mount goes away or a signal asks
// it to: then it drains the cache and unmounts.
func serveMount(ctx context.Context, c *cmdContext, source, mp string, ready *notifier) error {
	opt := mount.Options{
		AllowOther: c.opts.Bool("allow-other"),
		Debug:      c.opts.Bool("debug-fuse"),
		ReadOnly:   c.opts.Bool("read-only"),
		FsName:     source,
		// This process only serves: it never starts a program inside
		// the mount, which is what RootPermissions must not meet. As
		// root without --allow-other it spares a GETATTR per file
		// created (see mount.Options).
		RootPermissions: true,
		Yield:           c.ui.tune.Enabled(tune.Yield),
		URing:           c.ui.tune.Enabled(tune.FuseURing),
	}
	// The go-fuse daemon's process-wide tricks (HGFS_TUNE), once the
	// mount is up: a mount that fails changes nothing in this process.
	goFuse := func() bool {
		b := c.opts.String("backend")
		return isRepo(source) || b == backendGoFuse || b == "" && defaultBackend() == backendGoFuse
	}()
	var (
		srv  mounted
		fsys *fsnode.FS
	)
	if isRepo(source) {
		// The read-only repository view exists for go-fuse only.
		if b := c.opts.String("backend"); b != backendGoFuse && (b != "" || defaultBackend() != backendGoFuse) {
			return abortf("mounting a repository needs the %s backend", backendGoFuse).withHint("mount an hgfs cache instead: 'hgfs clone --mount' makes one")
		}
		rs, err := mount.MountRepo(source, mp, opt)
		if err != nil {
			return abortf("%v", err)
		}
		srv = rs
	} else {
		var err error
		fsys, err = openOrCreateCache(c.ui.cfg, source, c.ui.tune.Enabled(tune.UnmapIndex))
		if err != nil {
			if a := unfinishedClone(source, err); a != nil {
				return a
			}
			return abortf("cache %s: %v", source, err)
		}
		srv, err = mountBackend(c.opts.String("backend"), fsys, mp, opt)
		if err != nil {
			if cerr := fsys.Close(); cerr != nil {
				c.ui.warn("hgfs: closing cache %s: %v\n", source, cerr)
			}
			return err // an abort with its hint
		}
		noteCacheUse(c.ui, source, mp)
	}
	if goFuse {
		tuneMountDaemon(c.ui)
	}
	ready.ok()

	select {
	case <-srv.Done():
	case <-ctx.Done():
		if err := srv.Unmount(); err != nil {
			select {
			case <-srv.Done():
				// Unmounted, but the last changes were not committed.
				c.ui.warn("hgfs: %v\n", err)
			default:
				// Files are still open: detach now, serve them until closed.
				c.ui.warn("hgfs: %v; detaching lazily\n", err)
				if err := srv.LazyUnmount(); err != nil {
					c.ui.warn("hgfs: %v\n", err)
				}
			}
		}
		srv.Wait()
	}
	if fsys != nil {
		compactAtUnmount(c, fsys)
		if err := fsys.Close(); err != nil {
			return abortf("closing cache %s: %v", source, err)
		}
		noteCacheUse(c.ui, source, "")
	}
	return nil
}

// Compaction at unmount is done only when cheap: when compaction is due
// and copies at most unmountCompactMax live bytes, within
// unmountCompactTime (a run cut short is safe: see fsnode's compact.go).
// Fully dead data files are dropped in any case.
const (
	unmountCompactMax  = 256 << 20
	unmountCompactTime = 10 * time.Second
)

func compactAtUnmount(c *cmdContext, fsys *fsnode.FS) {
	if on, err := c.ui.cfg.GetBool(config.HgfsCompact); err != nil || !on {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unmountCompactTime)
	defer cancel()
	if _, err := fsys.CompactIfDue(ctx, unmountCompactMax); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		c.ui.warn("hgfs: compacting cache %s: %v\n", fsys.Dir(), err)
	}
}

func isRepo(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, ".hg"))
	return err == nil && fi.IsDir()
}

// openOrCreateCache opens the cache in dir for a mount's daemon,
// creating one when dir is missing or empty; unmapIndex is HGFS_TUNE's
// unmapindex (fsnode.Options.UnmapIndex).
func openOrCreateCache(cfg *configSet, dir string, unmapIndex bool) (*fsnode.FS, error) {
	opt, err := cacheOptions(cfg)
	if err != nil {
		return nil, err
	}
	opt.UnmapIndex = unmapIndex
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return fsnode.Create(dir, opt)
	}
	if err != nil {
		return nil, err
	}
	return fsnode.Open(dir, opt)
}

// daemonize re-executes hgfs with --foreground in a new session and waits
// for it to report the mount ready (or failed) on a pipe.
func daemonize(ctx context.Context, c *cmdContext, source, mp string) error {
	d, err := startDaemon(c, source, mp, false)
	if err != nil {
		return err
	}
	return d.wait(ctx, c)
}

// daemon is a mount daemon started by this process, which waits for its
// report on the ready pipe.
type daemon struct {
	cmd        *exec.Cmd
	ready      *os.File // read end of the ready pipe
	gate       *os.File // write end of the gate pipe; nil if not gated
	source, mp string
}

// startDaemon starts "hgfs mount --foreground" for source on mp in a new
// session. A gated daemon (clone --mount starts one while the clone still
// runs, so that the new process's start-up overlaps the ingest) waits on a
// gate pipe before it looks at source or mp: open lets it go on, cancel
// (or this process's exit) makes it exit without mounting.
func startDaemon(c *cmdContext, source, mp string, gated bool) (*daemon, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, abortf("cannot find the hgfs executable: %v", err)
	}
	args := []string{"mount", "--foreground"}
	for _, b := range []string{"allow-other", "debug-fuse", "read-only", "create", "allow-non-empty"} {
		if c.opts.Bool(b) {
			args = append(args, "--"+b)
		}
	}
	if b := c.opts.String("backend"); b != "" {
		args = append(args, "--backend", b)
	}
	var out *os.File
	if lf := c.opts.String("log"); lf != "" {
		if out, err = os.OpenFile(c.abs(lf), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return nil, abortf("log file: %v", err)
		}
		defer out.Close()
	}
	// The daemon reads the hgrc files itself; --config overrides go along.
	for _, kv := range c.opts.List("config") {
		args = append(args, "--config", kv)
	}
	args = append(args, "--", source, mp)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), readyFdEnv+"=3")
	cmd.ExtraFiles = []*os.File{w}
	var gr, gw *os.File
	if gated {
		if gr, gw, err = os.Pipe(); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
		cmd.Env = append(cmd.Env, gateFdEnv+"=4")
		cmd.ExtraFiles = append(cmd.ExtraFiles, gr)
	}
	cmd.Dir = "/" // hold no directory busy; every path is absolute
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
	}
	cmd.SysProcAttr = mount.DaemonAttr(!c.ui.tune.Enabled(tune.SameSession))
	err = cmd.Start()
	w.Close()
	if gr != nil {
		gr.Close()
	}
	if err != nil {
		r.Close()
		if gw != nil {
			gw.Close()
		}
		return nil, abortf("starting the mount daemon: %v", err)
	}
	return &daemon{cmd: cmd, ready: r, gate: gw, source: source, mp: mp}, nil
}

// open lets a gated daemon go on to mount.
func (d *daemon) open() {
	if d.gate != nil {
		// A failed write means the daemon is gone; wait reports it.
		_, _ = d.gate.Write([]byte{gateOpen})
		d.gate.Close()
		d.gate = nil
	}
}

// cancel makes a gated daemon exit without mounting, and reaps it.
func (d *daemon) cancel() {
	if d.gate != nil {
		d.gate.Close()
		d.gate = nil
	}
	d.ready.Close()
	_ = d.cmd.Wait()
}

// wait waits for the daemon's report: nil once it has mounted.
func (d *daemon) wait(ctx context.Context, c *cmdContext) error {
	cmd, r, mp := d.cmd, d.ready, d.mp
	defer r.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			r.Close() // interrupted while waiting: stop reading
		case <-done:
		}
	}()
	// A read error means the interrupt above closed r; ctx says so below.
	msg, _ := io.ReadAll(r)
	if string(msg) == "R" {
		c.ui.note("mounted %s on %s (pid %d)\n", d.source, mp, cmd.Process.Pid)
		return cmd.Process.Release()
	}
	if len(msg) == 0 && ctx.Err() != nil {
		// Interrupted before the daemon reported. SIGTERM makes it
		// unmount if it got that far (draining first) and exit; waiting
		// without it would wait for as long as the mount is served.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		return ctx.Err()
	}
	_ = cmd.Wait()
	if len(msg) > 0 {
		text, hint, ok := strings.Cut(string(msg), hintSep)
		e := abortf("%s", text)
		if ok {
			e = e.withHint("%s", hint)
		}
		return e
	}
	return abortf("the mount daemon exited without mounting %s", mp).withHint("run with --foreground to see why")
}

// gateFdEnv names the file descriptor of a gated daemon's gate pipe (see
// startDaemon); gateOpen is the byte that opens it.
const (
	gateFdEnv = "HGFS_MOUNT_GATE_FD"
	gateOpen  = 'G'
)

// passGate waits at the gate of a gated daemon: true once it opens (or
// when there is none), false when the parent closed it without opening it.
func passGate() bool {
	v := os.Getenv(gateFdEnv)
	if v == "" {
		return true
	}
	os.Unsetenv(gateFdEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return true
	}
	f := os.NewFile(uintptr(fd), "gate")
	defer f.Close()
	var b [1]byte
	n, _ := f.Read(b[:])
	return n == 1 && b[0] == gateOpen
}

// notifier reports readiness to a waiting parent, when there is one.
type notifier struct{ f *os.File }

func readyNotifier() *notifier {
	v := os.Getenv(readyFdEnv)
	if v == "" {
		return &notifier{}
	}
	os.Unsetenv(readyFdEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return &notifier{}
	}
	return &notifier{f: os.NewFile(uintptr(fd), "ready")}
}

func (n *notifier) ok() { n.send("R") }

// hintSep separates an abort's message from its hint on the ready pipe,
// so that the parent prints the hint the daemon's abort carried.
const hintSep = "\x00"

func (n *notifier) fail(err error) {
	var ae *abortError
	if errors.As(err, &ae) && ae.hint != "" {
		n.send(ae.msg + hintSep + ae.hint)
		return
	}
	n.send(err.Error())
}

func (n *notifier) send(msg string) {
	if n.f == nil {
		return
	}
	fmt.Fprint(n.f, msg)
	n.f.Close()
	n.f = nil
}

// cacheOptions reads the cache's settings from [hgfs] (config/items.go).
func cacheOptions(cfg *configSet) (fsnode.Options, error) {
	var opt fsnode.Options
	iv := cfg.Get(config.HgfsCommitInterval)
	d, err := time.ParseDuration(iv)
	if err != nil || d <= 0 {
		return opt, abortf("hgfs.commit-interval is not a positive duration ('%s')", iv)
	}
	opt.CommitInterval = d
	if opt.QueueCap, err = cfg.GetInt(config.HgfsQueueSize); err != nil {
		return opt, abortf("%v", err)
	}
	if opt.QueueCap < 1 {
		return opt, abortf("hgfs.queue-size must be at least 1")
	}
	durable, err := cfg.GetBool(config.HgfsDurable)
	if err != nil {
		return opt, abortf("%v", err)
	}
	opt.NoSync = !durable
	if opt.AutoCompact, err = cfg.GetBool(config.HgfsCompact); err != nil {
		return opt, abortf("%v", err)
	}
	g := cfg.Get(config.HgfsCompactGarbage)
	if opt.CompactGarbage, err = strconv.ParseFloat(g, 64); err != nil || opt.CompactGarbage <= 0 {
		return opt, abortf("hgfs.compact-garbage is not a positive number ('%s')", g)
	}
	iv = cfg.Get(config.HgfsCompactIdle)
	if opt.CompactIdle, err = time.ParseDuration(iv); err != nil || opt.CompactIdle <= 0 {
		return opt, abortf("hgfs.compact-idle is not a positive duration ('%s')", iv)
	}
	for _, s := range []struct {
		k config.Known
		v *int64
	}{{config.HgfsCompactSlack, &opt.CompactSlack}, {config.HgfsCompactRate, &opt.CompactRate}} {
		n, err := cfg.GetInt(s.k)
		if err != nil {
			return opt, abortf("%v", err)
		}
		if n < 1 {
			return opt, abortf("%s must be at least 1", s.k.Key())
		}
		*s.v = int64(n)
	}
	return opt, nil
}
