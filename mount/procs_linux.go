package mount

import (
	"runtime"
	"sync"
)

// spareProcs raises GOMAXPROCS, once go-fuse has sized its reader pool
// from it, by that pool's size (GOMAXPROCS clamped to 2..16).
//
// go-fuse's readers wait for requests in read(2) on /dev/fuse, and a
// goroutine in a system call keeps its P: with every P held by a waiting
// reader the runtime has no idle P, so its monitor thread takes the P
// from a reader that has waited 20 µs whenever work is queued on it,
// hands it to another thread, and keeps polling every 20 µs; the reader
// then looks for a P again on its way out of read(2). With as many spare
// Ps as readers a waiting reader keeps its P. The Ps are permissions to
// run Go code, not threads: running threads stay bounded by the work.
//
// Measured on the bench machine (2 CPUs, three or two alternated runs):
// tar -x of the 20,000-file store into a cache mount 6.7-7.4 s -> 5.4-5.8 s
// and daemon CPU -20%; a real hg clone --stream into a cache mount
// 19.7-20.3 s -> 16.9-17.5 s; cat of every file of a fresh mount ~3-4%
// faster; the first grep -r of .hgfs/rev/tip of a repository mount
// unchanged (0.80 s against 0.79 s median of five: its daemon is busy
// with its own goroutines rather than waiting in read(2)).
//
// Once per process: a process serving several mounts (tests) raises it
// once, from the value it started with.
var spareProcs = sync.OnceFunc(func() {
	n := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(n + min(max(n, 2), 16))
})
