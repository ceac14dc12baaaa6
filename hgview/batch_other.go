//go:build !linux

package hgview

// indexReader: io_uring is Linux's (see batch_linux.go); elsewhere the
// prefetcher reads each index itself.
type indexReader struct{}

func newIndexReader(string) *indexReader { return nil }

func (*indexReader) chunk() int { return 0 }

func (*indexReader) read(names []string) [][]byte { return make([][]byte, len(names)) }

func (*indexReader) close() {}
