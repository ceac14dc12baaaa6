package fsnode

// Data files: data-NNNN (NNNN = id, decimal, at least 4 digits), append
// only. Space is reserved under dataFiles.mu and written with pwrite
// outside it, so concurrent writers append in parallel. The index records
// each file's committed length at every commit; bytes past it are garbage
// from an interrupted run and are cut off on Open.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

type dataFile struct {
	id   uint32
	f    *os.File
	size int64 // append cursor, guarded by dataFiles.mu
	// written is set (after the pwrite, so that a concurrent sync cannot
	// clear it too early) when bytes were written since the last fsync.
	written bool
	// pending counts sink reservations not yet linked into an inode;
	// Compact leaves such a file alone.
	pending atomic.Int64
	// live counts the bytes of this file that inodes' extents refer to,
	// in memory (committed or not; see the accounting in compact.go).
	// size - live is dead: overwritten, truncated, deleted, or reserved
	// and not yet used.
	live atomic.Int64
}

type dataFiles struct {
	dir string
	max int64

	mu    sync.RWMutex
	files map[uint32]*dataFile
	cur   *dataFile
	// created: a data file was created since the directory was last
	// synced, so the next durable commit must fsync the directory too.
	created bool
	// budget is how many bytes may still be appended before the disk's
	// free space is looked at again (see reserve).
	budget int64
}

// Free space kept for the index. Data files stop growing (ENOSPC) while
// the disk holding the cache has less than indexHeadroom free, so that
// the commit recording what was written, and the commits of the deletes
// and the compaction that give the space back, still find room: without
// it a write that filled the disk left the index unable to commit, and
// the cache read-only until remounted. The headroom is 1/32 of the
// disk, at least 2 MiB and at most 64 MiB; free space is looked at once
// per budgetCheck bytes appended (one statfs per 64 MiB written), and
// at every append once the disk is that full.
const (
	minHeadroom = 2 << 20
	maxHeadroom = 64 << 20
	budgetCheck = 64 << 20
)

func indexHeadroom(diskBytes int64) int64 {
	return min(max(diskBytes/32, minHeadroom), maxHeadroom)
}

// refreshBudgetLocked reads the disk's free space and sets the budget;
// it fails with ENOSPC when n more bytes would eat into the headroom.
// The budget is at most budgetCheck, or n where one reservation is
// larger (a sink file or a fallocate of more than 64 MiB: without that,
// any such file failed with ENOSPC on an empty disk). Where the
// platform reports no free space, nothing is held back.
func (d *dataFiles) refreshBudgetLocked(n int64) error {
	st, err := diskStatfs(d.dir)
	if err != nil {
		d.budget = math.MaxInt64
		return nil
	}
	unit := int64(st.Frsize)
	if unit == 0 {
		unit = int64(st.Bsize)
	}
	avail := int64(st.Bavail) * unit
	room := avail - indexHeadroom(int64(st.Blocks)*unit)
	d.budget = min(room, max(budgetCheck, n))
	if room < n {
		return fmt.Errorf("fsnode: %d bytes free on the disk of %s, kept for the index: %w", avail, d.dir, syscall.ENOSPC)
	}
	return nil
}

func dataFileName(id uint32) string { return fmt.Sprintf("data-%04d", id) }

func parseDataFileName(name string) (uint32, bool) {
	s, ok := strings.CutPrefix(name, "data-")
	if !ok || len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || dataFileName(uint32(n)) != name {
		return 0, false
	}
	return uint32(n), true
}

// openDataFiles opens the data files the index lists, cutting each to its
// committed length, and deletes data files the index does not list (made
// after the last commit, or dropped by a compaction that crashed before
// deleting them).
func openDataFiles(dir string, committed map[uint32]int64, opt Options) (*dataFiles, error) {
	d := &dataFiles{dir: dir, max: opt.DataFileMax, files: make(map[uint32]*dataFile)}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if id, ok := parseDataFileName(e.Name()); ok {
			if _, listed := committed[id]; !listed {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return nil, err
				}
			}
		}
	}
	ids := make([]uint32, 0, len(committed))
	for id := range committed {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		path := filepath.Join(dir, dataFileName(id))
		fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			d.close()
			return nil, err
		}
		df := &dataFile{id: id, f: fh, size: committed[id]}
		d.files[id] = df
		st, err := fh.Stat()
		if err != nil {
			d.close()
			return nil, err
		}
		// Shorter than committed happens when space was reserved but not
		// written before a crash: nothing committed refers to it.
		if st.Size() != committed[id] {
			if err := fh.Truncate(committed[id]); err != nil {
				d.close()
				return nil, fmt.Errorf("fsnode: cutting %s to its committed length: %w", path, err)
			}
			df.written = true
		}
		d.cur = df
	}
	return d, nil
}

// reserve returns where to write n bytes: a data file and an offset. The
// range is this caller's; it writes it with writeAt.
func (d *dataFiles) reserve(n int64) (*dataFile, int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.budget < n {
		if err := d.refreshBudgetLocked(n); err != nil {
			return nil, 0, err
		}
	}
	d.budget -= n
	if d.cur == nil || (d.cur.size > 0 && d.cur.size+n > d.max) {
		if err := d.newFileLocked(); err != nil {
			return nil, 0, err
		}
	}
	df := d.cur
	off := df.size
	df.size += n
	return df, off, nil
}

// rotate starts a new current data file if id is still the current one
// and not empty, so that compaction can take the old one.
func (d *dataFiles) rotate(id uint32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil || d.cur.id != id || d.cur.size == 0 {
		return nil
	}
	return d.newFileLocked()
}

// wrote records that bytes were written to df, for the next sync.
func (d *dataFiles) wrote(df *dataFile) {
	d.mu.Lock()
	df.written = true
	d.mu.Unlock()
}

func (d *dataFiles) newFileLocked() error {
	var id uint32 = 1
	for k := range d.files {
		if k >= id {
			id = k + 1
		}
	}
	path := filepath.Join(d.dir, dataFileName(id))
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("fsnode: new data file: %w", err)
	}
	df := &dataFile{id: id, f: fh}
	d.files[id] = df
	d.cur = df
	d.created = true
	return nil
}

// appendData writes p at a freshly reserved place and returns it.
func (d *dataFiles) appendData(p []byte) (uint32, int64, error) {
	df, off, err := d.reserve(int64(len(p)))
	if err != nil {
		return 0, 0, err
	}
	if _, err := df.f.WriteAt(p, off); err != nil {
		return 0, 0, fmt.Errorf("fsnode: writing %s at %d: %w", dataFileName(df.id), off, err)
	}
	d.wrote(df)
	return df.id, off, nil
}

func (d *dataFiles) get(id uint32) *dataFile {
	d.mu.RLock()
	df := d.files[id]
	d.mu.RUnlock()
	return df
}

// readAt reads len(p) bytes of data file id at off.
func (d *dataFiles) readAt(id uint32, p []byte, off int64) error {
	df := d.get(id)
	if df == nil {
		return fmt.Errorf("%w: data file %d is not open", ErrCorrupt, id)
	}
	n, err := df.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	return fmt.Errorf("%w: reading %s at %d: %v", ErrCorrupt, dataFileName(id), off, err)
}

// lengths returns each data file's current length (what the next commit
// records).
func (d *dataFiles) lengths() map[uint32]int64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	m := make(map[uint32]int64, len(d.files))
	for id, df := range d.files {
		m[id] = df.size
	}
	return m
}

// sync fsyncs every data file written since its last sync, and the
// directory if a data file was created. Called before the index commit
// that references the bytes.
func (d *dataFiles) sync() error {
	d.mu.Lock()
	var todo []*dataFile
	for _, df := range d.files {
		if df.written {
			df.written = false
			todo = append(todo, df)
		}
	}
	created := d.created
	d.created = false
	d.mu.Unlock()
	for _, df := range todo {
		if err := fdatasync(df.f); err != nil {
			d.mu.Lock()
			df.written = true
			d.mu.Unlock()
			return fmt.Errorf("fsnode: fsync %s: %w", dataFileName(df.id), err)
		}
	}
	if created {
		if err := syncDir(d.dir); err != nil {
			d.mu.Lock()
			d.created = true
			d.mu.Unlock()
			return err
		}
	}
	return nil
}

// startWriteback asks the kernel to start writing the data files out
// without waiting, so that a later fsync (an ingest's Finish) has less
// left to do. Only a hint: errors are the fsync's to report.
func (d *dataFiles) startWriteback(extra *os.File) {
	d.mu.RLock()
	files := make([]*os.File, 0, len(d.files)+1)
	for _, df := range d.files {
		if df.written {
			files = append(files, df.f)
		}
	}
	d.mu.RUnlock()
	if extra != nil {
		files = append(files, extra)
	}
	for _, f := range files {
		startWriteback(f)
	}
}

// addLive counts n more (or, negative, fewer) live bytes in data file id.
func (d *dataFiles) addLive(id uint32, n int64) {
	if df := d.get(id); df != nil {
		df.live.Add(n)
	}
}

// release counts the bytes of exts as dead. Callers release after the
// inode that dropped them is marked dirty, so that a data file seen
// with no live bytes is dropped in a batch that also commits the inode
// (see compact.go).
func (d *dataFiles) release(exts []extent) {
	for _, e := range exts {
		d.addLive(e.File, -e.Len)
	}
}

// space returns the live and dead bytes of all data files.
func (d *dataFiles) space() (live, dead int64) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, df := range d.files {
		l := df.live.Load()
		live += l
		dead += df.size - l
	}
	return live, dead
}

func (d *dataFiles) count() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.files)
}

func (d *dataFiles) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var err error
	for _, df := range d.files {
		if cerr := df.f.Close(); err == nil {
			err = cerr
		}
	}
	d.files = map[uint32]*dataFile{}
	d.cur = nil
	return err
}
