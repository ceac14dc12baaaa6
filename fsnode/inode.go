package fsnode

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// inode is an inode loaded in memory. Its fields other than dir are
// guarded by mu; dir (a directory's entries) is guarded by FS.tree.
//
// An *inode taken from the table stays valid while the caller holds
// FS.tree (read or write) or a reference (a handle or kernel lookup):
// eviction happens only under FS.tree's write lock, and only to clean
// inodes nobody references.
type inode struct {
	mu  sync.RWMutex
	ino Ino
	d   diskInode // attributes as they will next be committed
	// inline holds a regular file's contents while d.Flags&flagInline, or
	// a symlink's target.
	inline []byte
	exts   []extent // contents of a regular file when not inline
	dir    *dirState
	// verified: runs of exts read and found intact (checksum.go).
	verified verifiedRuns
	rdev     uint64 // device number (character and block devices)
	// vref names the contents of a virtual file (d.Flags&flagVirtual;
	// virtual.go); nil otherwise. It is replaced, never modified.
	vref *VirtualRef

	// xattrs are the extended attributes once loaded (xattrsLoaded; see
	// xattr.go); xattrsDirty: changed since the last snapshot.
	xattrs map[string][]byte

	// chunk: data file space reserved for this file's appends
	// (appendToChunk): chunkLen bytes at chunkOff.
	chunk              *dataFile
	chunkOff, chunkLen int64

	lookups  uint64 // kernel references (Lookup/Create/... minus Forget)
	handles  int    // open handles
	lastSnap uint64
	// pins counts callers using the inode outside f.tree on the strength
	// of a kernel reference alone (inodeForIO, materializeIno): eviction,
	// which may take a referenced inode out of the table (afterCommit),
	// skips a pinned one.
	pins atomic.Int32

	// The flags sit together: an inode is 256 bytes, the size class
	// below the 320 it took with them apart and a directory's deferred
	// listing here (now dirState's), which at 250,000 files loaded in a
	// mount's daemon was 16 MB.
	xattrsLoaded, xattrsDirty bool
	dirty                     bool // queued for the committer
	contentDirty              bool // inline/extents changed since the last snapshot
	// reclaimed: unlinked and unreferenced; its records are deleted by
	// the next commit, after which it leaves the table.
	reclaimed bool
	// fresh: made since the last snapshot, so the index holds no record
	// of it that a commit would have to delete.
	fresh bool
	// used: found in the table or loaded into it since the last eviction
	// sweep, which spares it once (afterCommit); guarded by f.imu.
	used bool
}

// loaded says whether a directory's entries are all in in.dir: read from
// the index and none deferred. f.tree is held.
func (in *inode) loaded() bool { return in.dir != nil && in.dir.pending == nil }

func (in *inode) typ() uint32 { return in.d.Mode & syscall.S_IFMT }

func (in *inode) isDir() bool { return in.typ() == syscall.S_IFDIR }

// attrLocked builds the Attr; in.mu must be held.
func (in *inode) attrLocked() Attr {
	var alloc int64
	if in.vref != nil {
		alloc = int64(in.d.Size) // as if stored
	} else if in.d.Flags&flagInline != 0 || in.typ() == syscall.S_IFLNK {
		alloc = int64(len(in.inline))
	} else {
		for _, e := range in.exts {
			alloc += e.Len
		}
	}
	return Attr{
		Ino:    in.ino,
		Mode:   in.d.Mode,
		Nlink:  in.d.Nlink,
		Rdev:   in.rdev,
		Size:   in.d.Size,
		Blocks: uint64(alloc+511) / 512,
		Uid:    in.d.Uid,
		Gid:    in.d.Gid,
		Atime:  time.Unix(0, in.d.Atime),
		Mtime:  time.Unix(0, in.d.Mtime),
		Ctime:  time.Unix(0, in.d.Ctime),
	}
}

func (in *inode) attr() Attr {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return in.attrLocked()
}

// getInode returns the inode from the table, loading it from the index if
// needed. The caller holds f.tree (read or write).
func (f *FS) getInode(ino Ino) (*inode, error) {
	f.imu.Lock()
	in := f.inodes[ino]
	if in != nil {
		in.used = true
	}
	f.imu.Unlock()
	if in != nil {
		if in.reclaimed {
			return nil, syscall.ENOENT
		}
		return in, nil
	}
	if ino == 0 || ino >= Ino(f.nextIno.Load()) {
		return nil, syscall.ENOENT
	}
	loaded, err := f.loadInode(ino)
	if err != nil {
		return nil, err
	}
	f.imu.Lock()
	defer f.imu.Unlock()
	if in := f.inodes[ino]; in != nil { // loaded concurrently
		if in.reclaimed {
			return nil, syscall.ENOENT
		}
		return in, nil
	}
	f.addLoadedLocked(loaded)
	return loaded, nil
}

// addLoadedLocked puts an inode loaded from the index into the table,
// with the kernel references it had when it was evicted; f.imu is held.
// Commits sweep the table (afterCommit) and unmap the index's pages
// (Options.UnmapIndex), and reads commit nothing: a mount's daemon
// reading the 250,000 files of a store it had not written kept every
// inode they loaded, and the index's pages it read, until a write (peak
// RSS 337-355 MB after a fresh mount's cat of every file, by hand on
// 2026-12-07). So a load that takes the table past its bound, or the
// sweepLoads-th load since the committer last looked, asks the
// committer to do both (it unmaps at most every unmapIndexEvery).
func (f *FS) addLoadedLocked(in *inode) {
	f.adoptRefsLocked(in)
	in.used = true
	f.inodes[in.ino] = in
	f.c.loads++
	if (len(f.inodes) > f.c.evictAt || f.opt.UnmapIndex && f.c.loads >= sweepLoads) && !f.c.sweep.Load() {
		f.c.loads = 0
		f.c.sweep.Store(true)
		f.c.poke()
	}
}

// sweepLoads is how many loads from the index, at most, pass between two
// requests to the committer to unmap the index's pages.
const sweepLoads = 1024

// adoptRefsLocked gives an inode loaded from the index the kernel
// references it had when it was evicted; f.imu is held.
func (f *FS) adoptRefsLocked(in *inode) {
	if n := f.refs.Take(in.ino); n > 0 {
		in.lookups = n
	}
}

func (f *FS) loadInode(ino Ino) (*inode, error) {
	var in *inode
	err := f.view("load inode", func(tx *bolt.Tx) error {
		var err error
		in, err = readInode(indexBuckets(tx), ino)
		return err
	})
	if err != nil {
		return nil, err
	}
	return in, nil
}

// Preload puts the inodes of inos that the table does not hold yet into
// it, read in one index transaction. It is a hint with no visible effect
// but speed: an adapter listing a directory with attributes
// (READDIRPLUS) calls it with the listed entries before looking each up,
// which then finds them in the table instead of opening a transaction
// per entry. Numbers that name no inode (any more) are skipped, as are
// unreadable records, which the lookup reports.
//
// Safe with stale numbers: under f.tree no commit can drop an inode from
// table and index meanwhile (afterCommit takes the write lock), an inode
// absent from the table is clean (the index holds its state), and inode
// numbers are never reused.
func (f *FS) Preload(inos []Ino) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	next := Ino(f.nextIno.Load())
	missing := make([]Ino, 0, len(inos))
	f.imu.Lock()
	for _, ino := range inos {
		if ino != 0 && ino < next && f.inodes[ino] == nil {
			missing = append(missing, ino)
		}
	}
	f.imu.Unlock()
	if len(missing) < 2 {
		return // a lookup loads one as cheaply
	}
	slices.Sort(missing)
	loaded := make([]*inode, 0, len(missing))
	_ = f.view("preload", func(tx *bolt.Tx) error {
		b := indexBuckets(tx)
		for _, ino := range missing {
			if in, err := readInode(b, ino); err == nil {
				loaded = append(loaded, in)
			}
		}
		return nil
	})
	f.imu.Lock()
	for _, in := range loaded {
		if f.inodes[in.ino] == nil {
			f.addLoadedLocked(in)
		}
	}
	f.imu.Unlock()
}

// inodeBuckets are the buckets an inode's record spans, each looked up
// once per transaction, when a record first needs it: opening a bucket
// is a search of the index's root, and an inode's contents are in one
// of them (a virtual file's reference, an inline file's bytes, a large
// file's extents), so that loading one inode opened four buckets it did
// not read. Measured in one process on the 20,000-file virtual working
// copy (2026-12-06, 6 alternated runs): looking up every file 90 -> 67
// ms, then reading each (its filelog's inode loaded to resolve it) 224
// -> 199 ms; through a fresh mount, hg status and a cat of every file
// were the same within noise (the kernel's round trips are their cost).
type inodeBuckets struct {
	tx                                     *bolt.Tx
	inodes, inline, extents, rdev, virtual *bolt.Bucket
	opened                                 uint8 // bits of the ones looked up
}

func indexBuckets(tx *bolt.Tx) *inodeBuckets {
	return &inodeBuckets{tx: tx, inodes: tx.Bucket(bucketInodes)}
}

// get returns the bucket *p caches, named name, looking it up the first
// time (bit marks it); nil if the index has no such bucket.
func (b *inodeBuckets) get(p **bolt.Bucket, bit uint8, name []byte) *bolt.Bucket {
	if b.opened&bit == 0 {
		*p = b.tx.Bucket(name)
		b.opened |= bit
	}
	return *p
}

// readInode reads inode ino's record (attributes, and inline data or
// extents) from the index.
func readInode(b *inodeBuckets, ino Ino) (*inode, error) {
	in := &inode{ino: ino}
	err := func() error {
		k := inoKey(ino)
		v := b.inodes.Get(k)
		if v == nil {
			return syscall.ENOENT
		}
		d, err := decodeInode(v)
		if err != nil {
			return fmt.Errorf("inode %d: %w", ino, err)
		}
		in.d = d
		switch {
		case d.Flags&flagVirtual != 0:
			var v []byte
			if vb := b.get(&b.virtual, 1<<0, bucketVirtual); vb != nil {
				v = vb.Get(k)
			}
			ref, err := decodeVirtualRef(v)
			if err != nil {
				return fmt.Errorf("inode %d: %w", ino, err)
			}
			in.vref = &ref
		case d.Mode&syscall.S_IFMT == syscall.S_IFLNK || d.Flags&flagInline != 0:
			v := b.get(&b.inline, 1<<1, bucketInline).Get(k)
			if uint64(len(v)) != d.Size {
				return fmt.Errorf("%w: inode %d: inline contents are %d bytes, size %d", ErrCorrupt, ino, len(v), d.Size)
			}
			in.inline = append([]byte(nil), v...)
		case d.Mode&syscall.S_IFMT == syscall.S_IFREG:
			if v := b.get(&b.extents, 1<<2, bucketExtents).Get(k); v != nil {
				exts, err := decodeExtents(v)
				if err != nil {
					return fmt.Errorf("inode %d: %w", ino, err)
				}
				in.exts = exts
			}
		case isDevice(d.Mode & syscall.S_IFMT):
			var v []byte
			if rb := b.get(&b.rdev, 1<<3, bucketRdev); rb != nil {
				v = rb.Get(k)
			}
			if v != nil {
				n, err := decodeU64(v, "device number")
				if err != nil {
					return fmt.Errorf("inode %d: %w", ino, err)
				}
				in.rdev = n
			}
		}
		return nil
	}()
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, fmt.Errorf("%w: %w", err, syscall.EIO)
		}
		return nil, err
	}
	return in, nil
}

// newInode allocates an inode number and puts a new inode in the table.
// The caller holds f.tree's write lock.
func (f *FS) newInode(mode, uid, gid uint32, parent Ino) *inode {
	ino := Ino(f.nextIno.Add(1) - 1)
	now := time.Now().UnixNano()
	in := &inode{ino: ino, d: diskInode{Mode: mode, Nlink: 1, Uid: uid, Gid: gid,
		Atime: now, Mtime: now, Ctime: now}}
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		in.d.Nlink = 2
		in.d.Parent = parent
		in.dir = newDirState()
	case syscall.S_IFREG:
		in.d.Flags = flagInline
		in.inline = []byte{}
	}
	in.contentDirty = true
	in.fresh = true
	f.imu.Lock()
	f.inodes[ino] = in
	f.imu.Unlock()
	return in
}

// readAt reads file contents; in.mu is held (read).
func (f *FS) readAtLocked(in *inode, buf []byte, off int64) (int, error) {
	size := int64(in.d.Size)
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if off >= size {
		return 0, nil
	}
	n := int64(len(buf))
	if n > size-off {
		n = size - off
	}
	buf = buf[:n]
	if in.vref != nil {
		// Callers read virtual files through readIn, without the lock.
		return 0, fmt.Errorf("inode %d: virtual file read under its lock: %w", in.ino, syscall.EIO)
	}
	if in.d.Flags&flagInline != 0 {
		copy(buf, in.inline[off:])
		return int(n), nil
	}
	end := off + n
	// First extent that ends after off. Extents are sorted and do not
	// overlap; what no extent covers (a hole) reads as zeros, and only
	// that is cleared: a sequential read's buffers are all extents.
	i := sort.Search(len(in.exts), func(i int) bool { return in.exts[i].end() > off })
	at := off // buf is filled up to here
	for ; i < len(in.exts) && in.exts[i].Off < end; i++ {
		e := in.exts[i]
		from, to := max(e.Off, off), min(e.end(), end)
		clear(buf[at-off : from-off])
		if err := f.readExtent(in, e, buf[from-off:to-off], e.FileOff+(from-e.Off)); err != nil {
			return 0, fmt.Errorf("inode %d: %w: %w", in.ino, err, syscall.EIO)
		}
		at = to
	}
	clear(buf[at-off:])
	return int(n), nil
}

// writeAtLocked writes data at off; in.mu is held (write).
func (f *FS) writeAtLocked(in *inode, data []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	end := off + int64(len(data))
	if end > maxFileSize || end < off {
		return 0, syscall.EFBIG
	}
	if len(data) == 0 {
		return 0, nil
	}
	if in.vref != nil {
		// Callers materialize first (lockMaterialized).
		return 0, fmt.Errorf("inode %d: virtual file written under its lock: %w", in.ino, syscall.EIO)
	}
	size := max(int64(in.d.Size), end)
	if in.d.Flags&flagInline != 0 {
		if size <= int64(f.opt.InlineMax) {
			if int64(len(in.inline)) < size {
				in.inline = append(in.inline, make([]byte, size-int64(len(in.inline)))...)
			}
			copy(in.inline[off:], data)
			in.d.Size = uint64(size)
			f.touchContent(in)
			return len(data), nil
		}
		if err := f.spillLocked(in); err != nil {
			return 0, err
		}
	}
	var id uint32
	var foff int64
	var err error
	if off == int64(in.d.Size) && off > 0 && len(data) < appendChunk {
		id, foff, err = f.appendToChunk(in, data)
	} else {
		id, foff, err = f.data.appendData(data)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", err, syscall.EIO)
	}
	old := overlapping(in.exts, off, end)
	f.data.addLive(id, int64(len(data)))
	for _, e := range newRuns(off, id, foff, data) {
		in.exts = putExtent(in.exts, e)
	}
	in.d.Size = uint64(size)
	f.c.addBytes(uint64(len(data)))
	f.touchContent(in)
	f.data.release(old)
	return len(data), nil
}

// overlapping returns the parts of exts within [off, end), clipped as
// putExtent cuts them.
func overlapping(exts []extent, off, end int64) []extent {
	var out []extent
	i := sort.Search(len(exts), func(i int) bool { return exts[i].end() > off })
	for ; i < len(exts) && exts[i].Off < end; i++ {
		e := exts[i]
		from, to := max(e.Off, off), min(e.end(), end)
		// The piece keeps its run (Head moves with it), so it can be
		// verified and compared as putExtent would have cut it.
		e.Head += from - e.Off
		e.FileOff += from - e.Off
		e.Off, e.Len = from, to-from
		out = append(out, e)
	}
	return out
}

// appendChunk bounds the data file space reserved at a time for a file
// that grows by appends (appends to a non-empty file only). hg appends to a revlog's .i and .d in turn; without a
// per-file reservation their pieces would interleave in the data file and
// every append would add an extent. The unused tail of a chunk is dead
// space for Compact.
const appendChunk = 64 << 10

// appendToChunk writes an append into in's reserved chunk (reserving a new
// one when needed); in.mu is held for writing. A chunk is used only while
// its data file is the current one: Compact never touches that one.
func (f *FS) appendToChunk(in *inode, data []byte) (uint32, int64, error) {
	n := int64(len(data))
	f.data.mu.RLock()
	usable := in.chunk != nil && in.chunk == f.data.cur && in.chunkLen >= n
	f.data.mu.RUnlock()
	if !usable {
		// Room for several more appends like this one, growing with the
		// file; bounded, since the unused tail is wasted.
		size := min(appendChunk, max(8*n, 4096, int64(in.d.Size)/4))
		df, off, err := f.data.reserve(size)
		if err != nil {
			return 0, 0, err
		}
		in.chunk, in.chunkOff, in.chunkLen = df, off, size
	}
	df, off := in.chunk, in.chunkOff
	if _, err := df.f.WriteAt(data, off); err != nil {
		return 0, 0, fmt.Errorf("fsnode: writing %s at %d: %w", dataFileName(df.id), off, err)
	}
	f.data.wrote(df)
	in.chunkOff += n
	in.chunkLen -= n
	return df.id, off, nil
}

// spillLocked moves inline contents to a data file.
func (f *FS) spillLocked(in *inode) error {
	var exts []extent
	if len(in.inline) > 0 {
		id, foff, err := f.data.appendData(in.inline)
		if err != nil {
			return fmt.Errorf("%w: %w", err, syscall.EIO)
		}
		f.c.addBytes(uint64(len(in.inline)))
		f.data.addLive(id, int64(len(in.inline)))
		exts = newRuns(0, id, foff, in.inline)
	}
	in.exts = exts
	in.inline = nil
	in.d.Flags &^= flagInline
	return nil
}

// truncateLocked sets the size; in.mu is held (write).
func (f *FS) truncateLocked(in *inode, size int64) error {
	if size < 0 {
		return syscall.EINVAL
	}
	if size > maxFileSize {
		return syscall.EFBIG
	}
	if in.vref != nil {
		if size != 0 {
			// Callers materialize first (lockMaterialized).
			return fmt.Errorf("inode %d: virtual file truncated to %d under its lock: %w", in.ino, size, syscall.EIO)
		}
		f.dropRefLocked(in)
		f.touchContent(in)
		return nil
	}
	if in.d.Flags&flagInline != 0 {
		if size <= int64(f.opt.InlineMax) {
			if size <= int64(len(in.inline)) {
				in.inline = in.inline[:size:size]
			} else {
				in.inline = append(in.inline, make([]byte, size-int64(len(in.inline)))...)
			}
			in.d.Size = uint64(size)
			f.touchContent(in)
			return nil
		}
		if err := f.spillLocked(in); err != nil {
			return err
		}
	}
	if size <= int64(f.opt.InlineMax) {
		// Small again (hg truncates revlogs on rollback): back inline, so
		// the data file bytes become reclaimable.
		buf := make([]byte, size)
		n := min(size, int64(in.d.Size))
		if _, err := f.readAtLocked(in, buf[:n], 0); err != nil {
			return err
		}
		old := in.exts
		in.inline = buf
		in.exts = nil
		in.d.Flags |= flagInline
		in.d.Size = uint64(size)
		f.touchContent(in)
		f.data.release(old)
		return nil
	}
	old := overlapping(in.exts, size, maxFileSize)
	in.exts = cutExtents(in.exts, size)
	in.d.Size = uint64(size)
	f.touchContent(in)
	f.data.release(old)
	return nil
}

// touchContent records a content change: mtime and ctime now, queued.
func (f *FS) touchContent(in *inode) {
	now := time.Now().UnixNano()
	in.d.Mtime, in.d.Ctime = now, now
	in.contentDirty = true
	f.markDirtyLocked(in)
}

// putExtent replaces the range of n in exts with n, merging with the
// previous extent when both are whole runs, contiguous in the file and on
// disk, and the merged run stays within maxRunLen. Pieces of a cut extent
// keep its run (see extent).
func putExtent(exts []extent, n extent) []extent {
	if len(exts) == 0 || exts[len(exts)-1].end() <= n.Off {
		if len(exts) > 0 {
			last := &exts[len(exts)-1]
			if last.end() == n.Off && last.File == n.File && last.FileOff+last.Len == n.FileOff &&
				last.whole() && n.whole() && last.Len+n.Len <= maxRunLen {
				last.Sum = crc32Combine(last.Sum, n.Sum, n.Len)
				last.Len += n.Len
				last.Run = last.Len
				return exts
			}
		}
		return append(exts, n)
	}
	out := make([]extent, 0, len(exts)+2)
	placed := false
	for _, e := range exts {
		if e.end() <= n.Off {
			out = append(out, e)
			continue
		}
		if e.Off >= n.end() {
			if !placed {
				out = append(out, n)
				placed = true
			}
			out = append(out, e)
			continue
		}
		// e overlaps n: keep the parts outside n.
		if e.Off < n.Off {
			left := e
			left.Len = n.Off - e.Off
			out = append(out, left)
		}
		if !placed {
			out = append(out, n)
			placed = true
		}
		if e.end() > n.end() {
			d := n.end() - e.Off
			right := e
			right.Off, right.FileOff, right.Len, right.Head = n.end(), e.FileOff+d, e.Len-d, e.Head+d
			out = append(out, right)
		}
	}
	if !placed {
		out = append(out, n)
	}
	return out
}

// cutExtents drops everything at or past size.
func cutExtents(exts []extent, size int64) []extent {
	out := exts[:0:0]
	for _, e := range exts {
		if e.Off >= size {
			break
		}
		if e.end() > size {
			e.Len = size - e.Off
		}
		out = append(out, e)
	}
	return out
}
