package main

import (
	"os"
	"runtime"
	"sync"

	"github.com/hgfs/hgfs/internal/gcpace"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/internal/uring"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/worktree"
)

// The performance tricks are this program's choice, switched by
// HGFS_TUNE (internal/tune); the libraries take them as options and
// change nothing process-wide on their own. Where each one is applied:
//
//   - uring, bufpool: here, for the whole process, at start-up
//     (applyTune; bufpool through revlog.SetPooling,
//     worktree.SetPooling and mount.SetPooling).
//   - checkoutgc: GOGC around a small checkout (checkoutHeap,
//     checkout.go).
//   - ingestgc: the garbage collector's pace in a clone into a cache
//     (ingestHeap, clone_mount.go) and in a stream clone into a
//     directory (dirApplyHeap, clone_mount.go).
//   - ingestsizes: the working files' sizes a clone into a cache learns
//     from its stream for the virtual checkout (cloner.ingestSizes,
//     clone_mount.go).
//   - silencestderr: --profile's profiling.Options (timing.go).
//   - walkfork: store.Store.Walkers of the stores hgfs serve, a local
//     clone and hgfs bundle stream from (storeWalkers).
//   - yield: mount.Options.Yield of the mount daemon (mount.go).
//   - applyfork: exchange.Options.FileWorkers of unbundle, pull and
//     changegroup clones (sessionOptions, fileWorkers).
//   - verifyahead, verifygc: hgfs verify's verify.Options.Ahead and its
//     GOGC (runVerify).
//   - quickack: wireproto.Options.QuickAck of every peer hgfs opens
//     (dialPeer, pull.go).
//   - deferdirs: the deferSink a clone's virtual checkout into a cache
//     goes through (cloner.checkoutSink, clone_mount.go).
//   - ingestevict: fsnode.Options.IngestEvict of the cache a clone
//     --mount fills (cloner.prepareMount, clone_mount.go).
//   - unmapindex: fsnode.Options.UnmapIndex of the cache a mount's
//     daemon serves (openOrCreateCache, mount.go).
//   - readahead: the read-ahead of a stream clone's HTTP response into
//     a directory (cloner.readAhead, clone.go).
//   - schedbatch, procs, daemongc: the go-fuse mount daemon's
//     scheduling policy, GOMAXPROCS and garbage collector's pace
//     (tuneMountDaemon); schedbatch is off unless HGFS_TUNE turns it
//     on (tune_linux.go says why).

// applyTune reads HGFS_TUNE once, at start-up: a malformed or unknown
// entry is a warning (the valid ones still apply), io_uring is switched
// for the process, and the settings are kept for the commands' own
// choices.
func applyTune(u *ui) {
	s, err := tune.FromEnv()
	if err != nil {
		u.warn("hgfs: warning: %v\n", err)
	}
	u.tune = s
	uring.SetEnabled(s.Enabled(tune.Uring))
	revlog.SetPooling(s.Enabled(tune.BufPool))
	worktree.SetPooling(s.Enabled(tune.BufPool))
	mount.SetPooling(s.Enabled(tune.BufPool))
}

// storeWalkers is store.Store.Walkers as HGFS_TUNE has it: one walker
// with -walkfork, else the store's default.
func (u *ui) storeWalkers() int {
	if !u.tune.Enabled(tune.WalkFork) {
		return 1
	}
	return 0
}

// fileWorkers is exchange.Options.FileWorkers as HGFS_TUNE has it: one
// (file groups applied as they are read) with -applyfork, else the
// session's default.
func (u *ui) fileWorkers() int {
	if !u.tune.Enabled(tune.ApplyFork) {
		return 1
	}
	return 0
}

// tuneMountDaemon applies a go-fuse mount daemon's process-wide tricks
// as HGFS_TUNE has them, once the mount is up (so a mount that fails,
// in a test binary say, leaves the process as it was): SCHED_BATCH
// for every thread, those the runtime starts later inheriting it
// (schedbatch, off by default), GOMAXPROCS raised now that go-fuse
// has sized its reader pool (procs), and the collector's pace
// (daemongc).
func tuneMountDaemon(u *ui) {
	if u.tune.Enabled(tune.SchedBatch) {
		// Failing that, the mount works as well: a warning, not an
		// error.
		if err := batchScheduling(); err != nil {
			u.warn("hgfs mount: %v\n", err)
		}
	}
	if u.tune.Enabled(tune.Procs) {
		spareProcs()
	}
	daemonHeapOnce.Do(func() { daemonHeap(u) })
}

// daemonShare and daemonHeadroom pace a mount daemon's collector
// (daemonHeap): each collection lets the heap grow by half the live
// heap, by at least 2 MiB. The daemon's live heap is bounded (the inode
// table's bound, the dirty queue, directory entries; fsnode's
// evictInodes), and at GOGC 100 the heap grew to twice it between
// collections, which set the daemon's peak RSS once the table reached
// its bound: tar -x of the bench's 250,000-file store into a mount and
// a stat of every file, live heap 15-18 MB, heap 36 MB (gctrace).
// Measured: see daemonHeap.
const (
	daemonShare    = 50
	daemonHeadroom = 2 << 20
)

var daemonHeapOnce sync.Once

// daemonHeap paces the collector of a mount daemon (HGFS_TUNE's
// daemongc) until the returned function is called (the daemon never
// does: the pace is the process's), unless GOGC is set in the
// environment; then, and without the trick, it returns nil. The pace
// nests under a command's own (gcpace). Measured by hand (2026-12-07,
// the bench's stores, a fresh mount each, two alternated pairs against
// HGFS_TUNE=-daemongc), the daemon's peak RSS:
//   - tar -x of 250,000 files, then a stat of every file: 64.5-67.8 ->
//     53.6-56.5 MB; tar 28.6-29.7 -> 25.7-27.2 s, stat 2.1-2.4 ->
//     1.9-2.2 s (noise);
//   - the same at 20,000 files: 39.4-40.9 -> 36.4-37.2 MB; tar
//     2.2-2.7 s either way, stat 0.15-0.17 -> 0.21-0.22 s;
//   - a fresh mount's cat of the 250,000 files: 61.4-62.4 -> 50.6-54.1
//     MB, 11.4-11.6 -> 11.7-11.9 s.
func daemonHeap(u *ui) (stop func()) {
	if !u.tune.Enabled(tune.DaemonGC) || os.Getenv("GOGC") != "" {
		return nil
	}
	return gcpace.Pace(daemonShare, daemonHeadroom)
}

// spareProcs raises GOMAXPROCS, once go-fuse has sized its reader pool
// from it, by that pool's size (mount.ReaderPool: GOMAXPROCS clamped to
// 2..16).
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
// mount.Options.Yield answers.)
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
// once, from the value it started with. Nothing changes GOMAXPROCS
// between the mount and this call, so ReaderPool here is the pool's size.
var spareProcs = sync.OnceFunc(func() {
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + mount.ReaderPool())
})
