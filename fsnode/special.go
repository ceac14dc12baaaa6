package fsnode

// Special files (mknod) and space allocation (fallocate).

import (
	"context"
	"sort"
	"syscall"
)

// Mknod creates name in parent with mode's type and permission bits and
// takes a kernel reference on it. The types: FIFOs (S_IFIFO), Unix
// sockets (S_IFSOCK), character and block devices (S_IFCHR, S_IFBLK,
// whose device number rdev GetAttr reports), and empty regular files
// (S_IFREG, or no type bits: the kernel creates files with mknod when a
// filesystem has no create). Others are EINVAL. The special files have no
// contents: the kernel implements their I/O (pipes, sockets, the device's
// driver) itself. Who may create a device (CAP_MKNOD) is the kernel's
// check.
func (f *FS) Mknod(ctx context.Context, parent Ino, name string, mode uint32, rdev uint64) (Attr, error) {
	typ := mode & syscall.S_IFMT
	switch typ {
	case 0:
		typ = syscall.S_IFREG
	case syscall.S_IFREG, syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFCHR, syscall.S_IFBLK:
	default:
		return Attr{}, syscall.EINVAL
	}
	if !isDevice(typ) {
		rdev = 0
	}
	if err := f.c.admit(ctx); err != nil {
		return Attr{}, err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	in, err := f.mknodeLocked(ctx, parent, name, typ|mode&07777, "", true)
	if err != nil {
		return Attr{}, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rdev = rdev
	return in.attrLocked(), nil
}

// Fallocate modes, as fallocate(2) defines them.
const (
	FallocKeepSize  = 0x01 // FALLOC_FL_KEEP_SIZE
	FallocPunchHole = 0x02 // FALLOC_FL_PUNCH_HOLE
	FallocZeroRange = 0x10 // FALLOC_FL_ZERO_RANGE
)

// Fallocate is fallocate(2) on regular file ino for bytes [off,
// off+length):
//
//   - mode 0 makes the range part of the file, growing its size to
//     off+length if smaller; FallocKeepSize leaves the size alone. Bytes
//     never written are holes, which read as zeros, so nothing is written
//     or reserved: a cache whose data files only grow by appending cannot
//     set space aside for later writes. Only growth beyond what the disk
//     has free fails (ENOSPC); a later write can still meet a full disk.
//   - FallocPunchHole|FallocKeepSize makes the range a hole: it reads as
//     zeros, and the data file bytes it covered are no longer referenced
//     (dead bytes, counted as such at once and reclaimed by compaction).
//   - FallocZeroRange zeros the range as a punched hole does, growing the
//     size like mode 0 unless FallocKeepSize is given.
//
// Other modes (collapse, insert, unshare) are EOPNOTSUPP, as is
// FallocPunchHole without FallocKeepSize. With WithKillPriv, every mode
// clears privileges (as Linux's fallocate does for a caller without
// CAP_FSETID, FALLOC_FL_KEEP_SIZE alone included).
func (f *FS) Fallocate(ctx context.Context, ino Ino, off, length int64, mode uint32) error {
	switch mode {
	case 0, FallocKeepSize, FallocPunchHole | FallocKeepSize, FallocZeroRange, FallocZeroRange | FallocKeepSize:
	case FallocPunchHole | FallocZeroRange, FallocPunchHole | FallocZeroRange | FallocKeepSize:
		return syscall.EINVAL
	default:
		return syscall.EOPNOTSUPP
	}
	if off < 0 || length <= 0 {
		return syscall.EINVAL
	}
	end := off + length
	if end > maxFileSize || end < off {
		return syscall.EFBIG
	}
	if err := f.c.admit(ctx); err != nil {
		return err
	}
	for {
		// Copy on write, before the locks (the resolver reads the cache).
		if err := f.materializeIno(ino); err != nil {
			return err
		}
		err := f.fallocate(ctx, ino, off, end, mode)
		if err != errStillVirtual {
			return err
		}
	}
}

func (f *FS) fallocate(ctx context.Context, ino Ino, off, end int64, mode uint32) error {
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err != nil {
		return err
	}
	switch in.typ() {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return syscall.EISDIR
	default:
		return syscall.ENODEV
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.reclaimed {
		return syscall.ENOENT
	}
	if in.vref != nil {
		return errStillVirtual
	}
	if killPriv(ctx) {
		if err := f.killPrivLocked(in); err != nil {
			return err
		}
	}
	size := int64(in.d.Size)
	if mode&(FallocPunchHole|FallocZeroRange) != 0 && off < size {
		f.zeroRangeLocked(in, off, min(end, size))
	}
	if mode&FallocKeepSize != 0 || end <= size {
		return nil
	}
	if mode == 0 {
		if st, err := diskStatfs(f.dir); err == nil && uint64(end-size) > st.Bavail*uint64(st.Bsize) {
			return syscall.ENOSPC
		}
	}
	return f.truncateLocked(in, end)
}

// zeroRangeLocked makes file bytes [off, end), within the size, read as
// zeros: cleared in inline contents, a hole in extents. in.mu is held
// for writing.
func (f *FS) zeroRangeLocked(in *inode, off, end int64) {
	if in.d.Flags&flagInline != 0 {
		clear(in.inline[off:end])
		f.touchContent(in)
		return
	}
	old := overlapping(in.exts, off, end)
	in.exts = punchExtents(in.exts, off, end)
	f.touchContent(in)
	f.data.release(old) // after the inode is queued (see dataFiles.release)
}

// punchExtents removes file bytes [off, end) from exts, trimming or
// splitting the extents that cross its edges.
func punchExtents(exts []extent, off, end int64) []extent {
	i := sort.Search(len(exts), func(i int) bool { return exts[i].end() > off })
	if i == len(exts) || exts[i].Off >= end {
		return exts
	}
	out := append(make([]extent, 0, len(exts)+1), exts[:i]...)
	for _, e := range exts[i:] {
		if e.Off >= end {
			out = append(out, e)
			continue
		}
		// The pieces keep their run (checksum.go), as putExtent's do.
		if e.Off < off {
			left := e
			left.Len = off - e.Off
			out = append(out, left)
		}
		if e.end() > end {
			d := end - e.Off
			right := e
			right.Off, right.FileOff, right.Len, right.Head = end, e.FileOff+d, e.Len-d, e.Head+d
			out = append(out, right)
		}
	}
	return out
}
