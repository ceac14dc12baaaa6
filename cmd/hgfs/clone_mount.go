package main

// hgfs clone --mount: the stream goes straight into a new cache through
// fsnode's sink (not through FUSE: no kernel round trip, no OS file per
// repository file), then the working copy through the same sink
// (worktree.CheckoutSink), then the cache is mounted at DEST like "hgfs
// mount".
//
// While the clone runs nothing is mounted, so nobody can see a partial
// repository; a failed or interrupted clone removes the cache it created
// and leaves DEST as it was. The store and the working copy are one
// ingest: the cache is marked unfinished until both are durable, so a
// clone killed during its checkout leaves a cache that mount refuses,
// never one whose dirstate claims files that are not there.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/internal/gcpace"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/worktree"
)

// mountCloneOptions are the clone options that only mean something with
// --mount (the mount ones are those of "hgfs mount").
var mountCloneOptions = []option{
	{0, "mount", optBool, "", "clone into an hgfs cache and mount it at DEST"},
	{0, "cache", optString, "", "cache directory for --mount (default [hgfs] cache, else $XDG_CACHE_HOME/hgfs/NAME-HASH)"},
	{'f', "foreground", optBool, "", "with --mount: serve the mount in this process"},
	{0, "allow-other", optBool, "", "with --mount: let other users access the mount"},
	{0, "debug-fuse", optBool, "", "with --mount: log every FUSE request and reply"},
	{0, "log", optString, "", "with --mount: file the mount daemon appends its messages to"},
	backendOption,
}

// mountTarget is one --mount clone's cache.
type mountTarget struct {
	cacheDir string
	created  bool // the cache directory did not exist before
	// mountDir is the mountpoint (or its parent) prepareMount made sure
	// exists; createdTop the outermost directory it had to create for
	// it ("" if none), which a failed clone removes again.
	mountDir, createdTop string
	fsys                 *fsnode.FS
	sink                 *fsnode.Sink // the clone's, finished by mountCheckout
	daemon               *daemon      // started early, gated (see prepareMount)
}

// prepareMount creates the cache and the mountpoint directory.
func (cl *cloner) prepareMount() error {
	c := cl.c
	dir := c.opts.String("cache")
	if dir != "" {
		dir = c.abs(dir)
	} else {
		var err error
		if dir, err = defaultCacheDir(c.ui.cfg, cl.defaultURL, cl.destAbs); err != nil {
			return err
		}
	}
	t := &mountTarget{cacheDir: dir}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		t.created = true
	} else if err := streamclone.CheckDest(dir); err != nil {
		return abortf("cache directory '%s' is not empty", dir).withHint("name a new one with --cache")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return abortf("cannot create cache '%s': %v", dir, errorsCause(err))
	}
	copt, err := cacheOptions(c.ui.cfg)
	if err != nil {
		cl.removeCache(t)
		return err
	}
	copt.IngestEvict = c.ui.tune.Enabled(tune.IngestEvict)
	// Marked unfinished until the sink's Finish: a clone killed before
	// then leaves a cache that mount and fsck refuse with a message that
	// says so (see unfinishedClone).
	fsys, err := fsnode.CreateForIngest(dir, copt)
	if err != nil {
		cl.removeCache(t)
		return abortf("cannot create cache '%s': %v", dir, err)
	}
	t.fsys = fsys
	if err := updateCacheMeta(dir, func(m *cacheMeta) { m.Source, m.Created = cl.defaultURL, time.Now() }); err != nil {
		cl.removeCache(t)
		return abortf("cannot create cache '%s': %v", dir, err)
	}
	mp := cl.destAbs
	if !existingMountpoint {
		// WinFsp creates the mountpoint itself (finishMount removes an
		// empty DEST just before mounting); only its parent must exist.
		// DEST is a directory here, never a drive letter: mount a cache
		// on one with "hgfs mount CACHE X:".
		mp = filepath.Dir(cl.destAbs)
	}
	t.mountDir, t.createdTop = mp, streamclone.OutermostMissing(mp)
	if err := os.MkdirAll(mp, 0o755); err != nil {
		cl.removeCache(t)
		return abortf("cannot create mount point '%s': %v", cl.dest, errorsCause(err))
	}
	cl.mount = t
	// The mount daemon starts now and waits at its gate while the clone
	// runs: the new process's start-up (20-40 ms on the bench machine,
	// most of it the dynamic loader and package initialisation) overlaps
	// the ingest instead of following it. If it cannot start now,
	// finishMount starts one the usual way and reports why that fails.
	// Not in a test binary, whose executable is not hgfs (tests that
	// mount in the background run the built binary).
	if !c.opts.Bool("foreground") && !noDaemon && !testing.Testing() {
		if d, err := startDaemon(c, t.cacheDir, cl.destAbs, true); err == nil {
			t.daemon = d
		}
	}
	return nil
}

// removeCache undoes prepareMount after a failure.
func (cl *cloner) removeCache(t *mountTarget) {
	if t.daemon != nil {
		t.daemon.cancel()
		t.daemon = nil
	}
	if t.fsys != nil {
		_ = t.fsys.Close()
		t.fsys = nil
	}
	if t.created {
		_ = os.RemoveAll(t.cacheDir)
	} else if ents, err := os.ReadDir(t.cacheDir); err == nil {
		for _, e := range ents {
			_ = os.RemoveAll(filepath.Join(t.cacheDir, e.Name()))
		}
	}
	// The directories made for the mountpoint, innermost first. Remove
	// only takes empty ones: nothing is mounted there yet, and anything
	// someone else put there meanwhile stays.
	if t.createdTop != "" {
		for d := t.mountDir; os.Remove(d) == nil && d != t.createdTop; d = filepath.Dir(d) {
		}
	}
}

// finishMount closes the filled cache (everything durable) and mounts it.
func (cl *cloner) finishMount(failed error) error {
	t := cl.mount
	if failed != nil {
		cl.removeCache(t)
		return failed
	}
	err := t.fsys.Close()
	t.fsys = nil
	if err != nil {
		cl.removeCache(t)
		return abortf("closing cache %s: %v", t.cacheDir, err)
	}
	c := cl.c
	c.ui.status("mounting %s (cache %s)\n", cl.dest, t.cacheDir)
	c.ui.out.Flush()
	if !existingMountpoint {
		// DEST was checked empty; WinFsp wants to create it.
		if err := os.Remove(cl.destAbs); err != nil && !errors.Is(err, os.ErrNotExist) {
			return abortf("mount point '%s': %v", cl.dest, errorsCause(err)).withHint("WinFsp mounts on a directory it creates; the cache %s is kept, mount it with 'hgfs mount'", t.cacheDir)
		}
	}
	if c.opts.Bool("foreground") || noDaemon {
		return serveMount(cl.ctx, c, t.cacheDir, cl.destAbs, readyNotifier())
	}
	if d := t.daemon; d != nil {
		t.daemon = nil
		d.open()
		return d.wait(cl.ctx, c)
	}
	return daemonize(cl.ctx, c, t.cacheDir, cl.destAbs)
}

// newSink is where a clone's files go: the cache for --mount, else the
// destination directory with its background closer.
func (cl *cloner) newSink() (streamclone.Sink, error) {
	if cl.mount != nil {
		cl.mount.sink = cl.mount.fsys.NewSink(cl.ctx)
		return cl.mount.sink, nil
	}
	dopt, err := dirOptions(cl.c.ui.cfg)
	if err != nil {
		return nil, err
	}
	s, err := streamclone.NewDirSink(cl.destAbs, dopt)
	if err != nil {
		if errors.Is(err, streamclone.ErrDestNotEmpty) {
			return nil, abortf("destination '%s' is not empty", cl.dest)
		}
		return nil, abortf("cannot create destination '%s': %v", cl.dest, errorsCause(err))
	}
	return s, nil
}

// ingestHeadroom is the least heap growth ingestHeap lets a clone into
// a cache allocate between two collections: below heapReserve, so that
// the heap it lets grow stays in the huge pages reserved for it.
// Measured on the 20,000-file store's stream bundle (hgfs clone -U
// --mount, 30 alternated pairs, one binary, HGFS_TUNE=-ingestgc against
// the default): 112.9 -> 93.0 ms median, peak RSS 66 -> 78 MB; the
// clone with its checkout 263 -> 240 ms, 92 -> 103 MB. A floor of 32 MiB
// gave 100 ms and 70 MB, 64 MiB no more than 48 for 84 MB.
const ingestHeadroom = 48 << 20

// ingestShare is the heap growth, in percent of the live heap, that
// ingestHeap lets a clone into a cache allocate beyond ingestHeadroom.
// Only a large ingest's live heap passes the floor: the 20,000-file
// store's never does. Measured (2026-12-06, the 250,000-file stream
// bundle on tmpfs, one binary, 3 alternated pairs each against 100): the
// -U clone's peak RSS 197-214 -> 169-175 MB, 1.52-1.61 -> 1.34-1.53 s;
// with its checkout 301-320 -> 270-284 MB, 1.86-2.12 -> 2.02-2.13 s
// (noise: the clone's own CPU was 2.82-3.17 s either way); 30 kept
// 271-281 MB, no lower. The 20,000-file clone with its checkout:
// 88-90 MB against 89-93, 0.16-0.19 s against 0.14-0.18.
const ingestShare = 50

// ingestHeap paces the garbage collector of a clone into a cache
// (HGFS_TUNE's ingestgc) until the returned function is called, before
// the mount: each collection lets the heap grow by half the live heap
// (ingestShare) but by at least ingestHeadroom. The ingest's live heap, the
// cache's inode table and the committer's backlog, grows to about 24 MB
// on the 20,000-file store, and at GOGC 100 from the runtime's 4 MB
// start it was collected nine times; a larger ingest's live heap passes
// the floor and is collected as before, so peak RSS stays in proportion
// to it. GOGC set in the environment is left alone. A clone into a
// directory does not take this pace: there the same floor gave no time
// (the files' creation is the cost) for 10 MB more peak RSS, and a
// changegroup clone of real history 4% for 17 MB. A stream clone into a
// directory has a tighter one of its own (dirApplyHeap).
func ingestHeap(c *cmdContext) func() { return paceHeap(c, ingestShare, ingestHeadroom) }

// dirApplyShare and dirApplyHeadroom pace a stream clone into a
// directory (dirApplyHeap): each collection lets the heap grow by a
// quarter of the live heap, by at least 2 MiB. That heap is the names
// kept for the fncache (streamclone's nameSet, about 28 bytes a name on
// the bench's store), the copy buffers and, from a server, the
// read-ahead; its garbage is a few small allocations per file, and what
// is live holds no pointers, so a collection costs little. At GOGC 100
// the heap grew by all of the live heap, which set the peak RSS of a
// large clone. Measured (2026-12-06, the stream bundles on tmpfs, one
// binary, 12 alternated triples against HGFS_TUNE=-ingestgc, medians):
//   - 250,000 files: peak RSS 34.0 -> 27.7 MB, 1.64 -> 1.77 s (ranges
//     1.52-1.98 and 1.60-2.18 s), user CPU 0.67 -> 0.74 s; a share of
//     50 gave 29.7 MB and 1.88 s;
//   - 20,000 files: 20.3 -> 20.0 MB, 0.17 s either way. A floor of 4
//     MiB raised it to 22.0 MB: over the runtime's own 4 MB start.
const (
	dirApplyShare    = 25
	dirApplyHeadroom = 2 << 20
)

// dirApplyHeap paces the garbage collector of a stream clone into a
// directory (HGFS_TUNE's ingestgc) until the returned function is
// called, after the apply (a checkout after it sets its own pace,
// checkoutHeap). GOGC set in the environment is left alone.
func dirApplyHeap(c *cmdContext) func() { return paceHeap(c, dirApplyShare, dirApplyHeadroom) }

// paceHeap paces the collector (gcpace.Pace) under HGFS_TUNE's ingestgc
// until the returned function is called, which may be called again;
// GOGC set in the environment is left alone.
func paceHeap(c *cmdContext, share int, floor uint64) func() {
	if !c.ui.tune.Enabled(tune.IngestGC) || os.Getenv("GOGC") != "" {
		return func() {}
	}
	return sync.OnceFunc(gcpace.Pace(share, floor))
}

// unfinishedClone is the abort for a cache a killed "hgfs clone --mount"
// left (fsnode.ErrUnfinished), or nil for any other error.
func unfinishedClone(dir string, err error) error {
	if !errors.Is(err, fsnode.ErrUnfinished) {
		return nil
	}
	return abortf("the cache at %s holds an unfinished clone (interrupted); remove it and clone again", dir)
}

// mountCheckout checks the new clone out into its cache, through the
// sink the stream filled, as cloneCheckout does into a directory (unless
// -U, or checkout is false: a clone bundle's clone checks out after its
// pull, through the mount), then finishes the sink: store and working
// copy become durable in one sync. A manifest hgfs cannot check out
// (refused) leaves the clone complete without a working copy: it is
// still mounted, and the refusal reported after.
func (cl *cloner) mountCheckout(checkout bool) (refused, err error) {
	c, t := cl.c, cl.mount
	if checkout && !c.opts.Bool("noupdate") {
		if refused, err = cl.checkoutSink(); err != nil {
			return nil, err
		}
	}
	if err := t.sink.Finish(); err != nil {
		return nil, abortf("finishing clone: %v", err)
	}
	return refused, nil
}

// ingestSizes says whether the stream into a cache is to learn the
// working files' sizes for a virtual checkout (worktree.Sizes, HGFS_TUNE's
// ingestsizes): a mount clone with a checkout in its cache, unless
// virtual-checkout is off. Measured (2026-12-05, alternated clones
// --mount against -ingestsizes, medians of 15 pairs): the 20,000-file
// stream bundle with its checkout 243 -> 222 ms, peak RSS 102 -> 98 MB
// (no filelog read back); from hg serve 782 -> 730 ms; real history's
// stream bundle unchanged (its tip's files are mostly deltas). Each
// size's text checked against its node too: 243.0 against 269.5 ms off
// (15 alternated triples with the unchecked build, 252.1: no cost seen).
func (cl *cloner) ingestSizes() bool {
	c := cl.c
	if cl.mount == nil || cl.pullSource != "" || c.opts.Bool("noupdate") || !c.ui.tune.Enabled(tune.IngestSizes) {
		return false
	}
	on, err := virtualCheckout(c)
	return err == nil && on // an error is reported by the checkout
}

// checkoutSink is mountCheckout's checkout.
func (cl *cloner) checkoutSink() (refused, err error) {
	c, t := cl.c, cl.mount
	hg, err := fs.Sub(t.fsys.FS(), ".hg")
	if err != nil {
		return nil, abortf("%v", err)
	}
	r, err := repo.OpenFS(hg)
	if err != nil {
		return nil, abortf("%v", err)
	}
	defer r.Close()
	rev, book, status, err := cloneTarget(r, cl.checkoutRev())
	if err != nil {
		return nil, err
	}
	c.ui.status("%s", status)
	bar := newProgress(c.ui, "updating")
	opt, err := checkoutOptions(c, bar)
	if err != nil {
		return nil, err
	}
	if opt.Virtual, err = virtualCheckout(c); err != nil {
		return nil, err
	}
	opt.Sizes = cl.sizes
	var dst worktree.Sink = virtualSink{t.sink}
	if c.ui.tune.Enabled(tune.DeferDirs) {
		dst = deferSink{virtualSink{t.sink}}
	}
	res, err := worktree.CheckoutSink(cl.ctx, r, rev, dst, opt)
	bar.done()
	var ue *worktree.UnsupportedError
	if errors.As(err, &ue) {
		return abortf("%s", ue.Error()).withHint("the clone is complete, without a working copy: run 'hg update' in %s", cl.dest).wrap(err), nil
	}
	if err != nil {
		return nil, checkoutError(cl.ctx, c, err, opt)
	}
	c.ui.status("%d files updated, 0 files merged, %d files removed, 0 files unresolved\n", res.Updated, res.Removed)
	c.ui.debugf("%d working files deferred to their directories' first look\n", res.Deferred)
	if book != "" {
		w, err := t.sink.Create(".hg/bookmarks.current", int64(len(book)))
		if err == nil {
			_, err = w.Write([]byte(book))
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return nil, abortf("%v", err)
		}
	}
	return nil, nil
}
