//go:build !unix

package streamclone

import "os"

// dirHandles: elsewhere entries are opened by absolute path (see
// generate_unix.go for why unix opens them relative to their directory).
type dirHandles struct{}

func openDirs([]genEntry) *dirHandles { return &dirHandles{} }

func (*dirHandles) close() {}

// dirCache is a goroutine's view of dirHandles.
type dirCache struct{}

func (*dirHandles) cache() *dirCache { return &dirCache{} }

func (*dirCache) close() {}

func (*dirCache) open(e *genEntry) (entryFile, error) { return os.Open(e.path()) }
