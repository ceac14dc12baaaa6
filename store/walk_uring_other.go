//go:build unix && !linux

package store

// statRing: io_uring is Linux's (see walk_uring_linux.go); elsewhere the
// walk stats with system calls.
type statRing struct{}

func newStatRing() *statRing { return nil }

func (*statRing) close() {}

func (*sysWalker) ringSizes([]string, []int64, []error) bool { return false }

// fileReader: reading during the walk is Linux's (walk_uring_linux.go).
type fileReader struct{}

func (*fileReader) close() {}

func (*sysWalker) readSizes([]string, []int64, []error, [][]byte) bool { return false }
