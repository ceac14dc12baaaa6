//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Case is one side-by-side benchmark: the same work done by hgfs and by a
// peer (hg, tar, cat...) on the same data in the same run. Each area adds
// its cases in its own file with register, from an init function.
type Case struct {
	Name string
	// Goal is the target ratio hgfs time / peer time (e.g. 0.2 for "at
	// most a fifth of hg's time"); 0 means no goal, just report.
	Goal float64
	// Setup prepares the data (cached across runs under env.Cache) and
	// returns a value passed to Hgfs and Peer.
	Setup func(ctx context.Context, env *Env) (any, error)
	// Hgfs and Peer build the commands timed; Check, if set, validates
	// both outputs (they must agree for the figures to mean anything).
	Hgfs  func(env *Env, data any) *exec.Cmd
	Peer  func(env *Env, data any) *exec.Cmd
	Check func(hgfsOut, peerOut []byte) error
	// Syscalls, when set, runs each side once more under strace -f -c
	// after the timed runs and reports the write calls and all calls
	// (strace slows both sides; these runs are not timed).
	Syscalls bool
	// Served marks a case whose sides are servers (hgfs serve, hg serve)
	// and whose timed commands are servedCmd's (cgserve.go): each prints
	// the server's CPU time and peak RSS over the run and the clients'
	// CPU time. The RSS columns are then the servers', and a table of
	// their own compares the CPU times against CPUGoal (hgfs serve's /
	// hg serve's; 0: no goal).
	Served  bool
	CPUGoal float64
	// Floor, when set, is a third command timed in each repetition,
	// after the peer: the least time the hgfs side could take (e.g. the
	// client alone, on a local file). A row of its own, named after
	// FloorName, gives hgfs time / floor time against FloorGoal.
	Floor     func(env *Env, data any) *exec.Cmd
	FloorName string
	FloorGoal float64
	// FloorVsPeer adds a row giving the floor's own time against the
	// peer's, against Goal: a floor over the goal is a goal no hgfs
	// built on the floor's premise can meet (the FUSE floor,
	// fusefloor.go).
	FloorVsPeer bool
	// RSSGoal, when set, is the target ratio of the peak RSS, hgfs's /
	// the peer's (1: at most the peer's), in a row of its own.
	RSSGoal float64
	// Figure, when set, parses a figure from each side's output in each
	// run (e.g. a latency percentile the child measured); its median is
	// printed in a row of its own, named FigureName, in FigureUnit,
	// against FigureGoal, a bound on the hgfs side's figure (not a
	// ratio; 0: no goal).
	Figure     func(out []byte) (float64, error)
	FigureName string
	FigureUnit string
	FigureGoal float64
	// ServerFloor, for a Served case, is a command run in each
	// repetition that prints the CPU time of the work a server cannot
	// skip (serverfloor.go): the serving table compares the servers'
	// CPU with it, which says how far CPUGoal is from reach.
	ServerFloor     func(env *Env, data any) *exec.Cmd
	ServerFloorName string
	// Once runs the case once whatever -n: a run is long, and it is
	// many samples already (concurrent clients).
	Once bool
}

var cases []*Case

func register(c *Case) { cases = append(cases, c) }

// Env is what cases see: tool paths, the cache directory and the
// environment hg runs in.
type Env struct {
	Hgfs  string   // hgfs binary
	Hg    string   // hg executable
	Self  string   // this bench binary (for Go-side helpers run as children)
	Cache string   // directory for generated data reused across runs
	HgEnv []string // hg's environment: no hgrc, plain output
	Time  string   // GNU time, for peak RSS ("" if not installed)
	// Strace is strace, for the Syscalls cases ("" if not installed).
	Strace string
	// Tune is the HGFS_TUNE value HgEnv carries for this run of the
	// cases (-tune; "" otherwise). Fixtures that keep an hgfs process
	// across cases keep one per value.
	Tune string
}

// sample is one timed run of a child process.
type sample struct {
	wall   time.Duration
	maxRSS int64 // KiB, from wait4's rusage
	out    []byte
	srv    served // Served cases: parsed from out
}

// measure runs cmd to completion and records its wall time and peak RSS.
//
// Peak RSS comes from GNU time (-f %M) when it is installed: Linux keeps a
// process's maxrss across exec, and Go starts children with vfork, so the
// child's own wait4 rusage would include this (larger) bench process's
// RSS. time forks a fresh, small process for the command. Without it the
// rusage figure is reported as an upper bound.
func measure(ctx context.Context, env *Env, cmd *exec.Cmd) (sample, error) {
	var rssFile string
	if env.Time != "" {
		f, err := os.CreateTemp("", "hgfs-bench-rss-")
		if err != nil {
			return sample{}, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		wrapped := exec.Command(env.Time, append([]string{"-f", "%M", "-o", rssFile, cmd.Path}, cmd.Args[1:]...)...)
		wrapped.Env, wrapped.Dir = cmd.Env, cmd.Dir
		cmd = wrapped
	}
	start := time.Now()
	out, err := cmd.Output()
	s := sample{wall: time.Since(start), out: out}
	if rssFile != "" {
		b, rerr := os.ReadFile(rssFile)
		if rerr == nil {
			fields := strings.Fields(string(b))
			if len(fields) > 0 {
				s.maxRSS, rerr = strconv.ParseInt(fields[len(fields)-1], 10, 64)
			}
		}
		if rerr != nil {
			return s, fmt.Errorf("reading peak RSS from time: %v", rerr)
		}
	} else if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.maxRSS = int64(ru.Maxrss) // KiB on Linux
		}
	}
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return s, fmt.Errorf("%s: %v\n%s", cmd.String(), err, msg)
	}
	return s, ctx.Err()
}

// result is a case's figures: medians over the repetitions.
type result struct {
	c                *Case
	hgfs, peer       time.Duration
	hgfsRSS, peerRSS int64
	floor            time.Duration // Floor cases: the floor's median
	floorRSS         int64
	fig              [2]float64        // Figure cases: hgfs's and the peer's medians
	srv              *[2]servedFigures // hgfs, peer (Served cases)
	serverFloor      time.Duration     // ServerFloor cases: the floor's CPU, mean
	sys              *[2]syscallCounts // hgfs, peer (Syscalls cases)
	tune             *string           // HGFS_TUNE of the run (-tune); nil: not set
	err              error
}

// name is the result's row label: the case's name, and its HGFS_TUNE
// under -tune ("default" for the default tricks).
func (r result) name() string {
	switch {
	case r.tune == nil:
		return r.c.Name
	case *r.tune == "":
		return r.c.Name + " [default]"
	}
	return r.c.Name + " [HGFS_TUNE=" + *r.tune + "]"
}

func medianOf(fs []float64) float64 {
	s := append([]float64{}, fs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// runCase runs hgfs and the peer alternately n times each, so machine
// noise hits both sides alike.
func runCase(ctx context.Context, env *Env, c *Case, n int, logf func(string, ...any)) result {
	res := result{c: c}
	if c.Once {
		n = 1
	}
	data, err := c.Setup(ctx, env)
	if err != nil {
		res.err = fmt.Errorf("setup: %w", err)
		return res
	}
	var ht, pt, ft []time.Duration
	var hf, pf []float64
	var srv [2]servedFigures
	for i := 0; i < n; i++ {
		hs, err := measure(ctx, env, c.Hgfs(env, data))
		if err == nil && c.Served {
			hs.srv, err = parseServed(hs.out)
		}
		if err != nil {
			res.err = fmt.Errorf("hgfs: %w", err)
			return res
		}
		ps, err := measure(ctx, env, c.Peer(env, data))
		if err == nil && c.Served {
			ps.srv, err = parseServed(ps.out)
		}
		if err != nil {
			if c.Served {
				logf("  %s run %d: hgfs serve %v (server CPU %v, %d KiB); the peer failed\n", c.Name, i+1,
					hs.wall.Round(time.Millisecond), hs.srv.serverCPU, hs.srv.serverHWM)
			}
			res.err = fmt.Errorf("peer: %w", err)
			return res
		}
		var fs sample
		if c.Floor != nil {
			if fs, err = measure(ctx, env, c.Floor(env, data)); err != nil {
				res.err = fmt.Errorf("floor: %w", err)
				return res
			}
		}
		if c.ServerFloor != nil {
			out, err := c.ServerFloor(env, data).Output()
			var cpu time.Duration
			if err == nil {
				cpu, err = parseServerFloor(out)
			}
			if err != nil {
				res.err = fmt.Errorf("server floor: %w", err)
				return res
			}
			logf("  %s run %d: server floor CPU %v\n", c.Name, i+1, cpu.Round(time.Millisecond))
			res.serverFloor += cpu / time.Duration(n)
		}
		if c.Check != nil {
			if err := c.Check(hs.out, ps.out); err != nil {
				res.err = fmt.Errorf("outputs disagree: %w", err)
				return res
			}
		}
		if c.Figure != nil {
			h, err := c.Figure(hs.out)
			if err == nil {
				var p float64
				p, err = c.Figure(ps.out)
				pf = append(pf, p)
			}
			if err != nil {
				res.err = fmt.Errorf("%s: %w", c.FigureName, err)
				return res
			}
			hf = append(hf, h)
		}
		if c.Served {
			// The servers' peak RSS, not the clients'.
			hs.maxRSS, ps.maxRSS = hs.srv.serverHWM, ps.srv.serverHWM
			srv[0].add(hs.srv, n)
			srv[1].add(ps.srv, n)
			logf("  %s run %d: hgfs side %v (server CPU %v, %d KiB, wrote %s), peer side %v (server CPU %v, %d KiB, wrote %s)\n", c.Name, i+1,
				hs.wall.Round(time.Millisecond), hs.srv.serverCPU, hs.maxRSS, mib(hs.srv.serverWrote/1024), ps.wall.Round(time.Millisecond), ps.srv.serverCPU, ps.maxRSS, mib(ps.srv.serverWrote/1024))
		} else {
			logf("  %s run %d: hgfs %v (%d KiB), peer %v (%d KiB)\n", c.Name, i+1, hs.wall.Round(time.Millisecond), hs.maxRSS, ps.wall.Round(time.Millisecond), ps.maxRSS)
		}
		if c.Floor != nil {
			logf("  %s run %d: floor %v (%d KiB)\n", c.Name, i+1, fs.wall.Round(time.Millisecond), fs.maxRSS)
			ft = append(ft, fs.wall)
			res.floorRSS = max(res.floorRSS, fs.maxRSS)
		}
		ht, pt = append(ht, hs.wall), append(pt, ps.wall)
		res.hgfsRSS, res.peerRSS = max(res.hgfsRSS, hs.maxRSS), max(res.peerRSS, ps.maxRSS)
	}
	res.hgfs, res.peer = median(ht), median(pt)
	if c.Floor != nil {
		res.floor = median(ft)
	}
	if c.Figure != nil {
		res.fig = [2]float64{medianOf(hf), medianOf(pf)}
	}
	if c.Served {
		res.srv = &srv
	}
	if c.Syscalls {
		if env.Strace == "" {
			logf("  %s: strace not installed, no system call counts\n", c.Name)
			return res
		}
		h, err := countSyscalls(ctx, env, c.Hgfs(env, data))
		if err != nil {
			res.err = fmt.Errorf("hgfs under strace: %w", err)
			return res
		}
		p, err := countSyscalls(ctx, env, c.Peer(env, data))
		if err != nil {
			res.err = fmt.Errorf("peer under strace: %w", err)
			return res
		}
		res.sys = &[2]syscallCounts{h, p}
		if c.Check != nil {
			if err := c.Check(nil, nil); err != nil {
				res.err = fmt.Errorf("outputs disagree after strace runs: %w", err)
			}
		}
	}
	return res
}

// servedFigures are a Served side's figures over the repetitions: CPU
// times are means (the server's comes in 10 ms ticks, which a median of
// three would keep), peak RSS the highest.
type servedFigures struct {
	clients              int
	serverCPU, clientCPU time.Duration
	serverHWM            int64
}

func (f *servedFigures) add(s served, n int) {
	f.clients = s.clients
	f.serverCPU += s.serverCPU / time.Duration(n)
	f.clientCPU += s.clientCPU / time.Duration(n)
	f.serverHWM = max(f.serverHWM, s.serverHWM)
}

// syscallCounts are strace -c totals of one run.
type syscallCounts struct {
	writes int64 // write, pwrite64, writev, pwritev, pwritev2
	total  int64
}

// countSyscalls runs cmd under strace -f -c and sums its summary table.
func countSyscalls(ctx context.Context, env *Env, cmd *exec.Cmd) (syscallCounts, error) {
	f, err := os.CreateTemp("", "hgfs-bench-strace-")
	if err != nil {
		return syscallCounts{}, err
	}
	f.Close()
	defer os.Remove(f.Name())
	wrapped := exec.CommandContext(ctx, env.Strace, append([]string{"-f", "-c", "-o", f.Name(), cmd.Path}, cmd.Args[1:]...)...)
	wrapped.Env, wrapped.Dir = cmd.Env, cmd.Dir
	if out, err := wrapped.CombinedOutput(); err != nil {
		return syscallCounts{}, fmt.Errorf("%s: %v\n%s", wrapped.String(), err, out)
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		return syscallCounts{}, err
	}
	var c syscallCounts
	// Rows: "% time  seconds  usecs/call  calls  [errors]  syscall".
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 || strings.HasPrefix(line, "%") || strings.HasPrefix(line, "-") {
			continue
		}
		name := fields[len(fields)-1]
		if name == "total" {
			continue
		}
		calls, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			continue
		}
		c.total += calls
		switch name {
		case "write", "pwrite64", "writev", "pwritev", "pwritev2":
			c.writes += calls
		}
	}
	if c.total == 0 {
		return c, fmt.Errorf("no strace summary in %s", f.Name())
	}
	return c, nil
}
