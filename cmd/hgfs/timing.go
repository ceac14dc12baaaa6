package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

// timeLine is hg's --time report: wall time, then user and system CPU of
// this process and (after the +) of its children.
func timeLine(real time.Duration) string {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return fmt.Sprintf("time: real %.3f secs (user %.3f+%.3f sys %.3f+%.3f)",
		real.Seconds(), sec(self.Utime), sec(kids.Utime), sec(self.Stime), sec(kids.Stime))
}

type profiler struct {
	f    *os.File
	path string
	u    *ui
}

// startProfile begins a CPU profile written to [profiling] output
// (default hgfs.prof).
func startProfile(u *ui) (*profiler, error) {
	path := u.cfg.String("profiling", "output", "hgfs.prof")
	f, err := os.Create(path)
	if err != nil {
		return nil, abortf("cannot write profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, abortf("cannot start profile: %v", err)
	}
	return &profiler{f: f, path: path, u: u}, nil
}

func (p *profiler) stop() error {
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		return err
	}
	p.u.errorf("profile written to %s\n", p.path)
	return nil
}
