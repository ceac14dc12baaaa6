package fsnode

// Deferred listings: the virtual files of a directory, recorded as one
// index record of the directory instead of an inode, a reference and a
// directory entry each, and made into those (ordinary virtual files,
// virtual.go) when the directory is first loaded.
//
// A virtual checkout made every working file's two records (inode,
// reference) and its entry's two (by name, by cookie) at clone time: on
// the bench's 20,000-file store, 80,000 bbolt puts and 20,000 inodes, most of what the checkout added to the
// clone. Deferred, the clone writes one record per directory (202 there)
// and the mount makes a directory's files when something first looks in
// it; the files' inode numbers are given then. A directory nobody opens
// costs its record alone. Loading writes: even a command that only
// reads (hgfs fsck reading the repository through the cache) makes the
// files of the directories it passes, as a mount would. Measured (2026-12-06, that store's stream
// bundle, hgfs clone --mount, medians of 8 alternated runs): 245 ms
// with every file made, 169 deferred, 105 with -U; what is left over
// -U is learning each file's exact size (worktree.Sizes). The first hg
// status after the clone loads every directory: 361 against 331 ms (6
// alternated pairs); the next ones cost the same either way.
//
// Until then the directory is unloaded (dirState.pending is set), whatever
// else it holds: every path that reads or changes a directory's entries
// loads it first (loadDir), so no call sees the directory without its
// deferred files. Loading makes them with the listing's attributes
// (permissions, size, times, owner: what the dirstate the checkout wrote
// records), adds their entries, and queues the directory to drop its
// record: the files, their entries and the record's deletion are
// committed in one batch, so a crash before it leaves the listing, and
// after it the files. Loading is not a change of the working copy: it
// leaves the directory's times alone and tells no Watch.
//
// The files' references name their repository path by the listing's
// prefix, the directory's path when the checkout made it: a directory
// moved before it is loaded still names the right revisions.

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// vdirRec is a decoded deferred listing.
//
//	off len
//	0   1   record version (1)
//	1   8   mtime of every file (unix ns)
//	9   8   ctime and atime of every file (unix ns)
//	17  4   uid
//	21  4   gid
//	25  4   count of files
//	29  ..  uvarint length, then the prefix: the directory's repository
//	        path ("" for the root)
//	then count x: uvarint length, name; u16 permission bits; uvarint
//	        size; filenode(20)
//
// Names ascend strictly (bytewise), so a listing names no file twice.
type vdirRec struct {
	mtime, ctime int64
	uid, gid     uint32
	prefix       string
	ents         []vdirEnt
}

type vdirEnt struct {
	name string
	perm uint16
	size uint64
	node [20]byte
}

const (
	vdirRecordVersion = 1
	vdirHeaderLen     = 29
	vdirMinEntLen     = 1 + 1 + 2 + 1 + 20
)

// path is the repository path of e, a file of r.
func (r *vdirRec) path(e *vdirEnt) string {
	if r.prefix == "" {
		return e.name
	}
	return r.prefix + "/" + e.name
}

// encodeVdir encodes r in a slice of exactly its length: a deferred
// directory keeps it until the directory loads (dirState.pending).
func encodeVdir(r *vdirRec) []byte {
	n := vdirHeaderLen + uvarintLen(uint64(len(r.prefix))) + len(r.prefix)
	for i := range r.ents {
		e := &r.ents[i]
		n += uvarintLen(uint64(len(e.name))) + len(e.name) + 2 + uvarintLen(e.size) + 20
	}
	b := make([]byte, vdirHeaderLen, n)
	b[0] = vdirRecordVersion
	binary.BigEndian.PutUint64(b[1:], uint64(r.mtime))
	binary.BigEndian.PutUint64(b[9:], uint64(r.ctime))
	binary.BigEndian.PutUint32(b[17:], r.uid)
	binary.BigEndian.PutUint32(b[21:], r.gid)
	binary.BigEndian.PutUint32(b[25:], uint32(len(r.ents)))
	b = binary.AppendUvarint(b, uint64(len(r.prefix)))
	b = append(b, r.prefix...)
	for i := range r.ents {
		e := &r.ents[i]
		b = binary.AppendUvarint(b, uint64(len(e.name)))
		b = append(b, e.name...)
		b = binary.BigEndian.AppendUint16(b, e.perm)
		b = binary.AppendUvarint(b, e.size)
		b = append(b, e.node[:]...)
	}
	return b
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// vdirCount is the count of files a listing's header gives, without
// decoding it (VirtualStats), or 0 if the header is short.
func vdirCount(b []byte) int64 {
	if len(b) < vdirHeaderLen {
		return 0
	}
	return int64(binary.BigEndian.Uint32(b[25:]))
}

// decodeVdir decodes a deferred listing, checking every bound before
// it allocates, so that a damaged record is ErrCorrupt, never a panic
// or an allocation its length does not pay for.
func decodeVdir(b []byte) (*vdirRec, error) {
	bad := func(format string, a ...any) (*vdirRec, error) {
		return nil, fmt.Errorf("%w: deferred listing: %s", ErrCorrupt, fmt.Sprintf(format, a...))
	}
	if len(b) < vdirHeaderLen {
		return bad("%d bytes", len(b))
	}
	if b[0] != vdirRecordVersion {
		return bad("record version %d", b[0])
	}
	r := &vdirRec{
		mtime: int64(binary.BigEndian.Uint64(b[1:])),
		ctime: int64(binary.BigEndian.Uint64(b[9:])),
		uid:   binary.BigEndian.Uint32(b[17:]),
		gid:   binary.BigEndian.Uint32(b[21:]),
	}
	count := binary.BigEndian.Uint32(b[25:])
	rest := b[vdirHeaderLen:]
	if uint64(count) > uint64(len(rest)/vdirMinEntLen) {
		return bad("%d files in %d bytes", count, len(rest))
	}
	str := func(max int) (string, bool) {
		n, k := uvarint(rest)
		if k <= 0 || n > uint64(max) || n > uint64(len(rest)-k) {
			return "", false
		}
		s := string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
		return s, true
	}
	var ok bool
	if r.prefix, ok = str(maxVirtualPath); !ok {
		return bad("prefix")
	}
	if !validVdirPrefix(r.prefix) {
		return bad("prefix %q", r.prefix)
	}
	r.ents = make([]vdirEnt, count)
	for i := range r.ents {
		e := &r.ents[i]
		if e.name, ok = str(maxNameLen); !ok {
			return bad("file %d: name", i)
		}
		if err := checkNewName(e.name); err != nil {
			return bad("file %d: name %q", i, e.name)
		}
		if i > 0 && e.name <= r.ents[i-1].name {
			return bad("file %q after %q", e.name, r.ents[i-1].name)
		}
		n := len(e.name) // the path's length, counted, not built
		if r.prefix != "" {
			n += len(r.prefix) + 1
		}
		if n > maxVirtualPath {
			return bad("file %q: path of %d bytes", e.name, n)
		}
		if len(rest) < 2 {
			return bad("file %q: short", e.name)
		}
		e.perm = binary.BigEndian.Uint16(rest)
		rest = rest[2:]
		if e.perm&^07777 != 0 {
			return bad("file %q: mode %#o", e.name, e.perm)
		}
		size, k := uvarint(rest)
		if k <= 0 || size > maxFileSize {
			return bad("file %q: size", e.name)
		}
		e.size = size
		rest = rest[k:]
		if len(rest) < 20 {
			return bad("file %q: short", e.name)
		}
		copy(e.node[:], rest)
		rest = rest[20:]
	}
	if len(rest) != 0 {
		return bad("%d bytes after the last file", len(rest))
	}
	return r, nil
}

// validVdirPrefix says whether p can be a listing's prefix: "" (the
// root) or names, each one a file could have, joined by "/".
func validVdirPrefix(p string) bool {
	if p == "" {
		return true
	}
	for _, c := range strings.Split(p, "/") {
		if checkNewName(c) != nil {
			return false
		}
	}
	return true
}

// uvarint is binary.Uvarint of a minimal encoding only (k <= 0
// otherwise), so that a listing has one encoding.
func uvarint(b []byte) (uint64, int) {
	n, k := binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, -1
	}
	return n, k
}

// readVdir returns ino's deferred listing in the index, or nil.
func readVdir(tx *bolt.Tx, ino Ino) (*vdirRec, error) {
	b := tx.Bucket(bucketVdirs)
	if b == nil {
		return nil, nil
	}
	v := b.Get(inoKey(ino))
	if v == nil {
		return nil, nil
	}
	r, err := decodeVdir(v)
	if err != nil {
		return nil, fmt.Errorf("directory %d: %w", ino, err)
	}
	return r, nil
}

// putVdir writes (rec non-nil) or deletes a directory's deferred
// listing in a commit (putVersioned: the first raises the format
// version to 4).
func putVdir(tx *bolt.Tx, k []byte, rec []byte, raised *bool) error {
	return putVersioned(tx, bucketVdirs, vdirFormatVersion, k, rec, raised)
}

// populateLocked makes dir's deferred files, r, into virtual files in
// ds, its entries: all of them, or none if a name is taken (a damaged
// index). f.tree is held for writing.
func (f *FS) populateLocked(dir *inode, ds *dirState, r *vdirRec) error {
	for i := range r.ents {
		if ds.entries[r.ents[i].name] != nil {
			return fmt.Errorf("%w: directory %d: deferred file %q is already an entry: %w", ErrCorrupt, dir.ino, r.ents[i].name, syscall.EIO)
		}
	}
	for i := range r.ents {
		e := &r.ents[i]
		in := f.newInode(syscall.S_IFREG|uint32(e.perm), r.uid, r.gid, 0)
		in.mu.Lock()
		in.d.Atime, in.d.Mtime, in.d.Ctime = r.ctime, r.mtime, r.ctime
		f.setRefLocked(in, VirtualRef{Node: e.node, Path: r.path(e)}, e.size)
		f.queueLocked(in)
		in.mu.Unlock()
		f.addEntry(ds, e.name, in)
	}
	ds.pending, ds.vdirPut, ds.vdirDrop = nil, nil, true
	dir.mu.Lock()
	f.queueLocked(dir)
	dir.mu.Unlock()
	return nil
}

// DeferVirtuals makes files virtual as CreateVirtuals does, except that
// the files of a directory that holds none of their names yet, have one
// modification time and reference their own paths are recorded as the
// directory's deferred listing instead of made (see the top of this
// file); the others are made as CreateVirtuals makes them. Every file's
// arguments are checked, and its directories made, before any file is.
// A checkout hands it its whole working copy at once. It returns how
// many files it deferred.
//
// files is a list rather than a slice so that a caller with its own
// record of the files (a checkout's manifest and sizes) need not build
// this package's: at 250,000 files that copy was 23 MB of the clone's
// peak heap.
func (s *Sink) DeferVirtuals(files VirtualList) (int, error) {
	type group struct {
		dir   Ino
		path  string
		files []int32
	}
	if files.Len() > math.MaxInt32 {
		return 0, fmt.Errorf("fsnode: %d deferred files: %w", files.Len(), syscall.EFBIG)
	}
	groups := map[string]*group{}
	var order []*group
	for i := range files.Len() {
		v := files.At(i)
		if err := v.check(); err != nil {
			return 0, err
		}
		dirPath, base := splitDir(v.Name)
		if err := checkNewName(base); err != nil {
			return 0, fmt.Errorf("fsnode: sink file %q: %w", v.Name, err)
		}
		g := groups[dirPath]
		if g == nil {
			// Every directory first, so that making one never loads
			// a directory already deferred.
			ino, err := s.dir(dirPath)
			if err != nil {
				return 0, fmt.Errorf("fsnode: sink file %q: %w", v.Name, err)
			}
			g = &group{dir: ino, path: dirPath}
			groups[dirPath] = g
			order = append(order, g)
		}
		g.files = append(g.files, int32(i))
	}
	f := s.f
	now := time.Now().UnixNano()
	var eager []NewVirtual
	var made []string // deferred; CreateVirtuals records the eager ones
	if err := f.c.admit(s.ctx); err != nil {
		return 0, err
	}
	deferred, err := func() (int, error) {
		n := 0
		f.tree.Lock()
		defer f.tree.Unlock()
		// Every directory checked before any is changed: a failure
		// leaves nothing deferred.
		dirs := make([]*inode, len(order))
		for i, g := range order {
			dir, err := f.getInode(g.dir)
			if err != nil {
				return 0, fmt.Errorf("fsnode: sink directory %q: %w", g.path, err)
			}
			if !dir.isDir() || dir.d.Nlink == 0 {
				return 0, fmt.Errorf("fsnode: sink directory %q: %w", g.path, syscall.ENOTDIR)
			}
			dirs[i] = dir
		}
		for i, g := range order {
			dir := dirs[i]
			if rec := deferrable(f, dir, g.path, files, g.files); rec != nil {
				rec.ctime, rec.uid, rec.gid = now, f.uid, f.gid
				b := encodeVdir(rec)
				dir.dir.pending, dir.dir.vdirPut, dir.dir.vdirDrop = b, b, false
				// Files added, as CreateVirtuals adds them: the
				// directory's times change, and a Watch hears of it.
				f.touchDir(dir)
				n += len(rec.ents)
				if s.tracking() {
					for _, i := range g.files {
						made = append(made, files.At(int(i)).Name)
					}
				}
				continue
			}
			for _, i := range g.files {
				eager = append(eager, files.At(int(i)))
			}
		}
		return n, nil
	}()
	if err != nil {
		return 0, err
	}
	s.track(made...)
	if len(eager) > 0 {
		return deferred, s.CreateVirtuals(eager)
	}
	return deferred, nil
}

// deferrable returns the deferred listing of the files idx (of files)
// in dir, at path, or nil if they must be made: dir is deferred already
// (its entries unknown here) or cannot be read, path is no prefix a
// listing can record, dir holds one of the names, or a file's reference
// or time is not the listing's. f.tree is held for writing.
func deferrable(f *FS, dir *inode, path string, files VirtualList, idx []int32) *vdirRec {
	if dir.dir == nil {
		// Not read since Open, or one whose entries an ingest's commit
		// dropped (evictDirsLocked): its entries are the index's, read
		// back (a committed deferred listing's files made, which the
		// names below are then checked against). An error makes the
		// files.
		if err := f.loadDir(dir); err != nil {
			return nil
		}
	}
	if dir.dir.pending != nil || !validVdirPrefix(path) {
		// validVdirPrefix: "/a" from a name "//a/x", which
		// CreateVirtuals takes as a/x, and decodeVdir would refuse.
		return nil
	}
	rec := &vdirRec{prefix: path, ents: make([]vdirEnt, 0, len(idx))}
	for k, i := range idx {
		v := files.At(int(i))
		_, base := splitDir(v.Name)
		mt := v.Mtime.UnixNano()
		if v.Mtime.IsZero() || k > 0 && mt != rec.mtime {
			return nil
		}
		rec.mtime = mt
		if dir.dir.entries[base] != nil {
			return nil
		}
		e := vdirEnt{name: base, perm: uint16(v.Perm), size: uint64(v.Size), node: v.Ref.Node}
		if rec.path(&e) != v.Ref.Path {
			return nil
		}
		rec.ents = append(rec.ents, e)
	}
	sort.Slice(rec.ents, func(i, j int) bool { return rec.ents[i].name < rec.ents[j].name })
	for i := 1; i < len(rec.ents); i++ {
		if rec.ents[i].name == rec.ents[i-1].name {
			return nil // named twice: made in turn, the last one stays
		}
	}
	return rec
}
