package fsnode

// Compaction gives back the space of dead data file bytes (overwritten,
// truncated or deleted data, and reserved space never used).
//
// # Accounting
//
// Each data file counts its live bytes (dataFile.live): the bytes that
// inodes' extents refer to, in memory, whether committed or not. Open sets
// the counts from the index's extents (countLive); from then on every
// change of an inode's extents adjusts them: Write adds the new bytes and
// releases the range it replaces, truncation and reclaiming release what
// they drop, a spill or a sink file adds, a relocation moves. A file's dead
// bytes are its length minus its live bytes. So deciding needs no scan of
// the index: Stats and the scheduler read the counters.
//
// Releases (counts going down) are made after the inode is marked dirty,
// in the same critical section of inode.mu. A non-current data file seen
// with no live bytes is therefore referenced by no inode in memory, and
// every inode that dropped a reference to it is queued for a batch no
// later than the one that records the file's removal: that batch commits
// both at once.
//
// # A run (compactRun), crash-safe at every step
//
//  1. commit everything (Sync); plan from the counters: the victims and
//     whether to start a new current data file first (rotate), so that a
//     mostly dead current file can be compacted too;
//  2. find the inodes that refer to the victims (one scan of the extents
//     in the index) and copy their live extents into the current data file,
//     one piece (at most compactPiece bytes) at a time: the piece is read
//     and appended without any lock, then installed under the inode's lock
//     if the inode still maps that range to the same place (otherwise the
//     copy is dead and the user's newer bytes win). A background run waits
//     for its token bucket before each piece;
//  3. Sync: the copies are fsynced and the new extents committed;
//  4. detach each victim that has no live bytes left (under the tree lock,
//     so no batch can record it again): the next batch deletes its record
//     from the datafiles table, then the file;
//  5. Sync, which makes that batch happen now.
//
// A crash before 3 leaves the old extents in force (copies are garbage
// past the committed length, cut at Open); between 3 and 4 the old file is
// listed but unreferenced, and the next run drops it without copying;
// between the commit of 4 and the deletion it is unlisted, and Open
// deletes it. A victim with no live bytes at all is simply dropped.
//
// # When (the background compactor, Options.AutoCompact)
//
// Compaction is due when the dead bytes exceed CompactGarbage times the
// live bytes plus CompactSlack. The compactor looks every tick (a quarter
// of CompactIdle, between 5ms and 1s), and starts a run once nothing has
// changed for CompactIdle: the victims are taken most dead first until
// what remains dead is at most half the threshold (so runs are not
// back to back). A fully dead non-current file is dropped whenever the
// cache is idle, due or not: it costs no copy. Pieces are copied at
// CompactRate bytes per second at most.
//
// When a write fails with ENOSPC, a run without rate bound (every file at
// least a quarter dead, the current one too) makes room and the write is
// retried once.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CompactStats says what a Compact did.
type CompactStats struct {
	FilesRemoved   int
	BytesCopied    int64
	BytesReclaimed int64
}

type compactCounters struct {
	runs, copied, reclaimed atomic.Uint64
}

// compactPiece is the most a relocation copies at a time (and holds in
// memory); the inode's lock is held only to install it.
const compactPiece = 1 << 20

// policy says which data files a run compacts.
type policy struct {
	// minDead: only files whose dead bytes are at least this fraction of
	// their length.
	minDead float64
	// goal: take victims (most dead first) only until the dead bytes left
	// are at most goal; -1 takes every file that qualifies.
	goal int64
	// rotate: the current file may be a victim too (a new current file is
	// started first) when at least rotateDead of it is dead.
	rotate     bool
	rotateDead float64
	// maxCopy: give up (do nothing but drop fully dead files) when the
	// plan would copy more live bytes than this; -1 is no bound.
	maxCopy int64
}

// Compact compacts every data file but the current one whose live bytes
// are less than half of it, without rate bound.
func (f *FS) Compact(ctx context.Context) (CompactStats, error) {
	return f.compactRun(ctx, policy{minDead: 0.5, goal: -1, maxCopy: -1}, nil)
}

// CompactAll compacts every data file at least a quarter dead, the
// current one too (a new one is started), without rate bound: what
// `hgfs cache gc` and ENOSPC do.
func (f *FS) CompactAll(ctx context.Context) (CompactStats, error) {
	return f.compactRun(ctx, policy{minDead: 0.25, goal: -1, rotate: true, rotateDead: 0.25, maxCopy: -1}, nil)
}

// CompactIfDue runs the background compactor's policy once, without rate
// bound, if compaction is due and would copy at most maxCopy live bytes
// (-1: any); fully dead data files are dropped in any case. The mount
// calls it at unmount, bounded by ctx.
func (f *FS) CompactIfDue(ctx context.Context, maxCopy int64) (CompactStats, error) {
	pol := f.duePolicy()
	pol.maxCopy = maxCopy
	return f.compactRun(ctx, pol, nil)
}

// duePolicy is the background compactor's policy (see above).
func (f *FS) duePolicy() policy {
	live, _ := f.data.space()
	threshold := int64(f.opt.CompactGarbage*float64(live)) + f.opt.CompactSlack
	return policy{goal: threshold / 2, rotate: true, rotateDead: 0.5, maxCopy: -1}
}

// due reports whether the dead bytes exceed the threshold.
func (f *FS) due() bool {
	live, dead := f.data.space()
	return dead > int64(f.opt.CompactGarbage*float64(live))+f.opt.CompactSlack
}

// fileSpace is one data file's figures at planning time.
type fileSpace struct {
	id         uint32
	size, live int64
	cur        bool
}

func (s fileSpace) dead() int64 { return s.size - s.live }

// plan picks the victims and says whether the current file is one.
func (f *FS) plan(pol policy, due bool) (victims []fileSpace, rotate bool) {
	d := f.data
	d.mu.RLock()
	var all []fileSpace
	var dead int64
	for id, df := range d.files {
		if df.pending.Load() > 0 {
			continue
		}
		s := fileSpace{id: id, size: df.size, live: df.live.Load(), cur: df == d.cur}
		dead += s.dead()
		all = append(all, s)
	}
	d.mu.RUnlock()
	// Most dead first (by fraction), then by id for a stable order.
	slices.SortFunc(all, func(a, b fileSpace) int {
		fa, fb := float64(a.dead())/float64(max(a.size, 1)), float64(b.dead())/float64(max(b.size, 1))
		switch {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return int(a.id) - int(b.id)
	})
	var copyBytes int64
	for _, s := range all {
		if s.size == 0 || s.dead() <= 0 {
			continue
		}
		if !s.cur && s.live == 0 {
			victims = append(victims, s) // free: no copy
			dead -= s.dead()
			continue
		}
		if !due || (pol.goal >= 0 && dead <= pol.goal) {
			continue
		}
		frac := float64(s.dead()) / float64(s.size)
		if s.cur && (!pol.rotate || frac < pol.rotateDead) || !s.cur && frac < pol.minDead {
			continue
		}
		victims = append(victims, s)
		copyBytes += s.live
		dead -= s.dead()
		if s.cur {
			rotate = true
		}
	}
	if pol.maxCopy >= 0 && copyBytes > pol.maxCopy {
		// Too costly now: only the free drops.
		victims = slices.DeleteFunc(victims, func(s fileSpace) bool { return s.live > 0 || s.cur })
		rotate = false
	}
	return victims, rotate
}

// compactRun is one run (see above). tb, when not nil, bounds the copy
// rate.
func (f *FS) compactRun(ctx context.Context, pol policy, tb *tokenBucket) (CompactStats, error) {
	var st CompactStats
	if f.closed.Load() {
		return st, errClosed
	}
	f.compactMu.Lock()
	defer f.compactMu.Unlock()
	if err := f.Sync(ctx); err != nil {
		return st, err
	}
	due := pol.goal < 0 || f.due()
	victims, rotate := f.plan(pol, due)
	if len(victims) == 0 {
		return st, nil
	}
	if rotate {
		for _, v := range victims {
			if v.cur {
				if err := f.data.rotate(v.id); err != nil {
					return st, err
				}
			}
		}
	}
	var copyFrom []uint32
	for _, v := range victims {
		if v.live > 0 {
			copyFrom = append(copyFrom, v.id)
		}
	}
	if len(copyFrom) > 0 {
		refs, err := f.referrers(copyFrom)
		if err != nil {
			return st, err
		}
		for _, id := range copyFrom {
			for _, ino := range refs[id] {
				n, err := f.relocate(ctx, ino, id, tb)
				st.BytesCopied += n
				f.cstats.copied.Add(uint64(n))
				if err != nil {
					return st, err
				}
			}
		}
		crashPoint("copied")
		if err := f.Sync(ctx); err != nil {
			return st, err
		}
		crashPoint("committed")
	}
	// Detach the victims left with no live bytes under the tree lock, so
	// that every later batch omits them from the datafiles table and the
	// next one deletes them.
	f.tree.Lock()
	for _, v := range victims {
		df := f.data.get(v.id)
		if df == nil || df.live.Load() != 0 || df.pending.Load() > 0 || f.referenced(v.id) {
			continue
		}
		f.data.mu.Lock()
		if df == f.data.cur {
			f.data.mu.Unlock()
			continue
		}
		delete(f.data.files, v.id)
		size := df.size
		f.data.mu.Unlock()
		f.c.mu.Lock()
		f.c.drop = append(f.c.drop, df)
		f.c.mu.Unlock()
		st.FilesRemoved++
		st.BytesReclaimed += size
	}
	f.tree.Unlock()
	if st.FilesRemoved > 0 {
		crashPoint("detached")
		if err := f.Sync(ctx); err != nil {
			return st, err
		}
	}
	if st.FilesRemoved > 0 || st.BytesCopied > 0 {
		f.cstats.runs.Add(1)
		f.cstats.reclaimed.Add(uint64(st.BytesReclaimed))
	}
	return st, nil
}

// compactCrashHook, set by the crash tests only, is called at each step
// of a run that a crash could follow.
var compactCrashHook func(point string)

func crashPoint(point string) {
	if compactCrashHook != nil {
		compactCrashHook(point)
	}
}

// referrers lists, per data file in ids, the inodes whose committed
// extents refer to it (everything is committed when it is called; a
// reference made since is to the current file, or a sink's reservation,
// and keeps the file's live count above zero, so it is not dropped).
func (f *FS) referrers(ids []uint32) (map[uint32][]Ino, error) {
	want := map[uint32]bool{}
	for _, id := range ids {
		want[id] = true
	}
	refs := map[uint32][]Ino{}
	err := f.view("compact", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExtents).ForEach(func(k, v []byte) error {
			ino, err := decodeInoKey(k)
			if err != nil {
				return err
			}
			exts, err := decodeExtents(v)
			if err != nil {
				return fmt.Errorf("inode %d: %w", ino, err)
			}
			var last uint32
			for _, e := range exts {
				if want[e.File] && e.File != last {
					if n := len(refs[e.File]); n == 0 || refs[e.File][n-1] != ino {
						refs[e.File] = append(refs[e.File], ino)
					}
				}
				last = e.File
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("fsnode: compact: %w", err)
	}
	return refs, nil
}

// referenced reports whether a loaded inode still has an extent in data
// file id (a check on the accounting). f.tree is held for writing.
func (f *FS) referenced(id uint32) bool {
	f.imu.Lock()
	defer f.imu.Unlock()
	for _, in := range f.inodes {
		in.mu.RLock()
		for _, e := range in.exts {
			if e.File == id {
				in.mu.RUnlock()
				return true
			}
		}
		in.mu.RUnlock()
	}
	return false
}

// relocate copies ino's extents in data file id to the current data file,
// a piece at a time (see above), and returns the bytes installed.
func (f *FS) relocate(ctx context.Context, ino Ino, id uint32, tb *tokenBucket) (int64, error) {
	var copied int64
	for pos := int64(0); ; {
		if err := f.c.admit(ctx); err != nil {
			return copied, err
		}
		piece, ok, err := f.nextPiece(ino, id, pos)
		if err != nil || !ok {
			return copied, err
		}
		pos = piece.end()
		if tb != nil {
			if err := tb.wait(ctx, 2*piece.Len); err != nil {
				return copied, err
			}
		}
		// Verified, with new CRCs, or copied with its whole run and old
		// CRC when damaged (checksum.go).
		moved, err := f.copyExtent(ino, piece)
		if err != nil {
			return copied, fmt.Errorf("fsnode: compact inode %d: %w", ino, err)
		}
		if f.install(ino, piece, moved) {
			copied += piece.Len
		}
	}
}

// nextPiece finds the first piece of ino's contents at or after pos that
// is in data file id.
func (f *FS) nextPiece(ino Ino, id uint32, pos int64) (extent, bool, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err == syscall.ENOENT {
		return extent{}, false, nil
	}
	if err != nil {
		return extent{}, false, err
	}
	in.mu.RLock()
	defer in.mu.RUnlock()
	for _, e := range overlapping(in.exts, pos, maxFileSize) {
		if e.File == id {
			e.Len = min(e.Len, compactPiece)
			return e, true, nil
		}
	}
	return extent{}, false, nil
}

// install points ino's range of old at moved (copyExtent's extents for
// it) if that range still maps to old's bytes, and reports whether it did.
func (f *FS) install(ino Ino, old extent, moved []extent) bool {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	now := overlapping(in.exts, old.Off, old.end())
	if len(now) != 1 || now[0] != old {
		return false // changed meanwhile: the copy is dead
	}
	for _, m := range moved {
		f.data.addLive(m.File, m.Len)
		in.exts = putExtent(in.exts, m)
	}
	in.contentDirty = true
	f.markDirtyLocked(in)
	f.data.release(now)
	return true
}

// tokenBucket bounds a rate in bytes per second, with a burst of one
// piece.
type tokenBucket struct {
	rate   float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate int64) *tokenBucket {
	return &tokenBucket{rate: float64(rate), tokens: 2 * compactPiece, last: time.Now()}
}

// wait takes n tokens, sleeping while the bucket is in debt.
func (b *tokenBucket) wait(ctx context.Context, n int64) error {
	now := time.Now()
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.rate, 2*compactPiece)
	b.last = now
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(-b.tokens / b.rate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// compactor is the background compactor's goroutine.
type compactor struct {
	cancel context.CancelFunc
	done   chan struct{}
	// lastErr is the last failed run's error (for tests).
	mu      sync.Mutex
	lastErr error
}

func (f *FS) startCompactor() {
	ctx, cancel := context.WithCancel(context.Background())
	c := &compactor{cancel: cancel, done: make(chan struct{})}
	f.compactor = c
	go f.compactLoop(ctx, c)
}

func (f *FS) stopCompactor() {
	if c := f.compactor; c != nil {
		c.cancel()
		<-c.done
	}
}

// compactTick is how often the compactor looks: a quarter of the idle
// time, within [5ms, 1s].
func compactTick(idle time.Duration) time.Duration {
	return min(max(idle/4, 5*time.Millisecond), time.Second)
}

func (f *FS) compactLoop(ctx context.Context, c *compactor) {
	defer close(c.done)
	tb := newTokenBucket(f.opt.CompactRate)
	tick := time.NewTicker(compactTick(f.opt.CompactIdle))
	defer tick.Stop()
	seen, quietSince := f.changes.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		if n := f.changes.Load(); n != seen {
			seen, quietSince = n, now
			continue
		}
		if now.Sub(quietSince) < f.opt.CompactIdle || f.bulk.Load() > 0 || !f.worthARun() {
			continue
		}
		_, err := f.compactRun(ctx, f.duePolicy(), tb)
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
		}
		// Its own changes do not count as the user's.
		seen, quietSince = f.changes.Load(), time.Now()
	}
}

// worthARun reports whether compaction is due or a non-current data file
// is fully dead.
func (f *FS) worthARun() bool {
	if f.due() {
		return true
	}
	f.data.mu.RLock()
	defer f.data.mu.RUnlock()
	for _, df := range f.data.files {
		if df != f.data.cur && df.size > 0 && df.live.Load() == 0 && df.pending.Load() == 0 {
			return true
		}
	}
	return false
}

// compactForSpace runs after a write failed with ENOSPC: it reports
// whether it freed anything (then the write is worth retrying).
func (f *FS) compactForSpace(ctx context.Context) bool {
	if _, dead := f.data.space(); dead == 0 {
		return false
	}
	st, err := f.CompactAll(ctx)
	return err == nil && st.FilesRemoved > 0
}

// isNoSpace reports whether err is ENOSPC (or EDQUOT).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
