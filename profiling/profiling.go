// Package profiling implements hgfs's --profile: a profile of one whole
// command, configured as Mercurial's [profiling] section is.
//
// Kinds: cpu (sampled at Options.Freq Hz), heap (the live heap at its
// peak, see peak.go), allocs, goroutine, block, mutex (snapshots taken
// when the command ends; block and mutex sampling is switched on for the
// command's duration) and trace (a runtime execution trace, for go tool
// trace).
//
// Formats: pprof (the gzipped protobuf go tool pprof reads), text (a table
// of the top functions by flat and cumulative cost) and kcachegrind
// (callgrind format, for kcachegrind and qcachegrind). A trace is always
// written in its own binary format.
package profiling

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
)

// Options select what is recorded and how it is written.
type Options struct {
	Kind   string // cpu, heap, allocs, goroutine, block, mutex, trace
	Format string // pprof, text, kcachegrind
	Freq   int    // CPU samples per second
	Top    int    // rows of the text table
	// SilenceStderr points file descriptor 2 at /dev/null, for the whole
	// process, while a CPU profile at a rate other than 100 Hz starts:
	// the runtime then writes a warning there that the rate was already
	// set ("cannot set cpu profile rate until previous profile has
	// finished"), which is expected here. Only a program that owns its
	// fd 2 should ask (hgfs does unless HGFS_TUNE has -silencestderr);
	// without it the warning is printed and the profile is the same.
	SilenceStderr bool
}

// Session is one running profile.
type Session struct {
	opt  Options
	buf  bytes.Buffer
	peak *peakHeap // heap: the profile at the largest live heap seen
}

// Kinds and formats accepted; hg's type names "stat" and "ls" mean cpu.
var (
	kinds   = map[string]string{"cpu": "cpu", "stat": "cpu", "ls": "cpu", "heap": "heap", "allocs": "allocs", "goroutine": "goroutine", "block": "block", "mutex": "mutex", "trace": "trace"}
	formats = map[string]bool{"pprof": true, "text": true, "kcachegrind": true}
)

// Start begins recording. Only one session may run at a time in a process.
func Start(opt Options) (*Session, error) {
	kind, ok := kinds[opt.Kind]
	if !ok {
		return nil, fmt.Errorf("invalid profiling type %q (cpu, heap, allocs, goroutine, block, mutex, trace)", opt.Kind)
	}
	opt.Kind = kind
	if !formats[opt.Format] {
		return nil, fmt.Errorf("invalid profiling format %q (pprof, text, kcachegrind)", opt.Format)
	}
	if opt.Top <= 0 {
		opt.Top = 30
	}
	s := &Session{opt: opt}
	switch kind {
	case "cpu":
		if opt.Freq <= 0 {
			return nil, fmt.Errorf("invalid profiling frequency %d", opt.Freq)
		}
		var err error
		// pprof.StartCPUProfile fixes the rate at 100 Hz; setting it first
		// keeps ours, and the runtime's warning that a rate was already set
		// is silenced if asked, where the platform allows (see rate_*.go).
		start := func() {
			if opt.Freq != 100 {
				runtime.SetCPUProfileRate(opt.Freq)
			}
			err = pprof.StartCPUProfile(&s.buf)
		}
		if opt.SilenceStderr {
			silenceStderr(start)
		} else {
			start()
		}
		if err != nil {
			return nil, err
		}
	case "trace":
		if err := trace.Start(&s.buf); err != nil {
			return nil, err
		}
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	case "heap":
		s.peak = watchPeak()
	}
	return s, nil
}

// DefaultOutput is where the profile goes when no output file is set:
// "" (stderr) for text, hgfs.prof otherwise.
func (s *Session) DefaultOutput() string {
	if s.opt.Format == "text" && s.opt.Kind != "trace" {
		return ""
	}
	return "hgfs.prof"
}

// Stop ends recording and writes the profile to w in the chosen format.
func (s *Session) Stop(w io.Writer) error {
	switch s.opt.Kind {
	case "cpu":
		pprof.StopCPUProfile()
	case "trace":
		trace.Stop()
		_, err := w.Write(s.buf.Bytes())
		return err
	default:
		p := pprof.Lookup(s.opt.Kind)
		if p == nil {
			return fmt.Errorf("no %s profile in this runtime", s.opt.Kind)
		}
		// A heap profile is the peak's, taken without a collection
		// first: a forced one publishes the end's heap (peak.go).
		if s.peak != nil {
			if err := s.peak.stop(&s.buf); err != nil {
				return err
			}
		} else {
			if s.opt.Kind == "allocs" {
				runtime.GC()
			}
			if err := p.WriteTo(&s.buf, 0); err != nil {
				return err
			}
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
	}
	switch s.opt.Format {
	case "pprof":
		_, err := w.Write(s.buf.Bytes())
		return err
	case "text":
		return writeText(w, s.buf.Bytes(), s.opt.Top)
	case "kcachegrind":
		return writeCallgrind(w, s.buf.Bytes())
	}
	return nil
}

// Describe names the profile for messages ("cpu profile", "heap profile").
func (s *Session) Describe() string { return strings.TrimSpace(s.opt.Kind + " profile") }
