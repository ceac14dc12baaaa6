package mount

import (
	"runtime"
	"sync"
)

// spareProcs raises GOMAXPROCS, once go-fuse has sized its reader pool
// from it, by that pool's size (GOMAXPROCS clamped to 2..16).
//
// go-fuse's readers wait for requests in read(2) on /dev/fuse, and a
// goroutine in a system call keeps its P. The runtime's monitor thread
// takes the P from a goroutine that has been in a system call for more
// than 20 µs when no other P is idle (or work is queued on that P, or
// the call has lasted 10 ms), hands it to another thread, and goes back
// to polling every 20 µs; the reader then looks for a P again on its
// way out of read(2). With every P held by a waiting reader, that
// happened around nearly every request. With as many spare Ps as
// readers, a P stays idle and a waiting reader keeps its own. The Ps
// are permissions to run Go code, not threads: running threads stay
// bounded by the work. (The 10 ms rule still applies to a reader that
// waits that long, so the monitor keeps some of its polling. A third rule,
// for a P whose goroutine has not been rescheduled for 10 ms, is what
// yielding in yield_linux.go answers.)
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
