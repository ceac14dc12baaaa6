package main

import (
	"fmt"
	"os"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/profiling"
)

// timeLine is hg's --time report: wall time, then user and system CPU of
// this process and (after the +) of its children.
func timeLine(real time.Duration) string {
	r := readRusage()
	return fmt.Sprintf("time: real %.3f secs (user %.3f+%.3f sys %.3f+%.3f)",
		real.Seconds(), r.user, r.childUser, r.sys, r.childSys)
}

type profiler struct {
	s    *profiling.Session
	path string
	u    *ui
}

// startProfile begins --profile as configured in [profiling].
func startProfile(u *ui) (*profiler, error) {
	freq, err := u.cfg.GetInt(config.ProfilingFreq)
	if err != nil {
		return nil, abortf("%v", err)
	}
	top, err := u.cfg.GetInt(config.ProfilingTop)
	if err != nil {
		return nil, abortf("%v", err)
	}
	s, err := profiling.Start(profiling.Options{
		Kind:   u.cfg.Get(config.ProfilingType),
		Format: u.cfg.Get(config.ProfilingFormat),
		Freq:   freq,
		Top:    top,
		// This program owns its fd 2 (see profiling.Options).
		SilenceStderr: u.tune.Enabled(tune.SilenceStderr),
	})
	if err != nil {
		return nil, abortf("%v", err)
	}
	path := u.cfg.Get(config.ProfilingOutput)
	if path == "" {
		path = s.DefaultOutput()
	}
	return &profiler{s: s, path: path, u: u}, nil
}

// stop writes the profile: to stderr, or to the output file, named on
// stderr.
func (p *profiler) stop() error {
	if p.path == "" {
		p.u.out.Flush()
		return p.s.Stop(p.u.err)
	}
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	if err := p.s.Stop(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	p.u.errorf("%s written to %s\n", p.s.Describe(), p.path)
	return nil
}
