package fsnode

// The background committer (group commit).
//
// Every change marks its inode dirty: the inode joins the dirty set (the
// queue, bounded by Options.QueueCap). The committer waits CommitInterval
// after the first change, or less when BatchItems inodes are waiting or
// someone waits (Fsync, Sync, Close), then takes a snapshot of every
// dirty inode at once under the tree lock, releases all locks and writes
// the snapshot in one bbolt transaction. Snapshots are numbered; done is
// the number of the last one committed.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

type committer struct {
	f *FS

	mu    sync.Mutex
	space *sync.Cond // signalled when the dirty set shrinks
	dirty map[*inode]struct{}
	snaps uint64 // snapshots taken
	done  uint64 // snapshots committed (or failed: see err)
	want  uint64 // a waiter needs snapshot want
	// doneCh is closed (and replaced) whenever done advances.
	doneCh  chan struct{}
	err     error // first failed commit: the cache is read-only from then on
	closing bool

	kick   chan struct{}
	exited chan struct{}

	evictAt   int // table size that triggers an eviction sweep
	evictBase int // its minimum
	// ingestEvictAt is evictAt during an ingest (Options.IngestEvict).
	ingestEvictAt int
	// dirEvictAt: the directory entries in memory that make an ingest's
	// commit drop those of the directories it has left
	// (evictDirsLocked); dirEvictBase: its minimum (dirEvictEntries).
	dirEvictAt, dirEvictBase int
	// drop lists detached data files (Compact) whose datafiles records the
	// next batch deletes; the files are removed once that batch commits.
	drop []*dataFile
	// unsynced: the last commit skipped its fsyncs (ingest mode).
	unsynced bool
	// unfinished: the index holds the unfinished-ingest mark
	// (CreateForIngest); finishing: a Sink.Finish asked the next batch to
	// delete it.
	unfinished, finishing bool

	commits, batches, items, dataBytes, inlineBytes atomic.Uint64

	// unmapped: when unmapIndex last ran (the committer's goroutine's).
	unmapped time.Time
	// sweep asks the committer for afterCommit's eviction (and
	// unmapIndex) without a commit: set when loads from the index, which
	// commit nothing, have grown the inode table past evictAt or counted
	// sweepLoads (loads, guarded by f.imu; addLoadedLocked).
	sweep atomic.Bool
	loads int
}

func (c *committer) init(f *FS) {
	c.f = f
	c.space = sync.NewCond(&c.mu)
	c.dirty = make(map[*inode]struct{})
	c.doneCh = make(chan struct{})
	c.kick = make(chan struct{}, 1)
	c.exited = make(chan struct{})
	c.evictBase = max(f.opt.QueueCap, evictInodes)
	c.evictAt = c.evictBase
	c.ingestEvictAt = f.opt.QueueCap
	c.dirEvictBase = dirEvictEntries
	c.dirEvictAt = c.dirEvictBase
}

// bulkInterval is the group-commit window during an ingest.
const bulkInterval = 100 * time.Millisecond

func (c *committer) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// markDirtyLocked queues in for the next commit, a change a Watch
// records; in.mu is held.
func (f *FS) markDirtyLocked(in *inode) {
	if w := f.watch.Load(); w != nil {
		w.note(in.ino)
	}
	f.queueLocked(in)
}

// queueLocked queues in for the next commit without telling a Watch: for
// what changes no file's meaning (a directory's deferred files made,
// vdir.go). in.mu is held.
func (f *FS) queueLocked(in *inode) {
	f.changes.Add(1)
	if in.dirty {
		return
	}
	in.dirty = true
	c := &f.c
	c.mu.Lock()
	c.dirty[in] = struct{}{}
	n := len(c.dirty)
	c.mu.Unlock()
	if n == 1 || n >= f.opt.BatchItems {
		c.poke()
	}
}

// admit blocks while the queue is full (back-pressure). Callers hold no
// lock: the committer needs them to drain the queue.
func (c *committer) admit(ctx context.Context) error {
	if c.f.closed.Load() {
		return errClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.dirty) >= c.f.opt.QueueCap && c.err == nil && !c.closing {
		c.poke()
		c.space.Wait()
	}
	if c.err != nil {
		return fmt.Errorf("fsnode: an earlier commit failed: %w: %w", c.err, syscall.EIO)
	}
	return nil
}

func (c *committer) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return fmt.Errorf("fsnode: an earlier commit failed: %w: %w", c.err, syscall.EIO)
	}
	return nil
}

func (c *committer) addBytes(n uint64) { c.dataBytes.Add(n) }

func (c *committer) stats() Stats {
	c.mu.Lock()
	depth := len(c.dirty)
	c.mu.Unlock()
	return Stats{
		QueueDepth:  depth,
		QueueCap:    c.f.opt.QueueCap,
		Commits:     c.commits.Load(),
		Batches:     c.batches.Load(),
		Items:       c.items.Load(),
		DataBytes:   c.dataBytes.Load(),
		InlineBytes: c.inlineBytes.Load(),
	}
}

// waitFor waits until snapshot target is committed.
func (c *committer) waitFor(ctx context.Context, target uint64) error {
	for {
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return fmt.Errorf("fsnode: commit failed: %w: %w", c.err, syscall.EIO)
		}
		if c.done >= target {
			c.mu.Unlock()
			return nil
		}
		ch := c.doneCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// request asks for a snapshot taken after now and returns its number.
func (c *committer) request() uint64 {
	c.mu.Lock()
	t := c.snaps + 1
	c.want = max(c.want, t)
	c.mu.Unlock()
	c.poke()
	return t
}

// waitInode waits until in's changes so far are committed.
func (c *committer) waitInode(ctx context.Context, in *inode) error {
	in.mu.RLock()
	dirty, last := in.dirty, in.lastSnap
	in.mu.RUnlock()
	c.mu.Lock()
	unsynced := c.unsynced
	c.mu.Unlock()
	// During or after an ingest the last commit may not be durable: ask
	// for one that is.
	if dirty || unsynced || c.f.bulk.Load() > 0 {
		last = c.request()
	}
	return c.waitFor(ctx, last)
}

// Sync commits everything changed so far and waits until it is durable
// (committed, when Options.NoSync).
func (f *FS) Sync(ctx context.Context) error {
	if f.closed.Load() {
		return errClosed
	}
	return f.c.waitFor(ctx, f.c.request())
}

// stop drains the queue and ends the committer.
func (c *committer) stop() error {
	c.mu.Lock()
	c.closing = true
	c.space.Broadcast()
	c.mu.Unlock()
	c.poke()
	<-c.exited
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *committer) run() {
	defer close(c.exited)
	for {
		<-c.kick
		c.mu.Lock()
		bulk := c.f.bulk.Load() > 0
		threshold, window := c.f.opt.BatchItems, c.f.opt.CommitInterval
		if bulk {
			// An ingest: fewer, larger transactions.
			threshold, window = max(c.f.opt.QueueCap/2, 1), bulkInterval
		}
		urgent := c.want > c.snaps || len(c.dirty) >= threshold || c.closing
		// Closing after an unfinished ingest still owes one durable commit.
		idle := len(c.dirty) == 0 && c.want <= c.snaps && !(c.closing && c.unsynced)
		closing := c.closing
		c.mu.Unlock()
		if idle {
			if closing {
				return
			}
			if c.sweep.Swap(false) {
				// Reads alone have grown the table, or mapped the index's
				// pages: evict and unmap as after a commit.
				c.f.imu.Lock()
				over := len(c.f.inodes) > c.evictAt
				c.f.imu.Unlock()
				if over {
					c.f.afterCommit(nil)
				}
				c.unmapIndex()
			}
			continue
		}
		if !urgent {
			// The group-commit window: let more changes join this batch.
			t := time.NewTimer(window)
			select {
			case <-t.C:
			case <-c.kick:
			}
			t.Stop()
		}
		c.commitOnce()
		c.poke() // look again: more may have queued meanwhile
	}
}

// inodeSnap is one inode's state as a batch commits it.
type inodeSnap struct {
	ino       Ino
	d         diskInode
	reclaimed bool
	content   bool // write inline/extents
	inline    []byte
	exts      []extent
	changes   map[string]*dirChange
	// xattrs replace the inode's extended attributes when xattrsSet.
	xattrs    map[string][]byte
	xattrsSet bool
	rdev      uint64 // a device's number, written with content
	vref      []byte // a virtual file's record, written with content
	// vdir: a directory's deferred listing to write; vdirDrop: its
	// listing to delete (vdir.go).
	vdir     []byte
	vdirDrop bool
	// fresh: a new inode, no record of which is in the index yet: the
	// other kinds of contents need no deleting.
	fresh bool
}

func (f *FS) snapshotLocked(in *inode, snap uint64) inodeSnap {
	s := inodeSnap{ino: in.ino, d: in.d, reclaimed: in.reclaimed, fresh: in.fresh}
	in.fresh = false
	if in.contentDirty && !in.reclaimed {
		s.content = true
		if in.vref != nil {
			s.vref = in.vref.Encode()
		} else if in.d.Flags&flagInline != 0 || in.typ() == syscall.S_IFLNK {
			s.inline = slices.Clone(in.inline)
			if s.inline == nil {
				s.inline = []byte{}
			}
		} else if in.typ() == syscall.S_IFREG {
			s.exts = slices.Clone(in.exts)
		}
		s.rdev = in.rdev
	}
	if in.xattrsDirty && !in.reclaimed {
		s.xattrs, s.xattrsSet = maps.Clone(in.xattrs), true
	}
	in.xattrsDirty = false
	if in.dir != nil {
		s.vdir, s.vdirDrop = in.dir.vdirPut, in.dir.vdirDrop
		in.dir.vdirPut, in.dir.vdirDrop = nil, false
		if len(in.dir.changes) > 0 {
			s.changes = in.dir.changes
			in.dir.changes = make(map[string]*dirChange)
		}
	}
	in.dirty = false
	in.contentDirty = false
	in.lastSnap = snap
	return s
}

func (c *committer) commitOnce() {
	f := c.f
	f.tree.Lock()
	c.mu.Lock()
	batch := c.dirty
	c.dirty = make(map[*inode]struct{}, len(batch))
	c.snaps++
	snap := c.snaps
	failed := c.err
	// Durable unless asked otherwise, or during an ingest that nobody
	// waits for (see Sink).
	durable := !f.opt.NoSync && (f.bulk.Load() == 0 || c.want >= snap || c.closing)
	drops := c.drop
	c.drop = nil
	finish := c.unfinished && c.finishing
	c.space.Broadcast()
	c.mu.Unlock()
	recs := make([]inodeSnap, 0, len(batch))
	for in := range batch {
		in.mu.Lock()
		recs = append(recs, f.snapshotLocked(in, snap))
		in.mu.Unlock()
	}
	lengths := f.data.lengths()
	nextIno, nextSeq := f.nextIno.Load(), f.nextSeq.Load()
	f.tree.Unlock()

	err := failed
	// A durable batch must also make earlier non-durable ones durable,
	// even when it has nothing of its own.
	c.mu.Lock()
	unsynced := c.unsynced
	c.mu.Unlock()
	if err == nil && (len(recs) > 0 || len(drops) > 0 || finish || (durable && unsynced)) {
		sortSnaps(recs)
		err = f.writeBatch(recs, drops, lengths, nextIno, nextSeq, durable, finish)
		if err == nil {
			c.mu.Lock()
			c.unsynced = !durable && !f.opt.NoSync
			if finish {
				c.unfinished = false
			}
			c.mu.Unlock()
		}
		if err == nil && len(recs) > 0 {
			c.batches.Add(1)
			c.items.Add(uint64(len(recs)))
		}
	}
	if err == nil {
		if len(drops) > 0 {
			crashPoint("unlisted")
		}
		for _, df := range drops {
			df.f.Close()
			// A failure here is harmless and needs no report: the file is
			// unlisted now, and Open deletes unlisted data files.
			_ = os.Remove(filepath.Join(f.dir, dataFileName(df.id)))
		}
		// Before the waiters hear of the commit: once Sync returns, the
		// inodes it reclaimed are gone from the table too (Preload and
		// lookups then go to the index, which no longer has them).
		c.sweep.Store(false) // afterCommit sweeps now
		f.afterCommit(recs)
		c.unmapIndex()
	}
	c.mu.Lock()
	if err != nil && c.err == nil {
		c.err = err
	}
	c.done = snap
	close(c.doneCh)
	c.doneCh = make(chan struct{})
	c.mu.Unlock()
}

// unmapIndexEvery is how often, at most, the committer takes the index's
// pages out of the process's mapping (Options.UnmapIndex). bbolt reads
// its pages through a shared mapping of the index, and each page it
// touches stays in the daemon's resident set, with the 15 around it
// that the kernel maps on the same fault, until the mapping goes: tar
// -x of 250,000 small files (inline in the index, 645 MB) into a mount
// left 107 MB of it resident, more than the daemon's anonymous memory
// (73 MB). Measured by hand (2026-12-07), that tar -x, the daemon's
// peak RSS: see ARCHITECTURE's tricks table. Once a second was too
// seldom for a walk that stats every file: bbolt searches at 125,000
// loads a second mapped 30-50 MB of the index a second, and the stat
// of the bench's 250,000-file store after its tar -x took the daemon's
// file-backed RSS from 12 to 66 MB (peak RSS 126 MB). At every 100 ms it
// stays at 14-20 MB (peak 89 MB), the stat in 1.9-2.1 s either way.
// Every 100 ms held for a walk in the order the directories were
// written (find's), not for one in name order (Go's filepath.WalkDir,
// ls -R, rsync): that walk visits the directories out of the order of
// their inode numbers, so each READDIRPLUS touches index pages far from
// the last one's, and between two unmappings the file-backed RSS
// reached 50 MB. By hand (2026-12-07, tar -x of the same store, then a
// walk in name order that stats every file, alternated): peak RSS 90-93
// MB at 100 ms, 60 MB at 10 ms, the walk 2.3-2.6 s and 2.2-2.5 s, the
// tar 27.9-30.3 s and 27.0-30.2 s; a fresh mount's cat 51-53 MB either
// way, in 11.9-13.6 s. The unmapping itself is one madvise over the
// index's mapping, mostly unmapped by then.
const unmapIndexEvery = 10 * time.Millisecond

// unmapIndex runs unmapIndexPages after a commit or a sweep that loads
// asked for (addLoadedLocked), at most once every unmapIndexEvery. It
// runs on the committer's goroutine, the only one that touches
// c.unmapped. A failure is not the commit's: the pages stay mapped, as
// without the option.
func (c *committer) unmapIndex() {
	if !c.f.opt.UnmapIndex || time.Since(c.unmapped) < unmapIndexEvery {
		return
	}
	c.unmapped = time.Now()
	_ = c.f.view("unmap index", func(tx *bolt.Tx) error { return unmapIndexPages(c.f.db, tx) })
}

// evictInodes is the least inode table size that makes afterCommit
// evict (evictAt's floor, with QueueCap, since dirty inodes cannot go);
// dirEvictEntries is how many directory entries the cache keeps in
// memory before evictDirsLocked drops those of directories its commits
// have left. The daemon's peak memory then stops growing with what the
// kernel has looked up. Until 2026-12-07 the table's floor was 65,536
// inodes (4*QueueCap), and directories the kernel referred to kept
// their entries. tar -x of 250,000 small files (1.5 KB on average, so
// inline) into an empty mount, by hand, the daemon's peak anonymous
// memory: 296-320 MB before; 279 MB with the directories evicted; 139
// MB with the table's floor at 16,384; 97 MB with both, in 26.7-28.5 s
// each way. At 20,000 files, 77 -> 70-78 MB, 2.1-2.3 s either way.
// dirEvictEntries was 65,536 until a heap profile after the same tar -x
// and a stat of every file (the bench's 180-byte files) found 9.7 MB of
// the 32 MB live heap in directory entries; at 16,384, the daemon's peak
// RSS 72-76 -> 65-67 MB, in the same time (tar 27.3-27.8 s, stat
// 1.9 s), and a fresh mount's cat of every file 70-74 -> 62-64 MB in
// 11.8-13.7 s either way.
const (
	evictInodes     = 1 << 14
	dirEvictEntries = 1 << 14
)

// evictDirsLocked drops the loaded entries of the directories the
// cache's commits have left, once the directories in memory hold more
// than f.c.dirEvictAt entries (dirEvictEntries, or twice what the last
// sweep kept). A directory is left when the batch just committed changed
// none of its entries and nothing since has: its entries are then all
// the index's, and the directory is unloaded as if never read (loadDir
// reads it back when it is next used). A stream, tar -x or hg update
// names files directory by directory, so what it has left it rarely
// comes back to; the entries are some 110 bytes each (the entry, its
// name, its slot in the map and in the readdir order) and were the
// largest part of the heap of a 250,000-file ingest. A kernel reference
// to the directory does not keep its entries: the kernel asks for a
// name or a listing by the directory's inode, and every such request
// loads the entries first (dirForUpdate, rlockDir), as for a directory
// not yet read. A directory an open handle refers to (its listing's
// offsets), one whose own record is queued, and a deferred one (vdir.go)
// stay. f.tree is held for writing (the caller's); afterCommit calls it
// after the batch recs is in the index.
func (f *FS) evictDirsLocked(recs []inodeSnap) {
	f.imu.Lock()
	var dirs []*inode
	for _, in := range f.inodes {
		if in.dir != nil {
			dirs = append(dirs, in)
		}
	}
	f.imu.Unlock()
	total := 0
	for _, in := range dirs {
		total += len(in.dir.order)
	}
	if total <= f.c.dirEvictAt {
		return
	}
	touched := make(map[Ino]bool)
	for i := range recs {
		if recs[i].changes != nil || recs[i].vdir != nil || recs[i].vdirDrop {
			touched[recs[i].ino] = true
		}
	}
	kept := 0
	for _, in := range dirs {
		ds := in.dir
		in.mu.Lock()
		busy := in.dirty || in.handles > 0 || in.reclaimed
		in.mu.Unlock()
		if busy || touched[in.ino] || ds.pending != nil || len(ds.changes) > 0 || ds.vdirPut != nil || ds.vdirDrop {
			kept += len(ds.order)
			continue
		}
		in.dir = nil
	}
	f.c.dirEvictAt = max(f.c.dirEvictBase, 2*kept)
}

// sortSnaps orders recs by inode number, as the index's keys are. A
// record is some 190 bytes, and sorting them where they are moved each
// one about log2(n) times (an ingest commits 20,000 in a batch): the
// numbers are sorted with their places instead, and each record is then
// moved once, along the cycles of that permutation.
func sortSnaps(recs []inodeSnap) {
	type key struct {
		ino Ino
		at  int
	}
	keys := make([]key, len(recs))
	for i := range recs {
		keys[i] = key{recs[i].ino, i}
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Compare(a.ino, b.ino) })
	// keys[j].at is the record that belongs at j; a place filled is
	// marked by pointing at itself.
	for start := range keys {
		if keys[start].at == start {
			continue
		}
		held := recs[start]
		j := start
		for {
			from := keys[j].at
			keys[j].at = j
			if from == start {
				recs[j] = held
				break
			}
			recs[j] = recs[from]
			j = from
		}
	}
}

// writeBatch makes a snapshot durable.
//
// Durability order (the cache's commit protocol; see doc.go):
//  1. The data bytes the records reference are already in the data
//     files: Write pwrites them before they enter the in-memory extents
//     that the snapshot copied.
//  2. Unless NoSync, fsync every data file written since its last sync,
//     and the cache directory if a data file was created.
//  3. One bbolt transaction writes the records, the data files' lengths
//     and the counters. Its Commit (pages, fdatasync, meta page,
//     fdatasync) is the commit point.
//
// A crash before 3 completes leaves the previous commit in force; data
// file bytes past the recorded lengths are garbage that Open cuts off.
//
// A batch that is not durable (NoSync, or an ingest in progress) skips
// both fsyncs; the next durable batch syncs everything written before it.
//
// finish deletes the unfinished-ingest mark in the same transaction.
func (f *FS) writeBatch(recs []inodeSnap, drops []*dataFile, lengths map[uint32]int64, nextIno, nextSeq uint64, durable, finish bool) error {
	if durable {
		if err := f.data.sync(); err != nil {
			return err
		}
	}
	// Only this goroutine (the committer) runs write transactions, so
	// setting db.NoSync per transaction is race-free.
	f.db.NoSync = !durable
	defer func() { f.db.NoSync = f.opt.NoSync }()
	var inlineBytes uint64
	var seqOps []seqOp
	raised, raisedVdir := false, false
	err := f.update("commit", func(tx *bolt.Tx) error {
		raised, raisedVdir = false, false
		inodes := tx.Bucket(bucketInodes)
		inodes.FillPercent = 0.9 // inode numbers mostly ascend
		exts := tx.Bucket(bucketExtents)
		inl := tx.Bucket(bucketInline)
		inl.FillPercent = 0.9
		// A directory's entries are put in name order (writeDirChanges),
		// and a clone's come in name order too: at bbolt's default
		// split (half a page), every page a run of entries left behind
		// stayed half empty. Measured (2026-12-06, the 250,000-file
		// stream bundle cloned --mount with its checkout, then hg status
		// loading every deferred directory, 3 alternated runs on tmpfs):
		// this bucket 60 -> 33 MB and the virtual references' 33 -> 18
		// MB at 49 -> 90% full pages, the index 242-244 -> 192 MB; the
		// -U clone and the first hg status no slower.
		dirents := tx.Bucket(bucketDirents)
		dirents.FillPercent = 0.9
		dirseq := tx.Bucket(bucketDirseq)
		dirseq.FillPercent = 0.9 // cookies ascend
		orphans := tx.Bucket(bucketOrphans)
		for i := range recs {
			r := &recs[i]
			k := inoKey(r.ino)
			// Entry changes first: a removed directory's last entries
			// must go even though the directory goes too.
			if err := writeDirChanges(dirents, dirseq, r.ino, r.changes, &seqOps); err != nil {
				return err
			}
			if r.reclaimed {
				if err := deleteInodeRecords(tx, r.ino, false); err != nil {
					return err
				}
				continue
			}
			if err := inodes.Put(k, encodeInode(&r.d)); err != nil {
				return err
			}
			if r.d.Nlink == 0 {
				if err := orphans.Put(k, []byte{}); err != nil {
					return err
				}
			}
			if r.content {
				// A fresh inode has no other kind of contents to delete
				// (the records of a clone's 20,000 new files, three
				// bbolt seeks fewer each).
				if r.vref != nil || !r.fresh {
					if err := putVirtual(tx, k, r.vref, &raised); err != nil {
						return err
					}
				}
				if r.vref != nil {
					if !r.fresh {
						if err := exts.Delete(k); err != nil {
							return err
						}
						if err := inl.Delete(k); err != nil {
							return err
						}
					}
				} else if r.inline != nil {
					if err := inl.Put(k, r.inline); err != nil {
						return err
					}
					inlineBytes += uint64(len(r.inline))
					if !r.fresh {
						if err := exts.Delete(k); err != nil {
							return err
						}
					}
				} else if r.d.Mode&syscall.S_IFMT == syscall.S_IFREG {
					if err := exts.Put(k, encodeExtents(r.exts)); err != nil {
						return err
					}
					if !r.fresh {
						if err := inl.Delete(k); err != nil {
							return err
						}
					}
				} else if isDevice(r.d.Mode & syscall.S_IFMT) {
					if err := tx.Bucket(bucketRdev).Put(k, u64(r.rdev)); err != nil {
						return err
					}
				}
			}
			if r.xattrsSet {
				if err := putXattrs(tx.Bucket(bucketXattrs), r.ino, r.xattrs); err != nil {
					return err
				}
			}
			if r.vdir != nil || r.vdirDrop {
				if err := putVdir(tx, k, r.vdir, &raisedVdir); err != nil {
					return err
				}
			}
		}
		for _, df := range drops {
			if err := tx.Bucket(bucketDatafiles).Delete(fileKey(df.id)); err != nil {
				return err
			}
		}
		if finish {
			if err := tx.Bucket(bucketMeta).Delete(metaIngest); err != nil {
				return err
			}
		}
		return putCounters(tx, lengths, nextIno, nextSeq)
	})
	if err != nil {
		return fmt.Errorf("fsnode: commit: %w", err)
	}
	if raisedVdir {
		f.virt.version.Store(vdirFormatVersion)
	} else if raised && f.virt.version.Load() < virtualFormatVersion {
		f.virt.version.Store(virtualFormatVersion)
	}
	if !durable && !f.opt.NoSync {
		// An ingest: overlap the writeback with the rest of it.
		f.data.startWriteback(f.indexFile)
	}
	f.c.commits.Add(1)
	f.c.inlineBytes.Add(inlineBytes)
	return nil
}

// seqOp is one change to a directory's dirseq records.
type seqOp struct {
	seq  uint64
	name string // "" deletes
}

// writeDirChanges writes one directory's entry changes: dirents in name
// order, then dirseq in seq order, the order of their keys.
//
// Order does not matter for correctness. In key order bbolt's binary
// search and sorted-slice insert (it splits nodes only at commit) append
// instead of inserting in the middle, and the commit's records are the
// same whatever the map's order. The gain is small: clone --mount of the
// 20,000-file bundle 0.376 -> 0.354 s and 0.394 -> 0.376 s (medians of
// five and seven alternated runs). Most directories of a store are small,
// so the shifting was short; the bbolt copying that perf shows in an
// ingest is the growth of the last leaf's slice (growslice), not this.
func writeDirChanges(dirents, dirseq *bolt.Bucket, dir Ino, changes map[string]*dirChange, ops *[]seqOp) error {
	if len(changes) == 0 {
		return nil
	}
	*ops = (*ops)[:0]
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		ch := changes[name]
		if ch.prevSeq != 0 && (ch.ent == nil || ch.ent.seq != ch.prevSeq) {
			*ops = append(*ops, seqOp{seq: ch.prevSeq})
		}
		dk := direntKey(dir, name)
		if ch.ent == nil {
			if err := dirents.Delete(dk); err != nil {
				return err
			}
			continue
		}
		v := encodeDirent(diskDirent{Child: ch.ent.ino, Seq: ch.ent.seq, Type: ch.ent.typ})
		if err := dirents.Put(dk, v); err != nil {
			return err
		}
		*ops = append(*ops, seqOp{seq: ch.ent.seq, name: name})
	}
	// A seq is never reused, so one seq has at most one op (a delete of
	// the previous seq, or a put of the new one).
	slices.SortFunc(*ops, func(a, b seqOp) int { return cmp.Compare(a.seq, b.seq) })
	for _, op := range *ops {
		k := dirseqKey(dir, op.seq)
		if op.name == "" {
			if err := dirseq.Delete(k); err != nil {
				return err
			}
		} else if err := dirseq.Put(k, []byte(op.name)); err != nil {
			return err
		}
	}
	return nil
}

func putCounters(tx *bolt.Tx, lengths map[uint32]int64, nextIno, nextSeq uint64) error {
	dfs := tx.Bucket(bucketDatafiles)
	for id, n := range lengths {
		if err := dfs.Put(fileKey(id), u64(uint64(n))); err != nil {
			return err
		}
	}
	m := tx.Bucket(bucketMeta)
	if err := m.Put(metaNextIno, u64(nextIno)); err != nil {
		return err
	}
	return m.Put(metaNextSeq, u64(nextSeq))
}

// afterCommit drops reclaimed inodes from the table and, when the table
// has grown large, evicts clean files and symlinks that no handle holds:
// their state is now the index's. One the kernel still references (it
// holds a dentry for every file it has looked up or created, until memory
// pressure makes it send FORGET) leaves its count in f.refs, and gets it
// back when next loaded; one appended to from a chunk of the current
// data file stays, so that its next appends stay contiguous
// (appendToChunk). Without this, every file a process created or looked
// up kept its inode (and a small file's bytes) in the daemon as long as
// the kernel cached its dentry. A real hg clone --stream of the
// 250,000-file bench store into a mount (2026-12-07, by hand): the
// daemon's peak RSS 874 -> 485 MiB, of it anonymous memory 609 -> 216
// MiB; tar -x of the store 394 -> 235 MiB.
//
// "Large" is evictAt: twice what the last sweep left, at least
// max(QueueCap, evictInodes). During an ingest with Options.IngestEvict
// it is QueueCap (or twice what the last sweep left), which is smaller
// where hgfs.queue-size is; it was so against the usual bound of 65,536
// inodes that the table had until 2026-12-07. Measured
// (2026-12-06, the 250,000-file stream bundle on tmpfs, alternated runs
// of one binary): hgfs clone -U --mount peak RSS 231-242 -> 194-214 MB,
// 1.08-1.27 -> 1.07-1.15 s; with its virtual checkout 343-392 -> 312-318
// MB, 1.78-2.07 -> 1.71-1.98 s. The 20,000-file store's clone never
// reaches the usual bound, and is the same within noise (0.13-0.16 s,
// 84-88 MB).
func (f *FS) afterCommit(recs []inodeSnap) {
	f.tree.Lock()
	defer f.tree.Unlock()
	f.evictDirsLocked(recs)
	f.imu.Lock()
	for i := range recs {
		if recs[i].reclaimed {
			delete(f.inodes, recs[i].ino)
		} else if in := f.inodes[recs[i].ino]; in != nil {
			// Its use was the change just committed, which the kernel's
			// caches hold: no second chance for it (a tar -x of 250,000
			// files of 1.5 KB kept 157 MB against 95 MB of anonymous
			// memory at its peak with one). A use after this gives one.
			in.used = false
		}
	}
	evictAt := f.c.evictAt
	if f.opt.IngestEvict && f.bulk.Load() > 0 {
		evictAt = min(evictAt, f.c.ingestEvictAt)
	}
	if len(f.inodes) <= evictAt {
		f.imu.Unlock()
		return
	}
	all := make([]*inode, 0, len(f.inodes))
	spared := 0
	for _, in := range f.inodes {
		if in.used {
			in.used = false // a second chance: gone at the next sweep if unused
			spared++
			continue
		}
		all = append(all, in)
	}
	f.imu.Unlock()
	f.data.mu.RLock()
	cur := f.data.cur
	f.data.mu.RUnlock()
	type evicted struct {
		ino  Ino
		refs uint64
	}
	var evict []evicted
	for _, in := range all {
		in.mu.Lock()
		appending := in.chunk != nil && in.chunk == cur && in.chunkLen > 0
		if !in.dirty && !in.reclaimed && in.handles == 0 && in.pins.Load() == 0 && !in.isDir() && in.d.Nlink > 0 && (in.lookups == 0 || !appending) {
			evict = append(evict, evicted{in.ino, in.lookups})
		}
		in.mu.Unlock()
	}
	f.imu.Lock()
	for _, e := range evict {
		delete(f.inodes, e.ino)
		f.refs.Put(e.ino, e.refs)
	}
	// What cannot go (directories, dirty inodes) may outnumber the
	// bound: back off to twice that, not sweep at every commit. What
	// was spared goes at the next sweep, which comes at least the
	// bound's worth of new inodes later. A read of every file, whose
	// every inode is used between two sweeps, then settles at a sweep
	// every bound's worth, the table between one and two bounds. Had the
	// spared counted as what cannot go, it would have doubled its bound
	// at each sweep; had they been added to the bound, a tar -x (whose
	// dirty inodes are many) kept 1.5x the memory; with a sweep every
	// half bound, a fresh mount's cat of 250,000 files took 12.3-13.4 s
	// against 11.3-11.7, its find ahead of its cat by more than that.
	stuck := max(len(f.inodes)-spared, 0)
	f.c.evictAt = max(f.c.evictBase, 2*stuck, spared+f.c.evictBase)
	f.c.ingestEvictAt = max(f.opt.QueueCap, 2*stuck, spared+f.opt.QueueCap)
	f.imu.Unlock()
}
