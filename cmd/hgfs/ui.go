package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hgfs/hgfs/internal/tune"
)

// ui is hgfs's output channel, with hg's verbosity levels: status lines are
// hidden by -q, notes need -v, debug lines need --debug.
type ui struct {
	in        io.Reader
	out       *bufio.Writer
	err       io.Writer
	quiet     bool
	verbose   bool
	debug     bool
	traceback bool
	cfg       *configSet
	tune      tune.Settings // HGFS_TUNE (applyTune)
}

// write prints to stdout unconditionally (command output proper).
func (u *ui) write(format string, args ...any) { fmt.Fprintf(u.out, format, args...) }

// status prints progress-like messages that -q suppresses. Messages
// (status, note, debugf, warn) escape terminal controls (termsafe.go);
// write does not.
func (u *ui) status(format string, args ...any) {
	if !u.quiet {
		u.out.WriteString(termSafe(fmt.Sprintf(format, args...)))
	}
}

// note prints only with -v.
func (u *ui) note(format string, args ...any) {
	if u.verbose && !u.quiet {
		u.out.WriteString(termSafe(fmt.Sprintf(format, args...)))
	}
}

// debugf prints only with --debug.
func (u *ui) debugf(format string, args ...any) {
	if u.debug {
		u.out.WriteString(termSafe(fmt.Sprintf(format, args...)))
	}
}

// warn prints to stderr (after flushing stdout, so ordering is kept).
func (u *ui) warn(format string, args ...any) {
	u.out.Flush()
	io.WriteString(u.err, termSafe(fmt.Sprintf(format, args...)))
}

func (u *ui) errorf(format string, args ...any) { u.warn(format, args...) }
