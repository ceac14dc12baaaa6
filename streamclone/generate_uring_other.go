//go:build !linux

package streamclone

// uring: io_uring is Linux's (see generate_uring_linux.go); elsewhere
// batches are read with system calls.
type uring struct{}

func newURing() *uring { return nil }

func (*uring) close() {}

func (*uring) abandon() {}

func (*uring) readBatch(*dirCache, []*genEntry, []byte) (int, bool) { return 0, true }
