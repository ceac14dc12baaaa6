//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Serving changegroups: real `hg` clients (no --stream) against `hgfs
// serve` and against `hg serve`, both started for the case on the same
// repository, on two stores: "many files" (make bench's large repository)
// and "real history" (the corpus bundle unbundled by hg). Cases:
//
//   - `hg clone -U URL`: a changegroup of everything;
//   - `hg pull URL` of 1 and of 100 new changesets, into a hard-linked
//     copy (made before the timer starts) of a cached clone that lacks
//     them: for the real history the served repository is the corpus
//     and the clone lacks its last N revisions; the many-files store
//     gets 100 more commits of three files each (hgbench.py's
//     benchcommits) in a cached copy served for the pulls;
//   - cgClients (-clients, 8 by default) `hg clone -U URL` started at
//     once, timed until the last one ends; once whatever -n. 32 took 2.5
//     minutes a side on the real history alone (2 cores; hg serve's
//     32 requests share one interpreter), past the whole set's budget.
//
// Each timed command is this bench binary in a child mode (servedChild)
// that runs the clients and prints, beside them, the server's CPU time
// (utime+stime+cutime+cstime of /proc/PID/stat, in 10 ms ticks, before
// and after; both servers are one process, hg serve threaded) and its
// peak RSS over the requests (VmHWM after resetting it through
// /proc/PID/clear_refs), and the clients' CPU time (their wait4 rusage).
// The main table's RSS columns of these cases are the servers' peak RSS,
// and a table of its own gives the CPU figures: the goal is hgfs serve's
// CPU at most 0.2x hg serve's per clone or pull. Peak RSS is to be flat
// in repository size, read from the two stores' rows.
//
// The clone case times a third command in each repetition, the client's
// floor: `hg unbundle` of the same changegroup from a local file (`hg
// bundle -a -t zstd-v2`, as the server compresses its response with zstd)
// into a repository made by `hg init` before the timer starts. Its row
// gives clone-from-hgfs-serve time / floor: goal 1.1x. It also runs the
// server's floor (serverfloor.go): the serving table compares it with
// both servers' CPU.
//
// Checks: both clones have the same revlogs and tip (hg verify once), the
// floor's tip is theirs; a pull leaves the served tip and revision count
// and the cached clone it copied unchanged; every concurrent clone has
// the served tip's changelog.

// cgClients is the number of concurrent clones (-clients).
var cgClients = 8

// cgStore is a store the serving cases run on.
type cgStore struct {
	label string
	// repo is cloned; bundle is its `hg bundle -a -t zstd-v2`.
	repo, bundle func(ctx context.Context, env *Env) (string, error)
	// pulled is served for the pulls: at least 100 changesets.
	pulled func(ctx context.Context, env *Env) (string, error)
}

func init() {
	for _, k := range []cgStore{
		{"many files", largeRepo, largeBundle, largePlusRepo},
		{"real history", historyRepo, historyBundle, historyRepo},
	} {
		registerCgServe(k)
	}
}

// pullExtra is how many changesets the pull cases' served repository of
// the large store has beyond the large repository.
const pullExtra = 100

// largePlusRepo is the large repository with pullExtra more commits, cached:
// a local (hard-linked) clone, then benchcommits.
func largePlusRepo(ctx context.Context, env *Env) (string, error) {
	repo, err := largeRepo(ctx, env)
	if err != nil {
		return "", err
	}
	ext, err := hgBenchExtPath(env)
	if err != nil {
		return "", err
	}
	key := "v1 " + readString(filepath.Join(env.Cache, filepath.Base(repo)+".done"))
	return cachedPath(env, fmt.Sprintf("%s-plus%d", filepath.Base(repo), pullExtra), key, func(dir string) error {
		fmt.Fprintf(os.Stderr, "  adding %d commits to a copy of %s (once; cached)\n", pullExtra, filepath.Base(repo))
		if err := runQuiet(exec.Command(env.Hg, "clone", "-q", "-U", repo, dir), env); err != nil {
			return err
		}
		return runQuiet(exec.Command(env.Hg, "-R", dir, "--config", "extensions.hgbench="+ext, "benchcommits", strconv.Itoa(pullExtra)), env)
	})
}

// hgBenchExtPath writes hgbench.py into the cache and returns its path.
func hgBenchExtPath(env *Env) (string, error) {
	p := filepath.Join(env.Cache, "hgbench.py")
	return p, os.WriteFile(p, hgBenchExt, 0o644)
}

// repoTip is a repository's tip node and revision count.
func repoTip(env *Env, repo string) (string, error) {
	out, err := hgCmd(env, "-R", repo, "log", "-r", "tip", "-T", "{node} {rev}").Output()
	if err != nil {
		return "", fmt.Errorf("hg log -R %s: %w", repo, err)
	}
	return string(out), nil
}

// pullBase is a clone of served without its last n revisions (by number),
// cached: `hg clone -U -r HEAD...` of the heads of the rest, so a pull
// from served brings exactly those n changesets.
func pullBase(env *Env, served string, n int) (string, error) {
	tip, err := repoTip(env, served)
	if err != nil {
		return "", err
	}
	var rev int
	if _, err := fmt.Sscanf(strings.Fields(tip)[1], "%d", &rev); err != nil || rev < n {
		return "", fmt.Errorf("%s has too few revisions (%s) for a pull of %d", served, tip, n)
	}
	return cachedPath(env, fmt.Sprintf("%s.pull-base-%d", filepath.Base(served), n), tip, func(dir string) error {
		fmt.Fprintf(os.Stderr, "  cloning %s without its last %d changesets (once; cached)\n", filepath.Base(served), n)
		heads, err := hgCmd(env, "-R", served, "log", "-r", fmt.Sprintf("heads(0:%d)", rev-n), "-T", "{node}\n").Output()
		if err != nil {
			return fmt.Errorf("hg log: %w", err)
		}
		args := []string{"clone", "-q", "-U"}
		for _, h := range strings.Fields(string(heads)) {
			args = append(args, "-r", h)
		}
		return runQuiet(exec.Command(env.Hg, append(args, served, dir)...), env)
	})
}

// servers are an hgfs serve and an hg serve of one repository.
type servers struct {
	hgfs, hg *hgServe
}

// startServerPair starts both servers on repo; l stops them at its teardown.
func startServerPair(env *Env, l *lifecycle, repo, work string) (servers, error) {
	var s servers
	cmd := exec.Command(env.Hgfs, "serve", "-R", repo, "-p", "0", "-E", filepath.Join(work, "hgfs-serve.errors"))
	url, err := startServer(env, cmd)
	if err != nil {
		return s, err
	}
	s.hgfs = &hgServe{url: url, cmd: cmd}
	l.onFinish(s.hgfs.stop)
	if s.hg, err = startHgServeLog(env, repo, filepath.Join(work, "peer-serve.errors")); err != nil {
		return s, err
	}
	l.onFinish(s.hg.stop)
	heads, err := hgCmd(env, "-R", repo, "log", "-r", "heads(all())", "-T", "{node} ").Output()
	if err != nil {
		return s, fmt.Errorf("hg log: %w", err)
	}
	common, err := hgCmd(env, "-R", repo, "log", "-r", "parents(heads(all()))", "-T", "{node} ").Output()
	if err != nil {
		return s, fmt.Errorf("hg log: %w", err)
	}
	if len(bytes.TrimSpace(common)) == 0 {
		common = []byte(nullHex)
	}
	for _, srv := range []*hgServe{s.hgfs, s.hg} {
		if err := warmUp(srv.url, strings.TrimSpace(string(common)), strings.TrimSpace(string(heads))); err != nil {
			return s, fmt.Errorf("%s: %w", srv.cmd, err)
		}
	}
	return s, nil
}

// warmUp sends a server, untimed, a capabilities request and a getbundle
// of the served heads' own changesets (common = their parents: a small
// changegroup with manifest and file revisions). hg imports its modules
// on first use, and the first concurrent requests of a fresh hg serve
// race in those imports (AttributeError: module 'mercurial.filelog' has
// no attribute 'filelog', and the like: a 500, or a response cut short
// that the client's zstd decompressor rejects; seen with 8 clones); a
// server that has sent a changegroup has imported them. Both servers
// get the same requests, and the timed runs then measure serving alone,
// as on a server that has been up a while.
func warmUp(url, common, heads string) error {
	for _, q := range []struct {
		cmd     string
		headers []string
	}{{"capabilities", nil}, {"getbundle", changegroupHeaders(common, heads)}} {
		req, err := http.NewRequest("GET", url+"?cmd="+q.cmd, nil)
		if err != nil {
			return err
		}
		for _, h := range q.headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("warming up: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s: %.300s", q.cmd, resp.Status, body)
		}
		if err != nil {
			return fmt.Errorf("warming up: %w", err)
		}
	}
	return nil
}

func registerCgServe(k cgStore) {
	sfx := " (" + k.label + ")"
	type state struct {
		lifecycle
		env        *Env
		repo       string // served
		tip        string // served's tip node and revision
		base       string // pulls: the clone copied before each run
		baseTip    string
		srv        servers
		work       string
		run        int
		hgfs, peer string // the last run's destinations
		floor      string
		verified   bool
	}
	setup := func(st *state, served func(context.Context, *Env) (string, error), pull int) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			st.env, st.verified, st.run = env, false, 0
			var err error
			if st.repo, err = served(ctx, env); err != nil {
				return nil, err
			}
			if st.tip, err = repoTip(env, st.repo); err != nil {
				return nil, err
			}
			if pull > 0 {
				if st.base, err = pullBase(env, st.repo, pull); err != nil {
					return nil, err
				}
				if st.baseTip, err = repoTip(env, st.base); err != nil {
					return nil, err
				}
			}
			if st.work, err = st.scratch(env, "cgserve"); err != nil {
				return nil, err
			}
			if st.srv, err = startServerPair(env, &st.lifecycle, st.repo, st.work); err != nil {
				return nil, err
			}
			return st, nil
		}
	}
	// fresh names a new destination per run (earlier ones stay until the
	// bench ends, see trash.go) and, for pulls, fills it with a
	// hard-linked copy of the base (hg breaks a link before writing to a
	// file). The sync keeps earlier writeback out of the timed run.
	fresh := func(st *state, side string) (string, error) {
		st.run++
		dir := filepath.Join(st.work, fmt.Sprintf("%s-%d", side, st.run))
		if st.base != "" {
			if out, err := exec.Command("cp", "-al", st.base, dir).CombinedOutput(); err != nil {
				return "", fmt.Errorf("cp -al: %v: %s", err, out)
			}
		}
		return dir, exec.Command("sync").Run()
	}
	side := func(st *state, name string, clients int, args ...string) func(env *Env, _ any) *exec.Cmd {
		return func(env *Env, _ any) *exec.Cmd {
			srv := st.srv.hg
			if name == "hgfs" {
				srv = st.srv.hgfs
			}
			dir, err := fresh(st, name)
			if err != nil {
				return failCmd(err)
			}
			if name == "hgfs" {
				st.hgfs = dir
			} else {
				st.peer = dir
			}
			argv := []string{env.Hg}
			for _, a := range args {
				argv = append(argv, strings.ReplaceAll(a, "{url}", srv.url))
			}
			k := clients
			if k == 0 {
				k = cgClients // -clients, parsed after init
			}
			c := servedCmd(env, srv.cmd.Process.Pid, k, dir, argv...)
			c.Env = append(c.Env, servedLogEnv+"="+filepath.Join(st.work, name+"-serve.errors"))
			return c
		}
	}

	{ // clone, and the client's floor
		st := &state{}
		register(&Case{Name: "hg clone (changegroup) from hgfs serve vs hg serve" + sfx, Served: true, CPUGoal: 0.2,
			Setup: setup(st, k.repo, 0),
			Hgfs:  side(st, "hgfs", 1, "clone", "-q", "-U", "{url}", "{dest}"),
			Peer:  side(st, "peer", 1, "clone", "-q", "-U", "{url}", "{dest}"),
			Floor: func(env *Env, _ any) *exec.Cmd {
				bundle, err := k.bundle(context.Background(), env)
				if err != nil {
					return failCmd(err)
				}
				if st.floor, err = fresh(st, "floor"); err != nil {
					return failCmd(err)
				}
				if err := runQuiet(exec.Command(env.Hg, "init", st.floor), env); err != nil {
					return failCmd(err)
				}
				return hgCmd(env, "-R", st.floor, "unbundle", "-q", bundle)
			},
			FloorName: "hg unbundle of the zstd-v2 bundle", FloorGoal: 1.1,
			ServerFloor: func(env *Env, _ any) *exec.Cmd { return serverFloorCmd(env, st.repo) }, ServerFloorName: serverFloorName,
			Check: st.check(func(_, _ []byte) error {
				if err := sameHistory(st.env, st.hgfs, st.peer, &st.verified); err != nil {
					return err
				}
				return wantTip(st.env, st.floor, st.tip)
			})})
	}
	for _, n := range []int{1, pullExtra} {
		st := &state{}
		what := fmt.Sprintf("%d changesets", n)
		if n == 1 {
			what = "1 changeset"
		}
		register(&Case{Name: "hg pull of " + what + " from hgfs serve vs hg serve" + sfx, Served: true, CPUGoal: 0.2,
			Setup: setup(st, k.pulled, n),
			Hgfs:  side(st, "hgfs", 1, "-R", "{dest}", "pull", "-q", "{url}"),
			Peer:  side(st, "peer", 1, "-R", "{dest}", "pull", "-q", "{url}"),
			Check: st.check(func(_, _ []byte) error {
				for _, d := range []string{st.hgfs, st.peer} {
					if err := wantTip(st.env, d, st.tip); err != nil {
						return err
					}
				}
				return wantTip(st.env, st.base, st.baseTip)
			})})
	}
	{ // concurrent clones
		st := &state{}
		concurrentSetup := setup(st, k.repo, 0)
		register(&Case{Name: "{clients} concurrent hg clones from hgfs serve vs hg serve" + sfx, Served: true, CPUGoal: 0.2, Once: true,
			Setup: func(ctx context.Context, env *Env) (any, error) {
				d, err := concurrentSetup(ctx, env)
				st.once = true
				return d, err
			},
			Hgfs: side(st, "hgfs", 0, "clone", "-q", "-U", "{url}", "{dest}"),
			Peer: side(st, "peer", 0, "clone", "-q", "-U", "{url}", "{dest}"),
			Check: st.check(func(_, _ []byte) error {
				for _, d := range []string{st.hgfs, st.peer} {
					if err := sameChangelogs(d, cgClients); err != nil {
						return err
					}
					if err := wantTip(st.env, clientDest(d, 0, cgClients), st.tip); err != nil {
						return err
					}
				}
				return nil
			})})
	}
}

// wantTip checks that repo's tip node and revision are tip.
func wantTip(env *Env, repo, tip string) error {
	got, err := repoTip(env, repo)
	if err != nil {
		return err
	}
	if got != tip {
		return fmt.Errorf("%s: tip %q, want %q", repo, got, tip)
	}
	return nil
}

// sameChangelogs checks that the clients' clones of a concurrent run have
// changelogs of the same size.
func sameChangelogs(dest string, clients int) error {
	var first int64
	for i := 0; i < clients; i++ {
		var size int64
		for _, f := range []string{"00changelog.i", "00changelog.d"} {
			if fi, err := os.Stat(filepath.Join(clientDest(dest, i, clients), ".hg", "store", f)); err == nil {
				size += fi.Size()
			}
		}
		if size == 0 {
			return fmt.Errorf("%s: no changelog", clientDest(dest, i, clients))
		}
		if i == 0 {
			first = size
		} else if size != first {
			return fmt.Errorf("changelogs differ: %d bytes in %s, %d in %s", first, clientDest(dest, 0, clients), size, clientDest(dest, i, clients))
		}
	}
	return nil
}

// clientDest is client i's destination: dest itself for a single client.
func clientDest(dest string, i, clients int) string {
	if clients == 1 {
		return dest
	}
	return fmt.Sprintf("%s-%d", dest, i)
}

// servedChildFlag runs this binary as the timed command of a Served case:
//
//	bench -child-served PID CLIENTS DEST ARGV...
//
// starts CLIENTS copies of ARGV at once ("{dest}" in it replaced by
// clientDest(DEST, i, CLIENTS)), waits for all, and prints a servedLine
// with the server PID's CPU time and peak RSS over the clients' run.
const servedChildFlag = "-child-served"

// servedLogEnv names the server's error log, shown when a client fails.
const servedLogEnv = "HGFS_BENCH_SERVER_LOG"

// servedCmd is the timed command running argv as clients of the server pid.
func servedCmd(env *Env, pid, clients int, dest string, argv ...string) *exec.Cmd {
	c := exec.Command(env.Self, append([]string{servedChildFlag, strconv.Itoa(pid), strconv.Itoa(clients), dest}, argv...)...)
	c.Env = env.HgEnv
	return c
}

// served are a Served case's figures of one run.
type served struct {
	clients   int
	clientCPU time.Duration // the clients' user+sys
	serverCPU time.Duration // the server's user+sys (10 ms ticks)
	serverHWM int64         // the server's peak RSS, KiB
	// serverWrote is what the server wrote (wchar of /proc/PID/io):
	// the bytes it sent, for a server that writes no files.
	serverWrote int64
}

var servedRe = regexp.MustCompile(`(?m)^served clients=(\d+) client-cpu-us=(\d+) server-cpu-ticks=(\d+) server-hwm-kib=(\d+) server-wchar=(\d+)$`)

func parseServed(out []byte) (served, error) {
	m := servedRe.FindSubmatch(out)
	if m == nil {
		return served{}, fmt.Errorf("no server figures in the output %q", out)
	}
	var v [5]int64
	for i := range v {
		v[i], _ = strconv.ParseInt(string(m[i+1]), 10, 64)
	}
	return served{clients: int(v[0]), clientCPU: time.Duration(v[1]) * time.Microsecond,
		serverCPU: time.Duration(v[2]) * 10 * time.Millisecond, serverHWM: v[3], serverWrote: v[4]}, nil
}

func runServedChild(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "bench %s: "+format+"\n", append([]any{servedChildFlag}, a...)...)
		return 1
	}
	if len(args) < 4 {
		return fail("want PID CLIENTS DEST ARGV...")
	}
	pid, err1 := strconv.Atoi(args[0])
	clients, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || clients < 1 {
		return fail("bad PID or CLIENTS: %q %q", args[0], args[1])
	}
	dest, argv := args[2], args[3:]
	// Writing 5 resets the peak RSS to the current RSS (proc(5)).
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fail("resetting the server's peak RSS: %v", err)
	}
	cpu0, err := procCPUTicks(pid)
	if err != nil {
		return fail("%v", err)
	}
	wrote0, err := procWchar(pid)
	if err != nil {
		return fail("%v", err)
	}
	cmds := make([]*exec.Cmd, clients)
	errs := make([]bytes.Buffer, clients)
	for i := range cmds {
		a := make([]string, len(argv))
		for j, s := range argv {
			a[j] = strings.ReplaceAll(s, "{dest}", clientDest(dest, i, clients))
		}
		cmds[i] = exec.Command(a[0], a[1:]...)
		cmds[i].Stdout, cmds[i].Stderr = &errs[i], &errs[i]
	}
	var wg sync.WaitGroup
	failed := make([]error, clients)
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			failed[i] = err
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); failed[i] = c.Wait() }()
	}
	wg.Wait()
	cpu1, err := procCPUTicks(pid)
	if err != nil {
		return fail("%v", err)
	}
	hwm, err := procHWM(pid)
	if err != nil {
		return fail("%v", err)
	}
	wrote1, err := procWchar(pid)
	if err != nil {
		return fail("%v", err)
	}
	var clientCPU time.Duration
	bad := 0
	for i, c := range cmds {
		if failed[i] != nil {
			if bad++; bad <= 3 {
				fmt.Fprintf(os.Stderr, "client %d: %s: %v\n%s", i, strings.Join(c.Args, " "), failed[i], errs[i].Bytes())
			}
		}
		if c.ProcessState != nil {
			clientCPU += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		}
	}
	if bad > 0 {
		if b, err := os.ReadFile(os.Getenv(servedLogEnv)); err == nil && len(b) > 0 {
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			fmt.Fprintf(os.Stderr, "the server's error log ends:\n%s\n", b)
		}
		return fail("%d of %d clients failed", bad, clients)
	}
	fmt.Printf("served clients=%d client-cpu-us=%d server-cpu-ticks=%d server-hwm-kib=%d server-wchar=%d\n", clients, clientCPU.Microseconds(), cpu1-cpu0, hwm, wrote1-wrote0)
	return 0
}

// procCPUTicks is a process's user+system time and that of its waited-for
// children, in clock ticks (/proc/PID/stat fields 14 to 17).
func procCPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("the server's CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:])) // from field 3 on
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	var sum int64
	for _, s := range f[11:15] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %v", pid, err)
		}
		sum += v
	}
	return sum, nil
}

// procWchar is the bytes a process has written (wchar of /proc/PID/io:
// write, send and sendfile alike).
func procWchar(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, fmt.Errorf("the server's written bytes: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/io: no wchar", pid)
}

// procHWM is a process's peak RSS in KiB (VmHWM).
func procHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("the server's peak RSS: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}
