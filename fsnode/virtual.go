package fsnode

// Virtual files: a regular file whose contents are a file revision of
// the repository the cache holds, named by a reference (filenode and
// path) instead of stored. A virtual file is an ordinary inode (record,
// size, mode, times, links, name) with flagVirtual and a record in the
// virtual bucket; only its contents come from elsewhere, through the
// Resolver the mount sets (hgview's reconstruction, with its caches).
//
// Copy on write: the first change of the contents (a write, a
// truncation to a size above 0, fallocate) first copies the revision's
// bytes into the cache as an ordinary file's (inline or extents) and
// drops the reference, keeping the file's times; a truncation to 0 only
// drops it. Everything else (rename, link, chmod, chown, times,
// extended attributes) moves no bytes: the reference stays with the
// inode. What was materialized is committed as any write is, so it
// survives unmount, remount and kill -9.
//
// Reads of a virtual file resolve its reference with no lock held (the
// resolver reads the repository through this same cache), then serve
// the bytes if the reference is still the inode's; the bytes must be as
// many as the inode's size, or the read is EIO (a damaged reference).

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// VirtualRef names a virtual file's contents: the file revision Node of
// the repository's file Path (slash-separated, as in a manifest).
type VirtualRef struct {
	Node [20]byte
	Path string
}

// maxVirtualPath bounds a reference's path (hg's store names are
// shorter; the bound keeps records small).
const maxVirtualPath = 4096

// Encode returns the reference's record: the node, then the path.
func (r VirtualRef) Encode() []byte {
	b := make([]byte, 0, 20+len(r.Path))
	b = append(b, r.Node[:]...)
	return append(b, r.Path...)
}

// DecodeVirtualRef decodes a reference's record (Encode).
func DecodeVirtualRef(b []byte) (VirtualRef, error) { return decodeVirtualRef(b) }

func decodeVirtualRef(b []byte) (VirtualRef, error) {
	var r VirtualRef
	switch {
	case b == nil:
		return r, fmt.Errorf("%w: virtual record missing", ErrCorrupt)
	case len(b) < 21:
		return r, fmt.Errorf("%w: virtual record is %d bytes", ErrCorrupt, len(b))
	case len(b)-20 > maxVirtualPath:
		return r, fmt.Errorf("%w: virtual record's path is %d bytes, at most %d", ErrCorrupt, len(b)-20, maxVirtualPath)
	}
	copy(r.Node[:], b)
	r.Path = string(b[20:])
	for i := 0; i < len(r.Path); i++ {
		if r.Path[i] == 0 {
			return r, fmt.Errorf("%w: virtual record's path holds a NUL byte", ErrCorrupt)
		}
	}
	return r, nil
}

// Resolver returns the contents a reference names. The slice may be
// shared: the cache never modifies it. It is called with no lock of the
// cache held and may read the cache.
type Resolver func(VirtualRef) ([]byte, error)

// virtState is the cache's part in virtual files.
type virtState struct {
	resolver atomic.Pointer[Resolver]
	// version is the index's format version; it becomes
	// virtualFormatVersion with the commit of the first virtual record.
	version atomic.Uint32
	// materialized counts copies made since Open.
	materialized atomic.Int64
}

// SetResolver sets the function that reads virtual files' contents.
// Until it is set, reading or changing a virtual file's contents is
// EIO.
func (f *FS) SetResolver(r Resolver) { f.virt.resolver.Store(&r) }

// resolveRef returns ref's contents, which must be size bytes.
func (f *FS) resolveRef(ino Ino, ref *VirtualRef, size uint64) ([]byte, error) {
	rp := f.virt.resolver.Load()
	if rp == nil {
		return nil, fmt.Errorf("inode %d: virtual file and no resolver: %w", ino, syscall.EIO)
	}
	data, err := (*rp)(*ref)
	if err != nil {
		log.Printf("hgfs: inode %d: reading %s@%x: %v", ino, ref.Path, ref.Node, err)
		return nil, fmt.Errorf("inode %d: %w: %w", ino, err, syscall.EIO)
	}
	if uint64(len(data)) != size {
		log.Printf("hgfs: inode %d: %s@%x has %d bytes, the file's size is %d", ino, ref.Path, ref.Node, len(data), size)
		return nil, fmt.Errorf("inode %d: %s@%x has %d bytes, size %d: %w", ino, ref.Path, ref.Node, len(data), size, syscall.EIO)
	}
	return data, nil
}

// readIn reads regular file in at off; the caller holds no lock of in.
// A virtual file's reference is resolved without the lock and its bytes
// served if the reference is still the inode's.
func (f *FS) readIn(in *inode, buf []byte, off int64) (int, error) {
	for {
		in.mu.RLock()
		if in.reclaimed {
			in.mu.RUnlock()
			return 0, syscall.ENOENT
		}
		ref, size := in.vref, in.d.Size
		if ref == nil {
			n, err := f.readAtLocked(in, buf, off)
			in.mu.RUnlock()
			return n, err
		}
		in.mu.RUnlock()
		if off < 0 {
			return 0, syscall.EINVAL
		}
		if uint64(off) >= size {
			return 0, nil
		}
		data, err := f.resolveRef(in.ino, ref, size)
		if err != nil {
			return 0, err
		}
		in.mu.RLock()
		if in.vref == ref {
			n := copy(buf, data[off:])
			in.mu.RUnlock()
			return n, nil
		}
		in.mu.RUnlock() // changed meanwhile: again
	}
}

// lockMaterialized write-locks in.mu with in not virtual, copying its
// revision's bytes into the cache first if it is. The caller holds no
// lock of in, nor f.tree (the resolver reads the cache).
func (f *FS) lockMaterialized(in *inode) error {
	for {
		in.mu.Lock()
		ref, size := in.vref, in.d.Size
		if ref == nil {
			return nil
		}
		in.mu.Unlock()
		data, err := f.resolveRef(in.ino, ref, size)
		if err != nil {
			return err
		}
		in.mu.Lock()
		if in.vref == ref {
			err := f.fillLocked(in, data)
			if err != nil {
				in.mu.Unlock()
				return err
			}
			return nil
		}
		in.mu.Unlock() // changed meanwhile: again
	}
}

// materializeIno copies regular file ino's revision into the cache if it
// is virtual. The caller holds no lock.
func (f *FS) materializeIno(ino Ino) error {
	f.tree.RLock()
	in, err := f.getInode(ino)
	if err == nil && in.typ() == syscall.S_IFREG {
		in.pins.Add(1) // as inodeForIO
	}
	f.tree.RUnlock()
	if err != nil || in.typ() != syscall.S_IFREG {
		return nil // the caller's own checks report it
	}
	defer in.pins.Add(-1)
	if err := f.lockMaterialized(in); err != nil {
		return err
	}
	in.mu.Unlock()
	return nil
}

// fillLocked makes virtual file in an ordinary one holding data (its
// revision's bytes), keeping its times; in.mu is held for writing.
func (f *FS) fillLocked(in *inode, data []byte) error {
	ref, flags, size := in.vref, in.d.Flags, in.d.Size
	mtime, ctime := in.d.Mtime, in.d.Ctime
	f.dropRefLocked(in)
	if _, err := f.writeAtLocked(in, data, 0); err != nil {
		// Nothing was linked (a failed write adds no extent): virtual
		// again, as before.
		in.vref, in.d.Flags, in.d.Size, in.inline, in.exts = ref, flags, size, nil, nil
		in.d.Mtime, in.d.Ctime = mtime, ctime
		return err
	}
	in.d.Mtime, in.d.Ctime = mtime, ctime
	in.contentDirty = true
	f.markDirtyLocked(in)
	f.virt.materialized.Add(1)
	return nil
}

// dropRefLocked makes virtual file in an empty ordinary one (not
// queued: the caller records the change); in.mu is held for writing.
func (f *FS) dropRefLocked(in *inode) {
	in.vref = nil
	in.d.Flags = in.d.Flags&^flagVirtual | flagInline
	in.inline = []byte{}
	in.exts = nil
	in.d.Size = 0
}

// setRefLocked makes regular file in virtual: its contents ref, of size
// bytes. in.mu is held for writing; the caller queues the change, then
// releases the extents returned (see dataFiles.release).
func (f *FS) setRefLocked(in *inode, ref VirtualRef, size uint64) (old []extent) {
	old = in.exts
	in.vref = &ref
	in.d.Flags = in.d.Flags&^flagInline | flagVirtual
	in.inline = nil
	in.exts = nil
	in.d.Size = size
	in.contentDirty = true
	return old
}

// SetVirtual makes regular file ino virtual: its contents become the
// revision ref names, size bytes, whatever it held before dropped; its
// mtime becomes mtime (the zero time: now), its ctime now. It is how a
// working copy moves to another revision without writing (hgfs update
// on a mount).
func (f *FS) SetVirtual(ctx context.Context, ino Ino, ref VirtualRef, size uint64, mtime time.Time) (Attr, error) {
	if size > maxFileSize {
		return Attr{}, syscall.EFBIG
	}
	if len(ref.Path) == 0 || len(ref.Path) > maxVirtualPath {
		return Attr{}, syscall.EINVAL
	}
	if err := f.c.admit(ctx); err != nil {
		return Attr{}, err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return Attr{}, err
	}
	switch in.typ() {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return Attr{}, syscall.EISDIR
	default:
		return Attr{}, syscall.EINVAL
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.reclaimed {
		return Attr{}, syscall.ENOENT
	}
	old := f.setRefLocked(in, ref, size)
	now := time.Now().UnixNano()
	in.d.Mtime, in.d.Ctime = now, now
	if !mtime.IsZero() {
		in.d.Mtime = mtime.UnixNano()
	}
	f.markDirtyLocked(in)
	f.data.release(old)
	return in.attrLocked(), nil
}

// Virtual returns regular file ino's reference, and false if it is not
// virtual.
func (f *FS) Virtual(ctx context.Context, ino Ino) (VirtualRef, bool, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return VirtualRef{}, false, err
	}
	in.mu.RLock()
	defer in.mu.RUnlock()
	if in.vref == nil {
		return VirtualRef{}, false, nil
	}
	return *in.vref, true, nil
}

// VirtualStats counts virtual files: those the index holds (committed)
// and the copies made since Open.
type VirtualStats struct {
	Virtual, Materialized int64
}

// VirtualStats counts the committed virtual records and deferred files
// (vdir.go), and the copies made since Open.
func (f *FS) VirtualStats() VirtualStats {
	st := VirtualStats{Materialized: f.virt.materialized.Load()}
	if f.virt.version.Load() < virtualFormatVersion {
		return st
	}
	_ = f.view("virtual stats", func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketVirtual); b != nil {
			st.Virtual = int64(b.Stats().KeyN)
		}
		if b := tx.Bucket(bucketVdirs); b != nil {
			return b.ForEach(func(_, v []byte) error {
				st.Virtual += vdirCount(v)
				return nil
			})
		}
		return nil
	})
	return st
}

// CreateVirtual makes name (missing parent directories too) a virtual
// file of size bytes whose contents are the revision ref names, with
// permission bits perm and modification time mtime (the zero time:
// now), replacing a file of that name: the sink's way to check out a
// working copy without writing it.
func (s *Sink) CreateVirtual(name string, size int64, perm uint32, mtime time.Time, ref VirtualRef) error {
	return s.CreateVirtuals([]NewVirtual{{Name: name, Size: size, Perm: perm, Mtime: mtime, Ref: ref}})
}

// NewVirtual is one file of CreateVirtuals: CreateVirtual's arguments.
type NewVirtual struct {
	Name  string
	Size  int64
	Perm  uint32
	Mtime time.Time
	Ref   VirtualRef
}

// VirtualList is the files DeferVirtuals makes: Len of them, the i'th
// by At, which may build it afresh at each call.
type VirtualList interface {
	Len() int
	At(i int) NewVirtual
}

// Virtuals is a slice as a VirtualList.
type Virtuals []NewVirtual

func (v Virtuals) Len() int            { return len(v) }
func (v Virtuals) At(i int) NewVirtual { return v[i] }

// check checks a file's arguments, as CreateVirtuals takes them.
func (v *NewVirtual) check() error {
	switch {
	case v.Perm&^07777 != 0:
		return fmt.Errorf("fsnode: sink file %q: mode %#o: %w", v.Name, v.Perm, syscall.EINVAL)
	case v.Size < 0 || v.Size > maxFileSize:
		return fmt.Errorf("fsnode: sink file %q: size %d out of range: %w", v.Name, v.Size, syscall.EFBIG)
	case len(v.Ref.Path) == 0 || len(v.Ref.Path) > maxVirtualPath:
		return fmt.Errorf("fsnode: sink file %q: reference path of %d bytes: %w", v.Name, len(v.Ref.Path), syscall.EINVAL)
	}
	return nil
}

// CreateVirtuals is CreateVirtual of each of files in turn, under one
// lock of the tree and one admission to the commit queue: a checkout
// makes its working copy's 20,000 files in batches instead of taking
// the tree's lock 20,000 times against the readers of its filelogs
// and the committer. Every file's arguments are checked, and its
// directories made, before any file is; a file that fails then (its
// directory gone, a directory in the way) leaves the files before it
// made.
func (s *Sink) CreateVirtuals(files []NewVirtual) error {
	type placed struct {
		parent Ino
		base   string
	}
	where := make([]placed, len(files))
	for i, v := range files {
		if err := v.check(); err != nil {
			return err
		}
		parent, base, err := s.parentOf(v.Name)
		if err != nil {
			return fmt.Errorf("fsnode: sink file %q: %w", v.Name, err)
		}
		where[i] = placed{parent, base}
	}
	f := s.f
	if err := f.c.admit(s.ctx); err != nil {
		return err
	}
	made := 0
	err := func() error {
		f.tree.Lock()
		defer f.tree.Unlock()
		for i, v := range files {
			dir, err := f.dirForUpdate(where[i].parent)
			if err != nil {
				return fmt.Errorf("fsnode: sink file %q: %w", v.Name, err)
			}
			if err := f.unlinkEntry(dir, where[i].base); err != nil {
				return fmt.Errorf("fsnode: sink file %q: %w", v.Name, err)
			}
			in := f.newInode(syscall.S_IFREG|v.Perm, f.uid, f.gid, 0)
			in.mu.Lock()
			if !v.Mtime.IsZero() {
				in.d.Mtime = v.Mtime.UnixNano()
			}
			f.setRefLocked(in, v.Ref, uint64(v.Size))
			f.markDirtyLocked(in)
			in.mu.Unlock()
			f.dirAdd(dir, where[i].base, in)
			made++
		}
		return nil
	}()
	if s.tracking() && made > 0 {
		s.mu.Lock()
		for _, v := range files[:made] {
			s.files = append(s.files, v.Name)
		}
		s.mu.Unlock()
	}
	return err
}

// putVirtual writes (ref non-nil) or deletes an inode's virtual record
// in a commit, creating the bucket and raising the format version with
// the first record.
func putVirtual(tx *bolt.Tx, k []byte, ref []byte, raised *bool) error {
	return putVersioned(tx, bucketVirtual, virtualFormatVersion, k, ref, raised)
}

// putVersioned writes (v non-nil) or deletes k in bucket, a bucket of a
// later format version, in a commit: it creates the bucket and raises
// the cache's version to at least version with the first record it
// writes (*raised then saves the next ones the check).
func putVersioned(tx *bolt.Tx, bucket []byte, version uint32, k, v []byte, raised *bool) error {
	b := tx.Bucket(bucket)
	if v == nil {
		if b == nil {
			return nil
		}
		return b.Delete(k)
	}
	if b == nil {
		var err error
		if b, err = tx.CreateBucket(bucket); err != nil {
			return err
		}
	}
	// Keyed by inode number, which mostly ascends: pages split at 90%,
	// not bbolt's half, stay full (the dirents bucket's note in
	// writeBatch).
	b.FillPercent = 0.9
	if !*raised {
		m := tx.Bucket(bucketMeta)
		if ver, err := readVersion(m); err != nil {
			return err
		} else if ver < version {
			if err := m.Put(metaVersion, binary.BigEndian.AppendUint32(nil, version)); err != nil {
				return err
			}
		}
		*raised = true
	}
	return b.Put(k, v)
}

// PathState is what LookupStates says of one path: its inode's
// attributes and, for a virtual file, its reference; Err is the lookup's
// error (ENOENT, ENOTDIR).
type PathState struct {
	Dir     Ino // the directory the last name was looked up in
	Attr    Attr
	Ref     VirtualRef
	Virtual bool
	Err     error
}

// LookupStates calls fn with the state of the inode at each of n paths
// (path(i), as LookupPath takes them), without kernel references. A
// read lock of the tree is held throughout, given up only while a
// directory is loaded, as resolve does (fn must not call back into f:
// the states are each what the tree held when its path was looked up,
// not one snapshot), and each path is resolved from the directory of
// the one before when they share it, so that sorted paths cost a
// directory lookup each: the daemon's hgfs update checks every tracked
// file this way.
func (f *FS) LookupStates(n int, path func(i int) string, fn func(i int, s PathState)) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	lastDir, dirIn, dirErr := "", (*inode)(nil), error(nil)
	for i := range n {
		p := strings.TrimPrefix(path(i), "/")
		dir, name := splitDir(p)
		// The directory's inode is kept from one path to the next
		// (childOfLocked returns it again, reloaded if it had to be).
		if dir != lastDir || i == 0 {
			lastDir = dir
			var dirIno Ino
			if dirIno, dirErr = f.resolve(dir); dirErr == nil {
				dirIn, dirErr = f.getInode(dirIno)
			}
		}
		var st PathState
		if dirErr == nil {
			st.Dir = dirIn.ino
		}
		ino := Ino(0)
		switch {
		case dirErr != nil:
			st.Err = dirErr
		case name == "" || name == "." || name == "..":
			st.Err = syscall.EINVAL
		default:
			if st.Err = checkName(name); st.Err == nil {
				if ino, dirIn, st.Err = f.childOfLocked(dirIn, name); dirIn == nil {
					dirErr = syscall.ENOENT // gone while it was loaded
				}
			}
		}
		if st.Err == nil {
			var in *inode
			if in, st.Err = f.getInode(ino); st.Err == nil {
				in.mu.RLock()
				st.Attr = in.attrLocked()
				if in.vref != nil {
					st.Ref, st.Virtual = *in.vref, true
				}
				in.mu.RUnlock()
			}
		}
		fn(i, st)
	}
}
