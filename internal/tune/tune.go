// Package tune is hgfs's one switch for its performance tricks: the
// environment variable HGFS_TUNE, parsed once, in GODEBUG style.
//
// Every trick but schedbatch is on by default (Default, OnByDefault).
// HGFS_TUNE lists the ones to change, separated by commas: "-name" (or
// "name=0") turns a trick off, "name" (or "+name", "name=1") turns it
// on; a later entry overrides an earlier one. For example
//
//	HGFS_TUNE=-uring,-yield hgfs mount CACHE MOUNTPOINT
//
// mounts with neither io_uring nor yielding. The tricks change only how
// fast hgfs is, never what it does: each one's fallback is the plain
// path, and the tests run both.
//
// The tricks (Trick, by their names in HGFS_TUNE):
//
//   - uring: io_uring batches of statx, openat, read and close for the
//     store walk, stream clone serving and the views' prefetcher
//     (internal/uring); off, they make one system call each.
//   - yield: a mount's FUSE readers pass one request in 13 through the
//     Go scheduler (mount.Options.Yield); off, they never yield.
//   - schedbatch: the mount daemon moves its threads to SCHED_BATCH at
//     start-up (cmd/hgfs); off, they stay in SCHED_OTHER. Off by
//     default (HGFS_TUNE=schedbatch turns it on): on a busy machine
//     every wake-up of a SCHED_BATCH thread waits for the running task's
//     slice, and requests whose answer takes more than one wake-up in
//     the daemon pay it each time: under CPU contention an fsync
//     (msync(MS_SYNC) of a mapping) took about twice as long as with
//     SCHED_OTHER (cmd/hgfs/tune_linux.go). What it was for, close(2)
//     not waiting for an asynchronous RELEASE, is gone since the mount
//     declines OPEN (no RELEASE is sent).
//   - procs: the mount daemon raises GOMAXPROCS by go-fuse's reader
//     count once it is mounted (cmd/hgfs); off, GOMAXPROCS stays as the
//     runtime set it.
//   - walkfork: the store walk stats or reads the fncache entries on two
//     goroutines (store.Store.Walkers, set by hgfs serve, clone and
//     bundle); off, on one.
//   - silencestderr: --profile's CPU profile points file descriptor 2 at
//     /dev/null while it sets its rate, to hide the runtime's warning
//     (profiling.Options.SilenceStderr); off, the warning is printed.
//   - applyfork: unbundle, pull and clone from a changegroup apply the
//     file groups on GOMAXPROCS worker goroutines
//     (exchange.Options.FileWorkers); off, on the session's goroutine as
//     they are read.
//   - verifyahead: hgfs verify reads the manifests' deltas on a goroutine
//     of their own while it checks the changelog, and rebuilds and hashes
//     the filelogs' revisions on GOMAXPROCS goroutines meanwhile
//     (verify.Options.Ahead); off, one after the other, as hg orders the
//     work. Findings and their order are the same. On the
//     30,000-changeset generated history the changelog and manifest
//     passes, one after the other on one goroutine, were the critical
//     path (about 2.3 s and 1.5 s of 4.5 s, the filelogs done during
//     them); on the real-history corpus the filelogs are most of the
//     work, and reading them ahead keeps the second CPU busy from the
//     start.
//   - verifygc: hgfs verify paces the garbage collector
//     (internal/gcpace): each collection lets the heap grow by 30% of the
//     live heap (GOGC=30), but by at least 4 MiB, unless GOGC is set;
//     off, at the runtime's default (100). verify allocates a rebuilt
//     text per revision and drops it at once: on the 30,000-changeset
//     history its peak RSS was about 74 MB at the default and 55-60 MB
//     at GOGC=50, against hg verify's 54 MB; at 30 it is 47-50 MB. A
//     plain GOGC=30 collected every 1.2 MB while the live heap was small
//     (the runtime's smallest target scaled by 0.3): on the real-history
//     corpus verify took 0.36-0.41 s that way and 0.22-0.26 s with the
//     4 MiB floor, for peak RSS 26-28 -> 32-35 MB (hg verify's: 36);
//     the 30,000-changeset history 1.24-1.36 -> 1.10-1.27 s at 45-48 MB,
//     the 20,000-file store 0.40-0.45 -> 0.33-0.36 s at 40-41 MB. An
//     8 MiB floor was faster on real history (0.20-0.23 s) but took
//     38-42 MB, over hg's.
//   - bufpool: rebuilding a file's text recycles its buffers: one
//     decompression buffer per delta chain and the hunk lists folding
//     it (revlog.SetPooling), and a checkout's read buffers for filelog
//     indexes and working files (worktree.SetPooling); off, each is
//     allocated afresh. Measured: BenchmarkReconstructTip (20 tips of
//     30-delta chains) 2,061 -> 673 allocations per op. Also hgfs
//     verify's walk of each filelog (revlog.EachRevision) builds every
//     text in a buffer of a dropped one: on the 30,000-changeset
//     history verify allocated 324 MB instead of 848 MB and took
//     0.84-0.89 s instead of 1.30-1.52 s (alternated runs; real history
//     0.18-0.25 against 0.24-0.28 s); and a finished walk hands its
//     buffers to the next (with the changelog walked too: 247 -> 127
//     MB on that history, 851 walks, 0.54 -> 0.495 s median). And an
//     update in a mount's daemon reuses the last one's dirstate
//     buffers, entries and inode table (package mount): on the
//     20,000-file working copy the daemon's CPU per update went from
//     6.2-7.9 to 4.9-5.8 ms (two runs of 120 updates) and hgfs update
//     0 -> tip from 10.8 to 10.1 ms (medians of 60 alternated pairs,
//     one binary, two mounts, one with HGFS_TUNE=-bufpool).
//   - checkoutgc: a checkout whose newest manifest is smaller than
//     256 KiB runs with GOGC at 400, not 100 (cmd/hgfs checkout.go):
//     on the real-history store `hgfs update tip` went from 6-7 garbage
//     collections to 2 for 3-5 MB more peak RSS; a larger one keeps
//     GOGC, so that peak RSS stays flat (the 20,000-file store's
//     checkout grew from 36 to 56 MB with GOGC 400). Off, a checkout
//     keeps GOGC.
//   - readahead: a clone's stream from an HTTP server into a directory
//     is read on a goroutine of its own, up to 32 MiB ahead of the applier
//     (internal/readahead); off, the applier reads the response itself
//     and the server waits whenever the applier waits for the disk.
//     On the 20,000-file store the clone took 1.32 s against 1.71 s
//     (hg serve's send time about 1 s), for 5.7 MiB more peak RSS. A
//     clone into a cache reads the response itself (cmd/hgfs
//     cloner.readAhead says why).
//   - readaheadgrow: that read-ahead starts at 8 MiB and doubles, up to
//     32 MiB, each time its buffers were all full and then all drained
//     (readahead.NewGrowing); off, its bound is 32 MiB from the start.
//     A clone whose applier is slower than the server throughout (the
//     250,000-file store's) keeps the buffers full, where more of them
//     hold more of the stream and send nothing sooner: its peak RSS
//     went from 70 to 40 MB, no slower. cmd/hgfs readAheadStart has
//     the figures.
//   - fuseuring: a mount's requests come over io_uring where the kernel
//     offers FUSE over io_uring (Linux 6.14+ with the fuse module's
//     enable_uring set; mount.Options.URing, internal/fuseuring): one
//     io_uring_enter per request, answered on a thread pinned to the
//     CPU its caller runs on, where /dev/fuse takes a read(2) and a
//     writev(2) on any reader thread; off, or where the kernel does not
//     offer it, /dev/fuse alone. hg update of the 20,000-file working
//     copy into a cache mount took 5.7-6.1 s against 7.6 s, the
//     daemon's CPU 3.0 against 4.5 s (two alternated pairs); a real hg
//     clone --stream into a mount 9.8 against 13.1 s; a sequential read
//     of a 200 MiB file was slower, 130-150 against 90-120 ms
//     (docs/ARCHITECTURE.md has the whole table).
//   - samesession: the mount and serve daemons start in a process group
//     of their own within the caller's session (mount.DaemonAttr); off,
//     in a session of their own. Where the kernel schedules by session
//     (autogroups), a daemon in the caller's session answers the
//     programs started from the same shell with cheaper wake-ups: tar -x
//     of the 250,000-file store into a mount took 31-36 s against 56-57
//     s (mount.DaemonAttr has the figures).
//   - daemonupdate: hgfs update on a cache mount with a virtual working
//     copy asks the mount's daemon to do the update in its cache
//     (package mount's UpdateXattr), which has both manifests parsed
//     and knows which files are virtual; off, the update goes through
//     the mount's files (a stat of every tracked file, both manifests
//     and the dirstate read and written through the kernel). On the
//     20,000-file store, hgfs update 0 -> tip (61 files) took 30-39 ms
//     against 81-121 ms through the files (alternated runs, with
//     another job on the machine), and at tip 24-41 ms.
//   - ingestgc: a clone into a cache (hgfs clone --mount) lets its heap
//     grow by at least 48 MiB between garbage collections
//     (internal/gcpace; cmd/hgfs ingestHeap), by half the live heap
//     beyond; off, GOGC as set. On the 20,000-file store's stream
//     bundle the -U clone took 93 ms against 113 (medians of 30
//     alternated pairs), for 12 MB more peak RSS (78 against 66 MB).
//     A stream clone into a directory lets its heap grow by a quarter
//     of the live heap, by at least 2 MiB (cmd/hgfs dirApplyHeap): at
//     250,000 files its peak RSS was 27.7 against 34.0 MB.
//   - ingestsizes: a clone into a cache with a virtual checkout learns
//     its working files' sizes from the stream as it passes
//     (streamclone.Options.Whole, worktree.Sizes: each small inline
//     filelog's last revision, when a snapshot, decompressed and
//     checked against its node on GOMAXPROCS goroutines) instead of
//     opening every filelog back from the new store at checkout; off,
//     the checkout reads each file's filelog. On the 20,000-file store the checkout's sizing went from
//     53-79 ms to 2-3 ms; the clone with its checkout from the stream
//     bundle 243 -> 222 ms (medians of 15 alternated pairs), from hg
//     serve 782 -> 730 ms.
//   - quickack: the HTTP client's connections set TCP_QUICKACK after
//     each request (wireproto.Options.QuickAck, Linux), so hg serve's
//     response body, which Nagle's algorithm holds until its headers
//     are acknowledged, is not held by the client's delayed ACK; off,
//     every request after a connection's first waits about 40 ms (hg
//     7.2's serve the same). From hg 6.3 serve on loopback
//     (2026-12-06, medians of alternated runs): a stream clone of real
//     history (the corpus) 115.1 -> 39.8 ms, of the 20,000-file store
//     572 -> 505 ms; a pull with nothing to pull 103.6 -> 17.2 ms.
//   - deferdirs: a clone's virtual checkout records each directory's
//     files as one deferred listing that the mount makes into files
//     when the directory is first looked in (fsnode's vdir.go); off,
//     every file's inode, reference and entry are made and committed
//     by the clone. The 20,000-file stream bundle cloned --mount with
//     its checkout (2026-12-06, medians of 8 alternated runs): 245 ->
//     169 ms, against 105 for -U; the first hg status after it pays
//     the loads, 331 -> 361 ms (6 pairs), the next ones nothing.
//   - ingestevict: a clone into a cache keeps at most about QueueCap
//     clean inodes in memory while it ingests (fsnode.Options.IngestEvict);
//     off, up to the usual bound (at least max(QueueCap, 16,384) since
//     2026-12-07, so it differs only where hgfs.queue-size is set
//     lower). Against the usual bound of the time, 65,536: the
//     250,000-file stream bundle cloned -U --mount (2026-12-06,
//     alternated runs): peak RSS 231-242 -> 194-214 MB, no slower; with
//     its checkout 343-392 -> 312-318 MB. (Dropping the entries of the
//     directories commits have left, measured with it then, is now the
//     cache's at any time: fsnode's evictDirsLocked.)
//
// This package only parses. The hgfs command reports a malformed or
// unknown entry as a warning at start-up and applies each switch: the
// process-wide ones itself (GOMAXPROCS, scheduling policy, file
// descriptor 2, io_uring), the others as options of the libraries it
// calls (mount, store, profiling), which do not read HGFS_TUNE.
package tune

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// EnvVar is the environment variable this package reads.
const EnvVar = "HGFS_TUNE"

// Trick is one performance trick that HGFS_TUNE can switch off.
type Trick uint8

// The tricks, in the order Tricks lists them.
const (
	Uring Trick = iota
	Yield
	SchedBatch
	Procs
	WalkFork
	SilenceStderr
	ApplyFork
	VerifyAhead
	VerifyGC
	BufPool
	CheckoutGC
	ReadAhead
	DaemonUpdate
	IngestGC
	IngestSizes
	QuickAck
	DeferDirs
	IngestEvict
	ReadAheadGrow
	FuseURing
	SameSession
	UnmapIndex
	DaemonGC
	numTricks
)

var names = [numTricks]string{
	Uring:         "uring",
	Yield:         "yield",
	SchedBatch:    "schedbatch",
	Procs:         "procs",
	WalkFork:      "walkfork",
	SilenceStderr: "silencestderr",
	ApplyFork:     "applyfork",
	VerifyAhead:   "verifyahead",
	VerifyGC:      "verifygc",
	BufPool:       "bufpool",
	CheckoutGC:    "checkoutgc",
	ReadAhead:     "readahead",
	DaemonUpdate:  "daemonupdate",
	IngestGC:      "ingestgc",
	IngestSizes:   "ingestsizes",
	QuickAck:      "quickack",
	DeferDirs:     "deferdirs",
	IngestEvict:   "ingestevict",
	ReadAheadGrow: "readaheadgrow",
	FuseURing:     "fuseuring",
	SameSession:   "samesession",
	UnmapIndex:    "unmapindex",
	DaemonGC:      "daemongc",
}

// String is the trick's name in HGFS_TUNE.
func (t Trick) String() string {
	if t < numTricks {
		return names[t]
	}
	return fmt.Sprintf("Trick(%d)", uint8(t))
}

// Tricks returns every trick, in a fixed order.
func Tricks() []Trick {
	out := make([]Trick, numTricks)
	for i := range out {
		out[i] = Trick(i)
	}
	return out
}

// Names returns every trick's name, in Tricks' order.
func Names() []string { return names[:] }

// Lookup returns the trick called name.
func Lookup(name string) (Trick, bool) {
	for i, n := range names {
		if n == name {
			return Trick(i), true
		}
	}
	return 0, false
}

// offByDefault are the tricks HGFS_TUNE has to turn on.
var offByDefault = [numTricks]bool{SchedBatch: true}

// OnByDefault reports whether trick t is on when HGFS_TUNE does not
// name it.
func (t Trick) OnByDefault() bool { return t < numTricks && !offByDefault[t] }

// Default returns the settings of an empty HGFS_TUNE.
func Default() Settings {
	var s Settings
	for _, t := range Tricks() {
		s = s.With(t, t.OnByDefault())
	}
	return s
}

// Settings says which tricks are on. The zero Settings has every trick
// on (Default has those off by default off).
type Settings struct {
	off uint32 // bit t set: trick t is off
}

// Enabled reports whether trick t is on.
func (s Settings) Enabled(t Trick) bool { return s.off&(1<<t) == 0 }

// With returns s with trick t switched on or off.
func (s Settings) With(t Trick, on bool) Settings {
	if on {
		s.off &^= 1 << t
	} else {
		s.off |= 1 << t
	}
	return s
}

// String is s as HGFS_TUNE would spell it: the tricks that differ from
// Default, in Tricks' order, each with a minus (off) or a plus (on); ""
// for Default.
func (s Settings) String() string {
	var parts []string
	for _, t := range Tricks() {
		switch on := s.Enabled(t); {
		case on == t.OnByDefault():
		case on:
			parts = append(parts, "+"+t.String())
		default:
			parts = append(parts, "-"+t.String())
		}
	}
	return strings.Join(parts, ",")
}

// Parse reads an HGFS_TUNE value, starting from Default. Empty entries
// are ignored. Every well-formed entry is applied; the error, if any,
// names each entry that is not (an unknown trick, a value other than 0
// or 1), and the Settings returned are still those of the valid
// entries.
func Parse(value string) (Settings, error) {
	s := Default()
	var bad []string
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, on := entry, true
		switch {
		case strings.HasPrefix(name, "-"):
			name, on = name[1:], false
		case strings.HasPrefix(name, "+"):
			name = name[1:]
		}
		if n, v, ok := strings.Cut(name, "="); ok && name == entry {
			switch v {
			case "0":
				on = false
			case "1":
				on = true
			default:
				bad = append(bad, fmt.Sprintf("%q (the value must be 0 or 1)", entry))
				continue
			}
			name = n
		}
		t, ok := Lookup(name)
		if !ok {
			bad = append(bad, fmt.Sprintf("%q (unknown trick)", entry))
			continue
		}
		s = s.With(t, on)
	}
	if len(bad) > 0 {
		return s, fmt.Errorf("%s: ignoring %s; the tricks are %s", EnvVar, strings.Join(bad, ", "), strings.Join(names[:], ", "))
	}
	return s, nil
}

var fromEnv = sync.OnceValues(func() (Settings, error) { return Parse(os.Getenv(EnvVar)) })

// FromEnv returns HGFS_TUNE's settings, parsed at the first call; the
// error says what was ignored (see Parse).
func FromEnv() (Settings, error) { return fromEnv() }
