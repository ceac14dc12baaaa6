package fsnode

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Rename flags, as renameat2(2) defines them.
const (
	RenameNoReplace = 1 << 0 // RENAME_NOREPLACE
	RenameExchange  = 1 << 1 // RENAME_EXCHANGE
)

// maxSymlinkLen is PATH_MAX - 1 on Linux.
const maxSymlinkLen = 4095

type dentry struct {
	name string
	ino  Ino
	seq  uint64
	typ  uint32
	gone bool
}

// dirChange is what the next commit must do for one name: delete the
// committed entry's dirseq key (prevSeq, 0 if none was committed) and put
// ent, or delete the name (ent nil).
type dirChange struct {
	prevSeq uint64
	ent     *dentry
}

// dirState is a loaded directory. order holds entries by ascending seq,
// the readdir order; removed entries stay (gone) until compacted, so a
// ReadDir in progress resumes correctly after any change.
type dirState struct {
	entries map[string]*dentry
	order   []*dentry
	gone    int
	changes map[string]*dirChange

	// pending: the directory's deferred files (vdir.go), not yet among
	// its entries, as their listing's record: the directory counts as
	// unloaded (inode.loaded) until loadDir makes them. The record, not
	// its decoding, is what waits: a clone's checkout defers its whole
	// working copy, and at 250,000 files the decoded entries were 11 MB
	// more at its peak. vdirPut: the listing the next commit writes
	// (the same bytes when the checkout has just deferred them);
	// vdirDrop: the next commit deletes the directory's listing. All
	// three change under f.tree's write lock, under which the committer
	// also takes them, and nothing changes the bytes.
	pending  []byte
	vdirPut  []byte
	vdirDrop bool
}

func newDirState() *dirState {
	return &dirState{entries: make(map[string]*dentry), changes: make(map[string]*dirChange)}
}

// checkName validates a single path component from a caller.
func checkName(name string) error {
	switch {
	case name == "":
		return syscall.ENOENT
	case len(name) > maxNameLen:
		return syscall.ENAMETOOLONG
	case strings.ContainsAny(name, "/\x00"):
		return syscall.EINVAL
	}
	return nil
}

// checkNewName validates the name of an entry to create.
func checkNewName(name string) error {
	if name == "." || name == ".." {
		return syscall.EEXIST
	}
	return checkName(name)
}

// loadDir reads a directory's entries from the index and makes its
// deferred files (vdir.go). f.tree is held for writing. A directory with
// uncommitted changes is always loaded (it may still have deferred
// files), so the index is its whole truth here.
func (f *FS) loadDir(in *inode) error {
	if in.loaded() {
		return nil
	}
	if in.dir != nil {
		r, err := decodeVdir(in.dir.pending)
		if err != nil {
			return fmt.Errorf("directory %d: %w: %w", in.ino, err, syscall.EIO)
		}
		return f.populateLocked(in, in.dir, r)
	}
	ds := newDirState()
	var pending *vdirRec
	err := f.view("load directory", func(tx *bolt.Tx) error {
		var err error
		if pending, err = readVdir(tx, in.ino); err != nil {
			return err
		}
		c := tx.Bucket(bucketDirents).Cursor()
		prefix := inoKey(in.ino)
		for k, v := c.Seek(prefix); len(k) > 8 && string(k[:8]) == string(prefix); k, v = c.Next() {
			_, name, err := decodeDirentKey(k)
			if err != nil {
				return fmt.Errorf("directory %d: %w", in.ino, err)
			}
			d, err := decodeDirent(v)
			if err != nil {
				return fmt.Errorf("directory %d entry %q: %w", in.ino, name, err)
			}
			e := &dentry{name: name, ino: d.Child, seq: d.Seq, typ: d.Type}
			ds.entries[name] = e
			ds.order = append(ds.order, e)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", err, syscall.EIO)
	}
	sort.Slice(ds.order, func(i, j int) bool { return ds.order[i].seq < ds.order[j].seq })
	if pending != nil {
		if err := f.populateLocked(in, ds, pending); err != nil {
			return err // read again from the index next time
		}
	}
	in.dir = ds
	return nil
}

// dirForUpdate returns a loaded directory; f.tree is held for writing.
func (f *FS) dirForUpdate(ino Ino) (*inode, error) {
	in, err := f.getInode(ino)
	if err != nil {
		return nil, err
	}
	if !in.isDir() {
		return nil, syscall.ENOTDIR
	}
	if in.d.Nlink == 0 {
		return nil, syscall.ENOENT // removed directory: no new entries
	}
	if err := f.loadDir(in); err != nil {
		return nil, err
	}
	return in, nil
}

// rlockDir read-locks f.tree and returns the loaded directory ino; on
// success the caller must f.tree.RUnlock.
func (f *FS) rlockDir(ino Ino) (*inode, error) {
	for {
		f.tree.RLock()
		in, err := f.getInode(ino)
		if err != nil {
			f.tree.RUnlock()
			return nil, err
		}
		if !in.isDir() {
			f.tree.RUnlock()
			return nil, syscall.ENOTDIR
		}
		if in.loaded() {
			return in, nil
		}
		f.tree.RUnlock()
		f.tree.Lock()
		in, err = f.getInode(ino)
		if err == nil && in.isDir() {
			err = f.loadDir(in)
		}
		f.tree.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// dirAdd adds name -> child to dir with a new cookie. f.tree is held for
// writing.
func (f *FS) dirAdd(dir *inode, name string, child *inode) {
	f.addEntry(dir.dir, name, child)
	f.touchDir(dir)
}

// addEntry is dirAdd without the directory's change of times (a
// directory's deferred files made, vdir.go).
func (f *FS) addEntry(ds *dirState, name string, child *inode) {
	e := &dentry{name: name, ino: child.ino, seq: f.nextSeq.Add(1) - 1, typ: child.typ()}
	ch := ds.changes[name]
	if ch == nil {
		ch = &dirChange{}
		ds.changes[name] = ch
	}
	ch.ent = e
	ds.entries[name] = e
	ds.order = append(ds.order, e)
}

// dirRemove removes name from dir. f.tree is held for writing.
func (f *FS) dirRemove(dir *inode, name string) {
	ds := dir.dir
	e := ds.entries[name]
	delete(ds.entries, name)
	e.gone = true
	ds.gone++
	ch := ds.changes[name]
	if ch == nil {
		// No change to this name since the last snapshot: e is what the
		// index holds.
		ch = &dirChange{prevSeq: e.seq}
		ds.changes[name] = ch
	}
	ch.ent = nil
	if ds.gone > 32 && ds.gone > len(ds.order)/2 {
		live := make([]*dentry, 0, len(ds.order)-ds.gone)
		for _, e := range ds.order {
			if !e.gone {
				live = append(live, e)
			}
		}
		ds.order, ds.gone = live, 0
	}
	f.touchDir(dir)
}

// touchDir records a change of dir's entries: mtime and ctime now.
func (f *FS) touchDir(dir *inode) {
	dir.mu.Lock()
	now := time.Now().UnixNano()
	dir.d.Mtime, dir.d.Ctime = now, now
	f.markDirtyLocked(dir)
	dir.mu.Unlock()
}

// changeLinks adds delta to in's link count (ctime now) and reclaims it if
// nothing refers to it any more. f.tree is held for writing.
func (f *FS) changeLinks(in *inode, delta int, zero bool) {
	in.mu.Lock()
	if zero {
		in.d.Nlink = 0
	} else {
		in.d.Nlink = uint32(int(in.d.Nlink) + delta)
	}
	in.d.Ctime = time.Now().UnixNano()
	f.markDirtyLocked(in)
	f.maybeReclaimLocked(in)
	in.mu.Unlock()
}

// maybeReclaimLocked reclaims an inode with no links, handles or kernel
// references; in.mu is held.
func (f *FS) maybeReclaimLocked(in *inode) {
	if in.d.Nlink == 0 && in.handles == 0 && in.lookups == 0 && !in.reclaimed {
		f.reclaimLocked(in)
	}
}

func (f *FS) reclaimLocked(in *inode) {
	in.reclaimed = true
	old := in.exts
	in.inline, in.exts = nil, nil
	in.contentDirty = true
	f.markDirtyLocked(in)
	f.data.release(old)
}

func (f *FS) lookupLocked(dir *inode, name string) (*inode, error) {
	switch name {
	case ".":
		return dir, nil
	case "..":
		return f.getInode(dir.d.Parent)
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	e := dir.dir.entries[name]
	if e == nil {
		return nil, syscall.ENOENT
	}
	return f.getInode(e.ino)
}

// Lookup finds name in directory parent and takes a kernel reference on
// the result (released by Forget).
func (f *FS) Lookup(ctx context.Context, parent Ino, name string) (Attr, error) {
	dir, err := f.rlockDir(parent)
	if err != nil {
		return Attr{}, err
	}
	defer f.tree.RUnlock()
	in, err := f.lookupLocked(dir, name)
	if err != nil {
		return Attr{}, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.lookups++
	return in.attrLocked(), nil
}

// Forget drops n kernel references to ino; an unlinked inode without
// references or handles is reclaimed.
func (f *FS) Forget(ino Ino, n uint64) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	f.imu.Lock()
	in := f.inodes[ino]
	if in == nil {
		// Evicted, linked and clean: only its count is kept.
		f.refs.Drop(ino, n)
		f.imu.Unlock()
		return
	}
	f.imu.Unlock()
	in.mu.Lock()
	in.lookups -= min(n, in.lookups)
	f.maybeReclaimLocked(in)
	in.mu.Unlock()
}

// GetAttr returns ino's attributes.
func (f *FS) GetAttr(ctx context.Context, ino Ino) (Attr, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return Attr{}, err
	}
	return in.attr(), nil
}

// SetAttr changes attributes: mode (permission bits), owner, size
// (truncate: zero-filled growth or shrink; regular files only), times.
// ctime becomes now. A change of size or owner also clears privileges
// if ctx says so (WithKillPriv).
func (f *FS) SetAttr(ctx context.Context, ino Ino, set SetAttr) (Attr, error) {
	for {
		a, err := f.setAttr(ctx, ino, set)
		if err != errStillVirtual {
			return a, err
		}
	}
}

// errStillVirtual: a virtual file to materialize was made virtual again
// before the change could lock it (hgfs update moving it); try again.
var errStillVirtual = errors.New("fsnode: still virtual")

func (f *FS) setAttr(ctx context.Context, ino Ino, set SetAttr) (Attr, error) {
	if err := f.c.admit(ctx); err != nil {
		return Attr{}, err
	}
	if set.Size != nil && *set.Size > 0 {
		// Copy on write, before the locks (the resolver reads the cache).
		if err := f.materializeIno(ino); err != nil {
			return Attr{}, err
		}
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return Attr{}, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if set.Size != nil && *set.Size > 0 && in.vref != nil {
		return Attr{}, errStillVirtual
	}
	if set.Size != nil {
		switch in.typ() {
		case syscall.S_IFDIR:
			return Attr{}, syscall.EISDIR
		case syscall.S_IFREG:
		default:
			return Attr{}, syscall.EINVAL
		}
		if *set.Size > maxFileSize {
			return Attr{}, syscall.EFBIG
		}
		if err := f.truncateLocked(in, int64(*set.Size)); err != nil {
			return Attr{}, err
		}
	}
	if set.Mode != nil {
		in.d.Mode = in.typ() | *set.Mode&07777
		if err := f.aclChmodLocked(in); err != nil {
			return Attr{}, err
		}
	}
	if set.Uid != nil {
		in.d.Uid = *set.Uid
	}
	if set.Gid != nil {
		in.d.Gid = *set.Gid
	}
	if killPriv(ctx) && (set.Size != nil || set.Uid != nil || set.Gid != nil) {
		if err := f.killPrivLocked(in); err != nil {
			return Attr{}, err
		}
	}
	if set.Atime != nil {
		in.d.Atime = set.Atime.UnixNano()
	}
	if set.Mtime != nil {
		in.d.Mtime = set.Mtime.UnixNano()
	}
	in.d.Ctime = time.Now().UnixNano()
	f.markDirtyLocked(in)
	return in.attrLocked(), nil
}

// Mkdir creates a directory and takes a kernel reference on it.
func (f *FS) Mkdir(ctx context.Context, parent Ino, name string, mode uint32) (Attr, error) {
	in, err := f.mknode(ctx, parent, name, syscall.S_IFDIR|mode&07777, "", true)
	if err != nil {
		return Attr{}, err
	}
	return in.attr(), nil
}

// Symlink creates a symbolic link and takes a kernel reference on it.
func (f *FS) Symlink(ctx context.Context, parent Ino, name, target string) (Attr, error) {
	switch {
	case target == "":
		return Attr{}, syscall.ENOENT
	case len(target) > maxSymlinkLen:
		return Attr{}, syscall.ENAMETOOLONG
	case strings.IndexByte(target, 0) >= 0:
		return Attr{}, syscall.EINVAL
	}
	in, err := f.mknode(ctx, parent, name, syscall.S_IFLNK|0o777, target, true)
	if err != nil {
		return Attr{}, err
	}
	return in.attr(), nil
}

// mknode creates a directory, symlink or empty regular file.
func (f *FS) mknode(ctx context.Context, parent Ino, name string, mode uint32, target string, ref bool) (*inode, error) {
	if err := f.c.admit(ctx); err != nil {
		return nil, err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	return f.mknodeLocked(ctx, parent, name, mode, target, ref)
}

func (f *FS) mknodeLocked(ctx context.Context, parent Ino, name string, mode uint32, target string, ref bool) (*inode, error) {
	if err := checkNewName(name); err != nil {
		return nil, err
	}
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return nil, err
	}
	if dir.dir.entries[name] != nil {
		return nil, syscall.EEXIST
	}
	uid, gid := f.owner(ctx)
	// A set-group-ID directory gives its group to what is created in it,
	// and its set-group-ID bit to new directories (as Linux's
	// inode_init_owner does; FUSE leaves this to the filesystem). The
	// kernel has already dropped S_ISGID from a file's mode where the
	// creator may not have it (vfs_prepare_mode).
	dir.mu.Lock()
	if dir.d.Mode&syscall.S_ISGID != 0 {
		gid = dir.d.Gid
		if mode&syscall.S_IFMT == syscall.S_IFDIR {
			mode |= syscall.S_ISGID
		}
	}
	dir.mu.Unlock()
	in := f.newInode(mode, uid, gid, parent)
	in.mu.Lock()
	if mode&syscall.S_IFMT == syscall.S_IFLNK {
		in.inline = []byte(target)
		in.d.Size = uint64(len(target))
	}
	if ref {
		in.lookups++
	}
	f.markDirtyLocked(in)
	in.mu.Unlock()
	f.dirAdd(dir, name, in)
	if in.isDir() {
		dir.mu.Lock()
		dir.d.Nlink++
		dir.mu.Unlock()
	}
	return in, nil
}

// Readlink returns a symlink's target.
func (f *FS) Readlink(ctx context.Context, ino Ino) (string, error) {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return "", err
	}
	if in.typ() != syscall.S_IFLNK {
		return "", syscall.EINVAL
	}
	in.mu.RLock()
	defer in.mu.RUnlock()
	return string(in.inline), nil
}

// Link makes newName in newParent another name of ino (not a directory)
// and takes a kernel reference on it.
func (f *FS) Link(ctx context.Context, ino Ino, newParent Ino, newName string) (Attr, error) {
	if err := f.c.admit(ctx); err != nil {
		return Attr{}, err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	if err := checkNewName(newName); err != nil {
		return Attr{}, err
	}
	in, err := f.getInode(ino)
	if err != nil {
		return Attr{}, err
	}
	dir, err := f.dirForUpdate(newParent)
	if err != nil {
		return Attr{}, err
	}
	if dir.dir.entries[newName] != nil {
		return Attr{}, syscall.EEXIST // before EPERM, as Linux does
	}
	if in.isDir() {
		return Attr{}, syscall.EPERM
	}
	in.mu.Lock()
	if in.d.Nlink == 0 {
		in.mu.Unlock()
		return Attr{}, syscall.ENOENT
	}
	in.mu.Unlock()
	f.dirAdd(dir, newName, in)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.d.Nlink++
	in.d.Ctime = time.Now().UnixNano()
	in.lookups++
	f.markDirtyLocked(in)
	return in.attrLocked(), nil
}

// Unlink removes a non-directory entry. An inode still open or known to
// the kernel lives on (an orphan) until its last handle and reference go.
func (f *FS) Unlink(ctx context.Context, parent Ino, name string) error {
	if err := f.c.admit(ctx); err != nil {
		return err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	if name == "." || name == ".." {
		return syscall.EISDIR
	}
	if err := checkName(name); err != nil {
		return err
	}
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return err
	}
	if dir.dir.entries[name] == nil {
		return syscall.ENOENT
	}
	return f.unlinkEntry(dir, name)
}

// unlinkEntry removes the entry base of dir, if there is one, and a
// link of its inode: Unlink, and a sink entry replacing a file of its
// name. A directory is not removed (EISDIR). The caller holds the tree
// lock for writing.
func (f *FS) unlinkEntry(dir *inode, base string) error {
	e := dir.dir.entries[base]
	if e == nil {
		return nil
	}
	old, err := f.getInode(e.ino)
	if err != nil {
		return err
	}
	if old.isDir() {
		return syscall.EISDIR
	}
	f.dirRemove(dir, base)
	f.changeLinks(old, -1, false)
	return nil
}

// Rmdir removes an empty directory.
func (f *FS) Rmdir(ctx context.Context, parent Ino, name string) error {
	if err := f.c.admit(ctx); err != nil {
		return err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	switch name {
	case ".":
		return syscall.EINVAL
	case "..":
		return syscall.ENOTEMPTY
	}
	if err := checkName(name); err != nil {
		return err
	}
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return err
	}
	e := dir.dir.entries[name]
	if e == nil {
		return syscall.ENOENT
	}
	child, err := f.getInode(e.ino)
	if err != nil {
		return err
	}
	if !child.isDir() {
		return syscall.ENOTDIR
	}
	if err := f.loadDir(child); err != nil {
		return err
	}
	if len(child.dir.entries) > 0 {
		return syscall.ENOTEMPTY
	}
	f.dirRemove(dir, name)
	f.changeLinks(child, 0, true)
	f.changeLinks(dir, -1, false)
	return nil
}

// isWithin reports whether directory ino is dir or below it. f.tree is
// held.
func (f *FS) isWithin(ino, dir Ino) (bool, error) {
	for range 1 << 16 {
		if ino == dir {
			return true, nil
		}
		if ino == RootIno {
			return false, nil
		}
		in, err := f.getInode(ino)
		if err != nil {
			return false, err
		}
		ino = in.d.Parent
	}
	return false, fmt.Errorf("%w: directory parent chain too long or cyclic: %w", ErrCorrupt, syscall.EIO)
}

// Rename moves oldName in oldParent to newName in newParent, atomically:
// an existing file is replaced, an existing empty directory replaced by a
// directory. flags: RenameNoReplace (EEXIST if newName exists),
// RenameExchange (swap both entries); others are EINVAL.
func (f *FS) Rename(ctx context.Context, oldParent Ino, oldName string, newParent Ino, newName string, flags uint32) error {
	if flags&^(RenameNoReplace|RenameExchange) != 0 || flags == RenameNoReplace|RenameExchange {
		return syscall.EINVAL
	}
	if err := f.c.admit(ctx); err != nil {
		return err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	for _, n := range []string{oldName, newName} {
		if n == "." || n == ".." {
			return syscall.EINVAL
		}
		if err := checkName(n); err != nil {
			return err
		}
	}
	odir, err := f.dirForUpdate(oldParent)
	if err != nil {
		return err
	}
	ndir, err := f.dirForUpdate(newParent)
	if err != nil {
		return err
	}
	se := odir.dir.entries[oldName]
	if se == nil {
		return syscall.ENOENT
	}
	src, err := f.getInode(se.ino)
	if err != nil {
		return err
	}
	de := ndir.dir.entries[newName]
	if flags == RenameExchange && de == nil {
		return syscall.ENOENT
	}
	if de != nil && flags == RenameNoReplace {
		return syscall.EEXIST
	}
	if src.isDir() && oldParent != newParent {
		if in, err := f.isWithin(newParent, src.ino); err != nil {
			return err
		} else if in {
			return syscall.EINVAL
		}
	}
	var dst *inode
	if de != nil {
		if dst, err = f.getInode(de.ino); err != nil {
			return err
		}
		// The target must not be an ancestor of the source (Linux checks
		// this before the types).
		if dst.isDir() && oldParent != newParent {
			if in, err := f.isWithin(oldParent, dst.ino); err != nil {
				return err
			} else if in {
				if flags == RenameExchange {
					return syscall.EINVAL
				}
				return syscall.ENOTEMPTY
			}
		}
	}
	if de != nil && de.ino == se.ino {
		return nil // same inode: POSIX says do nothing
	}
	if flags == RenameExchange {
		f.dirRemove(odir, oldName)
		f.dirRemove(ndir, newName)
		f.dirAdd(odir, oldName, dst)
		f.dirAdd(ndir, newName, src)
		f.moved(src, odir, ndir)
		f.moved(dst, ndir, odir)
		return nil
	}
	if dst != nil {
		if src.isDir() {
			if !dst.isDir() {
				return syscall.ENOTDIR
			}
			if err := f.loadDir(dst); err != nil {
				return err
			}
			if len(dst.dir.entries) > 0 {
				return syscall.ENOTEMPTY
			}
		} else if dst.isDir() {
			return syscall.EISDIR
		}
		f.dirRemove(ndir, newName)
		if dst.isDir() {
			f.changeLinks(dst, 0, true)
			f.changeLinks(ndir, -1, false)
		} else {
			f.changeLinks(dst, -1, false)
		}
	}
	f.dirRemove(odir, oldName)
	f.dirAdd(ndir, newName, src)
	f.moved(src, odir, ndir)
	return nil
}

// moved fixes parent pointer and link counts after in moved from one
// directory to another, and sets its ctime.
func (f *FS) moved(in, from, to *inode) {
	if in.isDir() && from != to {
		in.mu.Lock()
		in.d.Parent = to.ino
		in.mu.Unlock()
		f.changeLinks(from, -1, false)
		f.changeLinks(to, +1, false)
	}
	f.changeLinks(in, 0, false)
}

// ReadDir returns the entries of directory ino after cookie off (0: from
// the start), in a stable order: an entry's cookie never changes while it
// exists, and entries added later get larger cookies. "." and ".." are not
// returned (cookies start at 3, so adapters can give them 1 and 2).
func (f *FS) ReadDir(ctx context.Context, ino Ino, off uint64) ([]DirEntry, error) {
	return f.ReadDirLimit(ctx, ino, off, 0)
}

// ReadDirLimit is ReadDir returning at most limit entries (all if limit
// <= 0); an empty result means the end. Adapters filling one kernel
// buffer at a time should use it: ReadDir on a huge directory copies all
// the remaining entries each time.
func (f *FS) ReadDirLimit(ctx context.Context, ino Ino, off uint64, limit int) ([]DirEntry, error) {
	dir, err := f.rlockDir(ino)
	if err != nil {
		return nil, err
	}
	defer f.tree.RUnlock()
	ds := dir.dir
	i := sort.Search(len(ds.order), func(i int) bool { return ds.order[i].seq > off })
	n := len(ds.order) - i
	if limit > 0 && n > limit {
		n = limit
	}
	out := make([]DirEntry, 0, n)
	for ; i < len(ds.order) && (limit <= 0 || len(out) < limit); i++ {
		if e := ds.order[i]; !e.gone {
			out = append(out, DirEntry{Name: e.name, Ino: e.ino, Mode: e.typ, Off: e.seq})
		}
	}
	return out, nil
}
