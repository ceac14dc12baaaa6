package fsnode

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Ino is an inode number. RootIno is the root directory; 0 is never used.
type Ino uint64

// RootIno is the inode number of the root directory.
const RootIno Ino = 1

// Attr is what stat reports about an inode.
type Attr struct {
	Ino                 Ino
	Mode                uint32 // type bits (syscall.S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, ...) | permissions
	Nlink               uint32
	Rdev                uint64 // device number of a character or block device (Mknod's)
	Size                uint64
	Blocks              uint64 // 512-byte units
	Uid, Gid            uint32
	Atime, Mtime, Ctime time.Time
}

// IsDir reports whether the attributes are a directory's.
func (a Attr) IsDir() bool { return a.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// DirEntry is one entry returned by ReadDir. Off is the cookie to pass to
// ReadDir to resume after this entry; cookies are always > 2, so an
// adapter that synthesises "." and ".." can give them offsets 1 and 2.
type DirEntry struct {
	Name string
	Ino  Ino
	Mode uint32 // type bits only
	Off  uint64
}

// SetAttr lists the attributes to change; nil fields are left alone.
type SetAttr struct {
	Mode         *uint32 // permission bits; the type bits are ignored
	Uid, Gid     *uint32
	Size         *uint64
	Atime, Mtime *time.Time
}

// Statfs is what statfs reports: block figures are the underlying disk's.
type Statfs struct {
	Blocks, Bfree, Bavail uint64 // in Bsize units
	Files, Ffree          uint64
	Bsize, Frsize         uint32
	NameLen               uint32
}

// Options configure an FS. The zero value gives durable, group-committed
// defaults.
type Options struct {
	// CommitInterval is the group-commit window: how long the committer
	// lets changes gather after the first one before it commits them.
	// Default 50ms (see doc.go).
	CommitInterval time.Duration
	// BatchItems makes the committer start a batch at once when this many
	// inodes are pending. Default 4096.
	BatchItems int
	// QueueCap bounds the number of inodes with uncommitted changes;
	// mutating calls block (back-pressure) while it is reached. Default
	// 16384.
	QueueCap int
	// InlineMax is the largest regular file kept inside the index instead
	// of a data file. Default 4096.
	InlineMax int
	// DataFileMax is the size at which a new data file is started.
	// Default 1 GiB.
	DataFileMax int64
	// NoSync skips every fsync (data files and bbolt's). UNSAFE: a power
	// failure or OS crash can lose committed data or corrupt the index
	// beyond repair. A process crash (kill -9) stays safe, because the
	// kernel still writes back what was written. For benchmarks and
	// throwaway caches only.
	NoSync bool
	// LockTimeout is how long Open waits for another process's lock on the
	// cache. Default 1s.
	LockTimeout time.Duration
	// IngestEvict keeps at most about QueueCap clean inodes in memory
	// while a Sink is active (otherwise at least 16,384, as at any time:
	// evictInodes): a clone reads back few of the files it writes, and
	// the process that ingests is not the one that mounts. HGFS_TUNE's
	// ingestevict; measured in commit.go (afterCommit).
	IngestEvict bool
	// UnmapIndex has the committer, after a commit (or every 1,024 loads
	// from the index, as reads commit nothing) at most every 10 ms,
	// take the index file's pages out of the process's mapping
	// (Linux: MADV_DONTNEED on bbolt's read-only shared mapping; they
	// stay in the page cache, and the next read maps them again).
	// Otherwise every index page a search ever touched, and the kernel's
	// fault-around with it (16 pages a fault), stays in the process's
	// resident set. HGFS_TUNE's unmapindex; measured in commit.go
	// (unmapIndexEvery).
	UnmapIndex bool

	// AutoCompact starts the background compactor (compact.go), which
	// gives the space of dead data file bytes back while the cache is
	// idle. Off unless asked for; the mount daemon asks.
	AutoCompact bool
	// CompactGarbage and CompactSlack say when compaction is due: when
	// the dead bytes exceed CompactGarbage times the live bytes plus
	// CompactSlack. Defaults 0.2 and 32 MiB, so that an idle cache stays
	// within 1.2 times its live data plus 32 MiB (the goal is
	// 1.2x plus 64 MiB; the rest is left for the index). A run compacts
	// until the dead bytes are at most half the threshold, so that runs do
	// not follow each other at every few megabytes written.
	CompactGarbage float64
	CompactSlack   int64
	// CompactIdle is how long the cache must go without changes before
	// the background compactor starts a run. Default 2s: longer than the
	// pauses inside an hg command or a build step, short enough that
	// space comes back between a user's commands. A run started goes on
	// (rate bounded) if changes resume.
	CompactIdle time.Duration
	// CompactRate bounds the background compactor's I/O in bytes per
	// second, reads plus writes (a token bucket; a byte copied counts
	// twice). Default 32 MiB/s: about a quarter of an unbounded run on
	// the development machine (112 MiB/s copied, so 224 MiB/s of I/O).
	// Compaction after ENOSPC and CompactAll, Compact and CompactIfDue are
	// not bounded.
	CompactRate int64
}

func (o Options) withDefaults() Options {
	if o.CommitInterval <= 0 {
		o.CommitInterval = 50 * time.Millisecond
	}
	if o.BatchItems <= 0 {
		o.BatchItems = 4096
	}
	if o.QueueCap <= 0 {
		o.QueueCap = 16384
	}
	if o.QueueCap < o.BatchItems {
		o.BatchItems = o.QueueCap
	}
	if o.InlineMax <= 0 {
		o.InlineMax = 4096
	}
	if o.DataFileMax <= 0 {
		o.DataFileMax = 1 << 30
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = time.Second
	}
	if o.CompactGarbage <= 0 {
		o.CompactGarbage = 0.2
	}
	if o.CompactSlack <= 0 {
		o.CompactSlack = 32 << 20
	}
	if o.CompactIdle <= 0 {
		o.CompactIdle = 2 * time.Second
	}
	if o.CompactRate <= 0 {
		o.CompactRate = 32 << 20
	}
	return o
}

// Stats are counters of the committer and the cache.
type Stats struct {
	QueueDepth, QueueCap int    // inodes with uncommitted changes; the bound
	Commits              uint64 // bbolt write transactions committed
	Batches              uint64 // group commits of the background committer
	Items                uint64 // inode records written by group commits
	DataBytes            uint64 // bytes appended to data files
	InlineBytes          uint64 // inline bytes written to the index
	DataFiles            int
	// LiveBytes are the data file bytes files refer to; DeadBytes the
	// rest of the data files (overwritten, truncated or deleted bytes,
	// and reserved space), which compaction gives back.
	LiveBytes, DeadBytes int64
	// Compactions counts compaction runs that changed something;
	// CompactedBytes the live bytes they copied, ReclaimedBytes the data
	// file bytes they deleted.
	Compactions                    uint64
	CompactedBytes, ReclaimedBytes uint64
	LoadedInodes                   int // inodes held in memory
	OpenHandles                    int // handles open (Create, Open) and not yet released
	// VirtualFiles counts the committed virtual files (virtual.go);
	// MaterializedFiles the virtual files copied into the cache by a
	// first write since Open.
	VirtualFiles, MaterializedFiles int64
}

const (
	indexName = "index.db"
	// firstSeq is the first directory-entry cookie; 1 and 2 are left to
	// "." and "..".
	firstSeq = 3
)

// FS is an open cache. All methods are safe for concurrent use.
type FS struct {
	dir     string
	opt     Options
	db      *bolt.DB
	created time.Time
	data    *dataFiles

	// tree guards the namespace: every directory's entries, nlink and
	// parent changes, and the inode table's membership (eviction). Lock
	// order: tree, then inode.mu, then cmu / hmu / imu / data.mu.
	tree sync.RWMutex

	imu    sync.Mutex
	inodes map[Ino]*inode
	// refs are the kernel references (inode.lookups) of inodes evicted
	// from the table while the kernel still held them (afterCommit); the
	// inode gets them back when it is loaded again (adoptRefsLocked).
	refs refTable
	// ioHook, when a test sets it, is called with the inode I/O by
	// inode holds outside f.tree (inodeForIO), before it is used.
	ioHook func(*inode)

	nextIno atomic.Uint64 // allocated under tree
	nextSeq atomic.Uint64 // allocated under tree

	hmu        sync.Mutex
	handles    map[Handle]*handle
	nextHandle Handle

	c committer

	closed atomic.Bool
	// poisoned is set (to the cause) when a panic inside bbolt left the
	// index unusable (guard.go).
	poisoned atomic.Pointer[error]
	// bulk counts active sinks: group commits are then larger and, until
	// someone waits, not fsynced (see Sink).
	bulk atomic.Int32
	// indexFile is index.db opened read-only, for writeback hints only.
	indexFile *os.File
	// uid and gid own new inodes unless the context says (WithCaller).
	uid, gid uint32
	// virt: virtual files' state (virtual.go).
	virt virtState
	// compactMu serialises Compact runs.
	compactMu sync.Mutex
	// anyXattrs is false while the cache holds no extended attribute at
	// all (none at Open, none set since): Getxattr then answers ENODATA
	// without reading the index. The kernel asks for security.capability
	// before every write(2) to a FUSE file, so that answer is on the
	// write path.
	anyXattrs atomic.Bool
	// changes counts changes (markDirtyLocked): the compactor waits until
	// it stops moving (see compact.go).
	changes atomic.Uint64
	// watch records changes of the inodes it watches (watch.go).
	watch  atomic.Pointer[Watch]
	cstats compactCounters
	// compactor is the background compactor (Options.AutoCompact).
	compactor *compactor
	// runs: bytes of recently verified runs (checksum.go).
	runs runCache
}

// Create makes a new, empty cache in dir (created if missing). It fails
// with ErrExist if dir already holds one.
func Create(dir string, opt Options) (*FS, error) { return create(dir, opt, false) }

// CreateForIngest is Create for a cache that a Sink is about to fill (hgfs
// clone --mount). The cache is marked unfinished in the transaction that
// creates it; the commit of the first Sink.Finish clears the mark, in the
// same transaction as the sink's last files. Until then Open and Fsck
// refuse the cache with ErrUnfinished: a clone that was killed leaves a
// cache that says so instead of one that mounts with part of a
// repository.
func CreateForIngest(dir string, opt Options) (*FS, error) { return create(dir, opt, true) }

func create(dir string, opt Options, ingest bool) (*FS, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, indexName)
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExist, dir)
	}
	opt = opt.withDefaults()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opt.LockTimeout, NoSync: opt.NoSync,
		FreelistType: bolt.FreelistMapType, InitialMmapSize: initialMmap})
	if err != nil {
		return nil, fmt.Errorf("fsnode: create %s: %w", path, err)
	}
	now := time.Now().UnixNano()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append(allBuckets, laterBuckets...) {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		m := tx.Bucket(bucketMeta)
		v := make([]byte, 4)
		v[3] = formatVersion
		if err := m.Put(metaVersion, v); err != nil {
			return err
		}
		if err := m.Put(metaCreated, u64(uint64(now))); err != nil {
			return err
		}
		if err := m.Put(metaNextIno, u64(uint64(RootIno)+1)); err != nil {
			return err
		}
		if err := m.Put(metaNextSeq, u64(firstSeq)); err != nil {
			return err
		}
		if ingest {
			if err := m.Put(metaIngest, u64(uint64(now))); err != nil {
				return err
			}
		}
		uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
		root := diskInode{Mode: syscall.S_IFDIR | 0o755, Nlink: 2, Uid: uid, Gid: gid,
			Atime: now, Mtime: now, Ctime: now, Parent: RootIno}
		return tx.Bucket(bucketInodes).Put(inoKey(RootIno), encodeInode(&root))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("fsnode: create %s: %w", path, err)
	}
	if !opt.NoSync {
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	return open(dir, opt, ingest)
}

// Open opens an existing cache. Orphan inodes left by a crash (unlinked
// while open) are reclaimed, and data file bytes past the last commit are
// cut off. A cache with a newer format version is refused with
// ErrNewerFormat and one left by an unfinished clone with ErrUnfinished,
// both untouched; an older one is upgraded first (migrate.go).
func Open(dir string, opt Options) (*FS, error) { return open(dir, opt, false) }

// open is Open; ingest accepts (and remembers) the unfinished-ingest
// mark that CreateForIngest just made.
func open(dir string, opt Options, ingest bool) (*FS, error) {
	opt = opt.withDefaults()
	path := filepath.Join(dir, indexName)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s has no %s", ErrNotCache, dir, indexName)
		}
		return nil, err
	}
	// What bolt.Open reads (meta and freelist pages) is checked first: a
	// damaged one would make it panic with the file locked.
	probs, err := checkBoltFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("fsnode: open %s: %w", path, err)
	}
	if len(probs) > 0 {
		return nil, damagedIndex(dir, probs)
	}
	ver, unclean, err := checkVersion(path, opt.LockTimeout, ingest)
	if pe := (*panicError)(nil); errors.As(err, &pe) {
		// The pages on the way to the meta bucket are damaged: reading
		// the version comes before the whole file's check.
		return nil, damagedIndex(dir, []string{pe.Error()})
	}
	if err != nil {
		return nil, err
	}
	if unclean {
		// Not closed cleanly: check the whole file before serving.
		if probs, err := checkBoltFile(path, true); err != nil {
			return nil, fmt.Errorf("fsnode: open %s: %w", path, err)
		} else if len(probs) > 0 {
			return nil, damagedIndex(dir, probs)
		}
	}
	db, err := openBolt(path, &bolt.Options{Timeout: opt.LockTimeout, NoSync: opt.NoSync, FreelistType: bolt.FreelistMapType, InitialMmapSize: initialMmap})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("fsnode: cache %s is in use by another process", dir)
		}
		return nil, fmt.Errorf("fsnode: open %s: %w", path, err)
	}
	if ver < formatVersion {
		if err := migrate(db, dir); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := createLaterBuckets(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("fsnode: open %s: %w", path, err)
	}
	f := &FS{
		dir:     dir,
		opt:     opt,
		db:      db,
		inodes:  make(map[Ino]*inode),
		refs:    newRefTable(),
		handles: make(map[Handle]*handle),
		uid:     uint32(os.Getuid()),
		gid:     uint32(os.Getgid()),
	}
	f.c.unfinished = ingest
	f.virt.version.Store(max(ver, formatVersion))
	if err := f.load(); err != nil {
		closeDB(db, f.poisoned.Load() != nil)
		if f.data != nil {
			f.data.close()
		}
		return nil, err
	}
	// A failure only costs the writeback hint (see startWriteback).
	f.indexFile, _ = os.Open(path)
	f.c.init(f)
	go f.c.run()
	if opt.AutoCompact {
		f.startCompactor()
	}
	return f, nil
}

// createLaterBuckets creates the buckets added after format 1 (rdev,
// xattrs) in a cache made before them; a cache that has them all is not
// written to.
func createLaterBuckets(db *bolt.DB) error {
	return guarded("open", func() error { return createLaterBucketsUnguarded(db) })
}

func createLaterBucketsUnguarded(db *bolt.DB) error {
	missing := false
	_ = db.View(func(tx *bolt.Tx) error {
		for _, b := range laterBuckets {
			missing = missing || tx.Bucket(b) == nil
		}
		return nil
	})
	if !missing {
		return nil
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, b := range laterBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkVersion reads the format version read-only, so that a cache from a
// newer hgfs, or one left by an unfinished clone (unless ingest), is
// refused before anything (even bbolt's freelist) is written. It also
// reports whether the cache was left open (not closed cleanly).
func checkVersion(path string, timeout time.Duration, ingest bool) (ver uint32, unclean bool, err error) {
	db, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return 0, false, fmt.Errorf("fsnode: cache %s is in use by another process", filepath.Dir(path))
		}
		return 0, false, fmt.Errorf("fsnode: open %s: %w", path, err)
	}
	defer closeDB(db, false)
	err = guarded("open "+path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			m := tx.Bucket(bucketMeta)
			if m == nil {
				return fmt.Errorf("%w: %s has no meta bucket", ErrNotCache, path)
			}
			var err error
			if ver, err = readVersion(m); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if ver > maxFormatVersion {
				return fmt.Errorf("%w: %s has format version %d, this hgfs reads up to %d (upgrade hgfs)",
					ErrNewerFormat, filepath.Dir(path), ver, maxFormatVersion)
			}
			if m.Get(metaIngest) != nil && !ingest {
				return fmt.Errorf("%w: %s", ErrUnfinished, filepath.Dir(path))
			}
			unclean = m.Get(metaOpen) != nil
			return nil
		})
	})
	return ver, unclean, err
}

// readVersion decodes the format version record.
func readVersion(m *bolt.Bucket) (uint32, error) {
	v := m.Get(metaVersion)
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: format version record is %d bytes", ErrCorrupt, len(v))
	}
	ver := binary.BigEndian.Uint32(v)
	if ver == 0 {
		return 0, fmt.Errorf("%w: format version 0", ErrCorrupt)
	}
	return ver, nil
}

// load reads the counters and data file table, opens the data files
// (cutting uncommitted tails), reclaims orphans and counts each data
// file's live bytes.
func (f *FS) load() (err error) {
	var files map[uint32]int64
	var orphans []Ino
	err = f.view("open", func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				return fmt.Errorf("%w: %s: bucket %q missing", ErrCorrupt, f.dir, b)
			}
		}
		m := tx.Bucket(bucketMeta)
		if c := m.Get(metaCreated); len(c) == 8 {
			n, _ := decodeU64(c, "creation time")
			f.created = time.Unix(0, int64(n))
		}
		ni, err := decodeU64(m.Get(metaNextIno), "next inode")
		if err != nil {
			return err
		}
		ns, err := decodeU64(m.Get(metaNextSeq), "next cookie")
		if err != nil {
			return err
		}
		f.nextIno.Store(ni)
		f.nextSeq.Store(ns)
		files = make(map[uint32]int64)
		err = tx.Bucket(bucketDatafiles).ForEach(func(k, v []byte) error {
			if len(k) != 4 {
				return fmt.Errorf("%w: data file key %x", ErrCorrupt, k)
			}
			n, err := decodeU64(v, "data file length")
			if err != nil {
				return err
			}
			files[uint32(k[0])<<24|uint32(k[1])<<16|uint32(k[2])<<8|uint32(k[3])] = int64(n)
			return nil
		})
		if err != nil {
			return err
		}
		if k, _ := tx.Bucket(bucketXattrs).Cursor().First(); k != nil {
			f.anyXattrs.Store(true)
		}
		if tx.Bucket(bucketInodes).Get(inoKey(RootIno)) == nil {
			return fmt.Errorf("%w: %s: root inode missing", ErrCorrupt, f.dir)
		}
		return tx.Bucket(bucketOrphans).ForEach(func(k, _ []byte) error {
			ino, err := decodeInoKey(k)
			if err != nil {
				return err
			}
			orphans = append(orphans, ino)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("fsnode: open %s: %w", f.dir, err)
	}
	f.data, err = openDataFiles(f.dir, files, f.opt)
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			err = f.countLive()
		}
	}()
	// Mark the cache open (Close removes the mark) and reclaim orphans.
	{
		err := f.update("open", func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketMeta).Put(metaOpen, u64(uint64(time.Now().UnixNano()))); err != nil {
				return err
			}
			for _, ino := range orphans {
				if err := deleteInodeRecords(tx, ino, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("fsnode: open %s: marking the cache open: %w", f.dir, err)
		}
		if len(orphans) > 0 {
			f.c.commits.Add(1)
		}
	}
	return nil
}

// countLive sets each data file's live bytes from the extents in the
// index (the accounting compact.go keeps up to date from then on). An
// undecodable extent list counts as dead: Fsck reports it.
func (f *FS) countLive() error {
	files := f.data.files // not shared yet
	err := f.view("open", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExtents).ForEach(func(_, v []byte) error {
			exts, err := decodeExtents(v)
			if err != nil {
				return nil
			}
			for _, e := range exts {
				if df := files[e.File]; df != nil {
					df.live.Add(e.Len)
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("fsnode: open %s: counting live bytes: %w", f.dir, err)
	}
	return nil
}

// deleteInodeRecords removes an inode and its contents from the index.
// With onlyUnlinked, an inode that still has links keeps its record (an
// orphan entry that lost the race with a Link cannot happen, but a damaged
// index must not lose a reachable file).
func deleteInodeRecords(tx *bolt.Tx, ino Ino, onlyUnlinked bool) error {
	k := inoKey(ino)
	if onlyUnlinked {
		if v := tx.Bucket(bucketInodes).Get(k); v != nil {
			if d, err := decodeInode(v); err == nil && d.Nlink > 0 {
				return tx.Bucket(bucketOrphans).Delete(k)
			}
		}
	}
	for _, b := range [][]byte{bucketInodes, bucketExtents, bucketInline, bucketOrphans} {
		if err := tx.Bucket(b).Delete(k); err != nil {
			return err
		}
	}
	// Missing only in a format 1 cache that fsck repairs: it has none;
	// virtual and vdirs only in a cache that never held a virtual file
	// or a deferred listing.
	for _, name := range [][]byte{bucketRdev, bucketVirtual, bucketVdirs} {
		if b := tx.Bucket(name); b != nil {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	return deleteXattrs(tx.Bucket(bucketXattrs), ino)
}

// Close commits everything pending, reclaims unlinked inodes (no handle or
// kernel reference survives Close) and closes the cache.
func (f *FS) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	f.stopCompactor()
	// Late handles and kernel references die with the FS: reclaim orphans.
	f.tree.Lock()
	f.imu.Lock()
	var orphans []*inode
	for _, in := range f.inodes {
		orphans = append(orphans, in)
	}
	f.refs.Reset()
	f.imu.Unlock()
	for _, in := range orphans {
		in.mu.Lock()
		in.handles = 0
		in.lookups = 0
		if in.d.Nlink == 0 && !in.reclaimed {
			f.reclaimLocked(in)
		}
		in.mu.Unlock()
	}
	f.tree.Unlock()
	err := f.c.stop()
	if err == nil {
		// Closed cleanly: the next Open need not check the whole index.
		err = f.update("close", func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(metaOpen) })
	}
	if derr := f.data.close(); err == nil {
		err = derr
	}
	if derr := closeDB(f.db, f.poisoned.Load() != nil); err == nil {
		err = derr
	}
	if f.indexFile != nil {
		f.indexFile.Close()
	}
	return err
}

// errClosed is what operations on a closed FS return.
var errClosed = fmt.Errorf("%w: %w", ErrClosed, syscall.EIO)

// Dir returns the cache directory.
func (f *FS) Dir() string { return f.dir }

// Root returns the root directory's inode number.
func (f *FS) Root() Ino { return RootIno }

// Created returns when the cache was created.
func (f *FS) Created() time.Time { return f.created }

// Stats returns the committer's counters.
func (f *FS) Stats() Stats {
	s := f.c.stats()
	s.DataFiles = f.data.count()
	s.LiveBytes, s.DeadBytes = f.data.space()
	s.Compactions = f.cstats.runs.Load()
	s.CompactedBytes = f.cstats.copied.Load()
	s.ReclaimedBytes = f.cstats.reclaimed.Load()
	f.imu.Lock()
	s.LoadedInodes = len(f.inodes)
	f.imu.Unlock()
	f.hmu.Lock()
	s.OpenHandles = len(f.handles)
	f.hmu.Unlock()
	vs := f.VirtualStats()
	s.VirtualFiles, s.MaterializedFiles = vs.Virtual, vs.Materialized
	return s
}

// Statfs reports the underlying disk's space and the cache's inode count.
func (f *FS) Statfs(ctx context.Context) (Statfs, error) {
	st, err := diskStatfs(f.dir)
	if err != nil {
		return Statfs{}, err
	}
	st.Files = f.nextIno.Load() + st.Ffree
	st.NameLen = maxNameLen
	return st, nil
}

type callerKey struct{}

type caller struct{ uid, gid uint32 }

// WithCaller returns a context saying which user creates inodes: new
// inodes get uid and gid. Without it they get the process's.
func WithCaller(ctx context.Context, uid, gid uint32) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{uid, gid})
}

func (f *FS) owner(ctx context.Context) (uint32, uint32) {
	if ctx != nil {
		if c, ok := ctx.Value(callerKey{}).(caller); ok {
			return c.uid, c.gid
		}
	}
	return f.uid, f.gid
}

// initialMmap is bbolt's initial mapping size: address space only, but
// large enough that a big ingest does not remap (and re-dereference) the
// database again and again as it grows.
const initialMmap = 1 << 30
