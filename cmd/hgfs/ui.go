package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hgfs/hgfs/internal/tune"
)

// ui is hgfs's output channel, with hg's verbosity levels: status lines are
// hidden by -q, notes need -v, debug lines need --debug.
//
// Messages are never held back: each one is flushed as it is printed,
// after erasing the progress bar if one is drawn (as hg's ui does). The
// command's output proper is buffered, and line buffered when stdout is a
// terminal (as hg's stdout).
type ui struct {
	in        io.Reader
	out       *bufio.Writer
	err       io.Writer
	stdout    io.Writer    // what out writes to
	ttyOut    bool         // stdout is a terminal: write flushes
	bar       *progressBar // the bar last started (newProgress), erased before messages
	quiet     bool
	verbose   bool
	debug     bool
	traceback bool
	cfg       *configSet
	tune      tune.Settings // HGFS_TUNE (applyTune)
}

// write prints to stdout unconditionally (command output proper).
func (u *ui) write(format string, args ...any) {
	if u.ttyOut {
		u.bar.clear()
	}
	fmt.Fprintf(u.out, format, args...)
	if u.ttyOut {
		u.out.Flush()
	}
}

// message prints one message to stdout at once, the bar erased first.
func (u *ui) message(format string, args ...any) {
	u.bar.clear()
	u.out.WriteString(termSafe(fmt.Sprintf(format, args...)))
	u.out.Flush()
}

// status prints progress-like messages that -q suppresses. Messages
// (status, note, debugf, warn) escape terminal controls (termsafe.go);
// write does not.
func (u *ui) status(format string, args ...any) {
	if !u.quiet {
		u.message(format, args...)
	}
}

// note prints only with -v.
func (u *ui) note(format string, args ...any) {
	if u.verbose && !u.quiet {
		u.message(format, args...)
	}
}

// debugf prints only with --debug.
func (u *ui) debugf(format string, args ...any) {
	if u.debug {
		u.message(format, args...)
	}
}

// warn prints to stderr (after flushing stdout, so ordering is kept).
func (u *ui) warn(format string, args ...any) {
	u.bar.clear()
	u.out.Flush()
	io.WriteString(u.err, termSafe(fmt.Sprintf(format, args...)))
}

func (u *ui) errorf(format string, args ...any) { u.warn(format, args...) }
