//go:build unix && !linux

package store

// statRing: io_uring is Linux's (see walk_uring_linux.go); elsewhere the
// walk stats with system calls.
type statRing struct{}

func newStatRing() *statRing { return nil }

func (*statRing) close() {}

func (*sysWalker) ringSizes([]string, []int64, []error) bool { return false }
