package uring

import "sync/atomic"

// off is set by SetEnabled(false).
var off atomic.Bool

// SetEnabled switches io_uring on or off for the whole process and
// returns the previous setting. While it is off, New (and so
// NewFileReader) fails with an error wrapping ErrUnavailable and every
// caller makes its system calls one by one, as where the kernel refuses
// io_uring. It is on unless a program switches it off: the hgfs command
// does for HGFS_TUNE=-uring (internal/tune); tests do to run the
// fallback. Rings already made keep working.
func SetEnabled(on bool) (was bool) { return !off.Swap(!on) }

// Enabled reports SetEnabled's setting.
func Enabled() bool { return !off.Load() }
