package fsnode

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestMknodTypes(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{CommitInterval: 1})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]struct {
		mode uint32
		rdev uint64
	}{
		"fifo": {syscall.S_IFIFO | 0o640, 0},
		"sock": {syscall.S_IFSOCK | 0o755, 0},
		"chr":  {syscall.S_IFCHR | 0o666, 1<<8 | 3},
		"blk":  {syscall.S_IFBLK | 0o600, 8<<8 | 1},
		"reg":  {0o644, 0},
	}
	for name, tc := range types {
		a, err := f.Mknod(bg, RootIno, name, tc.mode, tc.rdev|7<<40*boolU64(!isDevice(tc.mode&syscall.S_IFMT)))
		if err != nil {
			t.Fatalf("mknod %s: %v", name, err)
		}
		f.Forget(a.Ino, 1)
	}
	_, err = f.Mknod(bg, RootIno, "fifo", syscall.S_IFIFO|0o644, 0)
	wantErrno(t, err, syscall.EEXIST)
	_, err = f.Mknod(bg, RootIno, "d", syscall.S_IFDIR|0o755, 0)
	wantErrno(t, err, syscall.EINVAL)
	check := func(f *FS) {
		t.Helper()
		ents := must[[]DirEntry](t)(f.ReadDir(bg, RootIno, 0))
		for _, e := range ents {
			tc := types[e.Name]
			a := must[Attr](t)(f.LookupPath(bg, e.Name))
			want := tc.mode
			if want&syscall.S_IFMT == 0 {
				want |= syscall.S_IFREG
			}
			if a.Mode != want || a.Rdev != tc.rdev || a.Size != 0 || e.Mode != want&syscall.S_IFMT {
				t.Errorf("%s: mode %#o rdev %#x size %d entry type %#o, want mode %#o rdev %#x", e.Name, a.Mode, a.Rdev, a.Size, e.Mode, want, tc.rdev)
			}
		}
		if len(ents) != len(types) {
			t.Errorf("%d entries, want %d", len(ents), len(types))
		}
		for name, want := range map[string]fs.FileMode{"fifo": fs.ModeNamedPipe, "sock": fs.ModeSocket,
			"chr": fs.ModeDevice | fs.ModeCharDevice, "blk": fs.ModeDevice, "reg": 0} {
			fi := must[fs.FileInfo](t)(fs.Stat(f.FS(), name))
			if fi.Mode().Type() != want {
				t.Errorf("io/fs view of %s: type %v, want %v", name, fi.Mode().Type(), want)
			}
		}
		fifo := must[Attr](t)(f.LookupPath(bg, "fifo"))
		_, err := f.WriteInode(bg, fifo.Ino, 0, []byte("x"), 0)
		wantErrno(t, err, syscall.EINVAL)
		err = f.Fallocate(bg, fifo.Ino, 0, 10, 0)
		wantErrno(t, err, syscall.ENODEV)
	}
	check(f)
	f = closeAndReopen(t, f, dir)
	check(f)
	// Removing a device removes its rdev record.
	wantErrno(t, f.Unlink(bg, RootIno, "chr"), 0)
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	f.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketRdev).Stats().KeyN; n != 1 {
			t.Errorf("%d rdev records, want 1 (blk)", n)
		}
		return nil
	})
}

func boolU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func TestFallocate(t *testing.T) {
	for _, inlineMax := range []int{4096, 16} {
		f := newTestFS(t, Options{InlineMax: inlineMax})
		data := bytes.Repeat([]byte("abcdefgh"), 200) // 1600 bytes
		a := createFile(t, f, RootIno, "f", data)
		ino := a.Ino
		want := slices.Clone(data)
		check := func(what string) {
			t.Helper()
			if got := readAll(t, f, ino); !bytes.Equal(got, want) {
				t.Fatalf("inline %d, %s: got %d bytes %.40q, want %d bytes %.40q", inlineMax, what, len(got), got, len(want), want)
			}
		}
		// Mode 0 grows the size with zeros.
		wantErrno(t, f.Fallocate(bg, ino, 1000, 1000, 0), 0)
		want = append(want, make([]byte, 400)...)
		check("mode 0")
		// KEEP_SIZE past the end changes nothing.
		wantErrno(t, f.Fallocate(bg, ino, 1500, 5000, FallocKeepSize), 0)
		check("keep size")
		// Punch a hole across the middle.
		wantErrno(t, f.Fallocate(bg, ino, 10, 100, FallocPunchHole|FallocKeepSize), 0)
		clear(want[10:110])
		check("punch hole")
		// A hole past the end keeps the size.
		wantErrno(t, f.Fallocate(bg, ino, 1900, 500, FallocPunchHole|FallocKeepSize), 0)
		clear(want[1900:])
		check("punch past end")
		// Zero range growing the file, then keeping its size.
		wantErrno(t, f.Fallocate(bg, ino, 1990, 20, FallocZeroRange), 0)
		want = append(want, make([]byte, 10)...)
		check("zero range")
		wantErrno(t, f.Fallocate(bg, ino, 0, 5, FallocZeroRange|FallocKeepSize), 0)
		clear(want[:5])
		check("zero range keep size")
		// Errors.
		wantErrno(t, f.Fallocate(bg, ino, 0, 5, FallocPunchHole), syscall.EOPNOTSUPP)
		wantErrno(t, f.Fallocate(bg, ino, 0, 5, 0x08), syscall.EOPNOTSUPP) // COLLAPSE_RANGE
		wantErrno(t, f.Fallocate(bg, ino, 0, 5, FallocPunchHole|FallocZeroRange|FallocKeepSize), syscall.EINVAL)
		wantErrno(t, f.Fallocate(bg, ino, 0, 0, 0), syscall.EINVAL)
		wantErrno(t, f.Fallocate(bg, ino, -1, 5, 0), syscall.EINVAL)
		wantErrno(t, f.Fallocate(bg, RootIno, 0, 5, 0), syscall.EISDIR)
		wantErrno(t, f.Fallocate(bg, ino, 1<<60, 5, 0), syscall.EFBIG)
		wantErrno(t, f.Sync(bg), 0)
		checkAccounting(t, f, "after fallocate")
	}
}

func TestPunchHoleTrimsExtents(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 16})
	a := createFile(t, f, RootIno, "f", bytes.Repeat([]byte{1}, 3000))
	wantErrno(t, f.WriteFile(bg, "g", nil, 0o644), 0)
	h := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDWR))
	must[int](t)(f.Write(bg, h, 1000, bytes.Repeat([]byte{2}, 1000)))
	f.Release(h)
	wantErrno(t, f.Fallocate(bg, a.Ino, 500, 2000, FallocPunchHole|FallocKeepSize), 0)
	in := must[*inode](t)(f.getInode(a.Ino))
	var live int64
	for _, e := range in.exts {
		live += e.Len
		if e.end() > 500 && e.Off < 2500 {
			t.Errorf("extent %+v overlaps the hole", e)
		}
	}
	if live != 1000 || must[Attr](t)(f.GetAttr(bg, a.Ino)).Blocks != 2 {
		t.Errorf("%d live bytes after the punch, want 1000", live)
	}
	wantErrno(t, f.Sync(bg), 0)
	checkAccounting(t, f, "after the punch")
	if st := f.Stats(); st.LiveBytes != 1000 {
		t.Errorf("stats: %d live bytes, want 1000", st.LiveBytes)
	}
	// The pieces keep their run and its CRC, as putExtent's do.
	if got := punchExtents([]extent{{Off: 0, File: 1, FileOff: 100, Len: 10, Run: 10, Sum: 7}}, 3, 5); !slices.Equal(got,
		[]extent{{Off: 0, File: 1, FileOff: 100, Len: 3, Run: 10, Sum: 7}, {Off: 5, File: 1, FileOff: 105, Len: 5, Head: 5, Run: 10, Sum: 7}}) {
		t.Errorf("split: %+v", got)
	}
}

func TestXattrs(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{CommitInterval: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := createFile(t, f, RootIno, "f", []byte("x"))
	ino := a.Ino
	_, err = f.Getxattr(bg, ino, "user.a")
	wantErrno(t, err, syscall.ENODATA)
	wantErrno(t, f.Setxattr(bg, ino, "user.a", []byte("1"), 0), 0)
	wantErrno(t, f.Setxattr(bg, ino, "user.a", []byte("2"), XattrCreate), syscall.EEXIST)
	wantErrno(t, f.Setxattr(bg, ino, "user.b", []byte("2"), XattrReplace), syscall.ENODATA)
	wantErrno(t, f.Setxattr(bg, ino, "user.a", []byte("22"), XattrReplace), 0)
	wantErrno(t, f.Setxattr(bg, ino, "user.empty", nil, XattrCreate), 0)
	wantErrno(t, f.Setxattr(bg, ino, "trusted.t", []byte{0, 1, 2}, 0), 0)
	wantErrno(t, f.Setxattr(bg, ino, "security.capability", []byte("cap"), 0), 0)
	wantErrno(t, f.Setxattr(bg, ino, "system.posix_acl_access", []byte{2, 0, 0, 0}, 0), syscall.EINVAL)
	wantErrno(t, f.Setxattr(bg, ino, "system.posix_acl_access", testACL(6, 4, 0, 4), 0), 0)
	wantErrno(t, f.Setxattr(bg, ino, "other.x", nil, 0), syscall.EOPNOTSUPP)
	wantErrno(t, f.Setxattr(bg, ino, "system.other", nil, 0), syscall.EOPNOTSUPP)
	wantErrno(t, f.Setxattr(bg, ino, "user.", nil, 0), syscall.EOPNOTSUPP)
	wantErrno(t, f.Setxattr(bg, ino, "", nil, 0), syscall.ERANGE)
	wantErrno(t, f.Setxattr(bg, ino, "user."+strings.Repeat("n", 251), nil, 0), syscall.ERANGE)
	wantErrno(t, f.Setxattr(bg, ino, "user."+strings.Repeat("n", 250), nil, 0), 0)
	wantErrno(t, f.Setxattr(bg, ino, "user.big", make([]byte, 64<<10+1), 0), syscall.E2BIG)
	wantErrno(t, f.Setxattr(bg, ino, "user.a", nil, 4), syscall.EINVAL)
	// The per-inode total.
	for i := range 3 {
		wantErrno(t, f.Setxattr(bg, ino, "user.big"+string(rune('0'+i)), make([]byte, 64<<10), 0), 0)
	}
	wantErrno(t, f.Setxattr(bg, ino, "user.big3", make([]byte, 64<<10), 0), syscall.ENOSPC)
	wantErrno(t, f.Setxattr(bg, ino, "user.big2", make([]byte, 60<<10), 0), 0) // a replacement frees its old size
	wantErrno(t, f.Removexattr(bg, ino, "user.big2"), 0)
	wantErrno(t, f.Removexattr(bg, ino, "user.big2"), syscall.ENODATA)
	// Carried through link and rename; gone with the inode.
	must[Attr](t)(f.Link(bg, ino, RootIno, "l"))
	f.Forget(ino, 1)
	wantErrno(t, f.Rename(bg, RootIno, "f", RootIno, "g", 0), 0)
	want := []string{"security.capability", "system.posix_acl_access", "trusted.t",
		"user.a", "user.big0", "user.big1", "user.empty", "user." + strings.Repeat("n", 250)}
	check := func(f *FS) {
		t.Helper()
		g := must[Attr](t)(f.LookupPath(bg, "g"))
		if names := must[[]string](t)(f.Listxattr(bg, g.Ino)); !slices.Equal(names, want) {
			t.Errorf("names %q, want %q", names, want)
		}
		if v := must[[]byte](t)(f.Getxattr(bg, g.Ino, "user.a")); string(v) != "22" {
			t.Errorf("user.a = %q", v)
		}
		if v := must[[]byte](t)(f.Getxattr(bg, g.Ino, "trusted.t")); !bytes.Equal(v, []byte{0, 1, 2}) {
			t.Errorf("trusted.t = %q", v)
		}
		if v := must[[]byte](t)(f.Getxattr(bg, g.Ino, "user.empty")); len(v) != 0 {
			t.Errorf("user.empty = %q", v)
		}
		root := must[[]string](t)(f.Listxattr(bg, RootIno))
		if len(root) != 0 {
			t.Errorf("root has %q", root)
		}
	}
	check(f)
	f = closeAndReopen(t, f, dir)
	check(f)
	// Directories hold them too.
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	wantErrno(t, f.Setxattr(bg, d.Ino, "user.d", []byte("dir"), 0), 0)
	wantErrno(t, f.Rmdir(bg, RootIno, "d"), 0)
	f.Forget(d.Ino, 1)
	wantErrno(t, f.Unlink(bg, RootIno, "g"), 0)
	wantErrno(t, f.Unlink(bg, RootIno, "l"), 0)
	f = closeAndReopen(t, f, dir)
	f.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketXattrs).Stats().KeyN; n != 0 {
			t.Errorf("%d xattr records left after the inodes went", n)
		}
		return nil
	})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// TestLaterBucketsCreated: a cache made before the rdev and xattrs
// buckets opens, gets them, and fsck of the old one is clean.
func TestLaterBucketsCreated(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{}))
	createFile(t, f, RootIno, "f", []byte("x"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db := must[*bolt.DB](t)(bolt.Open(dir+"/"+indexName, 0o600, nil))
	db.Update(func(tx *bolt.Tx) error {
		for _, b := range laterBuckets {
			if err := tx.DeleteBucket(b); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	db.Close()
	checkFsck(t, dir)
	r := must[*FsckReport](t)(Fsck(dir, true))
	if !r.OK() {
		t.Fatalf("repair of a cache without the later buckets: %s", r)
	}
	f = must[*FS](t)(Open(dir, Options{}))
	a := must[Attr](t)(f.LookupPath(bg, "f"))
	wantErrno(t, f.Setxattr(bg, a.Ino, "user.x", []byte("y"), 0), 0)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

func TestFsckXattrsAndRdev(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{}))
	a := createFile(t, f, RootIno, "f", []byte("x"))
	wantErrno(t, f.Setxattr(bg, a.Ino, "user.x", []byte("y"), 0), 0)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db := must[*bolt.DB](t)(bolt.Open(dir+"/"+indexName, 0o600, nil))
	db.Update(func(tx *bolt.Tx) error {
		x := tx.Bucket(bucketXattrs)
		x.Put(xattrKey(999, "user.orphan"), []byte("v"))
		x.Put(xattrKey(a.Ino, "bad.name"), []byte("v"))
		x.Put([]byte{1, 2}, []byte("v"))
		tx.Bucket(bucketRdev).Put(inoKey(a.Ino), u64(5))
		tx.Bucket(bucketRdev).Put(inoKey(998), u64(5))
		return nil
	})
	db.Close()
	r := must[*FsckReport](t)(Fsck(dir, true))
	if len(r.Problems) != 5 {
		t.Fatalf("fsck found %d problems, want 5:\n%s", len(r.Problems), r)
	}
	for _, p := range r.Problems {
		if !p.Repaired {
			t.Errorf("not repaired: %s", p)
		}
	}
	checkFsck(t, dir)
	f = must[*FS](t)(Open(dir, Options{}))
	defer f.Close()
	if names := must[[]string](t)(f.Listxattr(bg, a.Ino)); !slices.Equal(names, []string{"user.x"}) {
		t.Errorf("after repair: %q", names)
	}
}

// testACL is an access ACL with owner, named user 1000, group, mask (if
// mask >= 0) and other entries.
func testACL(user, named, group, other uint16, mask ...uint16) []byte {
	b := []byte{2, 0, 0, 0}
	add := func(tag, perm uint16, id uint32) {
		b = append(b, byte(tag), byte(tag>>8), byte(perm), byte(perm>>8), byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	add(aclUserObj, user, ^uint32(0))
	if named > 0 {
		add(aclUser, named, 1000)
	}
	add(aclGroupObj, group, ^uint32(0))
	for _, m := range mask {
		add(aclMask, m, ^uint32(0))
	}
	add(aclOther, other, ^uint32(0))
	return b
}

func TestACLMode(t *testing.T) {
	f := newTestFS(t, Options{})
	a := createFile(t, f, RootIno, "f", nil)
	mode := func() uint32 { return must[Attr](t)(f.GetAttr(bg, a.Ino)).Mode &^ syscall.S_IFMT }
	// A minimal ACL is the mode: applied, not stored (cp -a's way of
	// setting the mode).
	wantErrno(t, f.Setxattr(bg, a.Ino, aclAccess, testACL(7, 0, 5, 1), 0), 0)
	if m := mode(); m != 0o751 {
		t.Fatalf("mode %#o after a minimal ACL, want 0751", m)
	}
	_, err := f.Getxattr(bg, a.Ino, aclAccess)
	wantErrno(t, err, syscall.ENODATA)
	// An extended one is stored; the group bits are the mask's.
	acl := testACL(6, 4, 4, 0, 6)
	wantErrno(t, f.Setxattr(bg, a.Ino, aclAccess, acl, 0), 0)
	if m := mode(); m != 0o660 {
		t.Fatalf("mode %#o after an extended ACL, want 0660", m)
	}
	// chmod rewrites its owner, mask and other entries.
	m := uint32(0o4705)
	must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Mode: &m}))
	if got := must[[]byte](t)(f.Getxattr(bg, a.Ino, aclAccess)); !bytes.Equal(got, testACL(7, 4, 4, 5, 0)) {
		t.Fatalf("ACL after chmod %x, want %x", got, testACL(7, 4, 4, 5, 0))
	}
	if m := mode(); m != 0o4705 {
		t.Fatalf("mode %#o after chmod", m)
	}
	for _, bad := range [][]byte{testACL(8, 0, 0, 0), {3, 0, 0, 0}, testACL(6, 0, 4, 4)[:12], append(testACL(6, 0, 4, 4), testACL(6, 0, 4, 4)[4:12]...)} {
		wantErrno(t, f.Setxattr(bg, a.Ino, aclAccess, bad, 0), syscall.EINVAL)
	}
}

// TestReadDirtyBufferHoles: a read fills every byte of the caller's
// buffer, extents and holes alike, whatever the buffer held before (the
// io_uring transport hands each read an entry's reused payload buffer).
// Windows start and end in holes, in extents and at their edges.
func TestReadDirtyBufferHoles(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 16})
	a := createFile(t, f, RootIno, "f", nil)
	h := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDWR))
	want := make([]byte, 700)
	for _, w := range []struct {
		off int64
		n   int
		b   byte
	}{{0, 40, 1}, {100, 50, 2}, {150, 30, 3}, {400, 100, 4}, {650, 50, 5}} {
		p := bytes.Repeat([]byte{w.b}, w.n)
		must[int](t)(f.Write(bg, h, w.off, p))
		copy(want[w.off:], p)
	}
	// A hole in the middle of an extent, too.
	wantErrno(t, f.Fallocate(bg, a.Ino, 420, 20, FallocPunchHole|FallocKeepSize), 0)
	clear(want[420:440])
	for off := int64(0); off < 720; off += 7 {
		for _, n := range []int{1, 13, 64, 300, 800} {
			buf := bytes.Repeat([]byte{0xaa}, n)
			got, err := f.ReadInode(bg, a.Ino, off, buf)
			if err != nil {
				t.Fatalf("read %d@%d: %v", n, off, err)
			}
			exp := want[min(off, 700):min(off+int64(n), 700)]
			if !bytes.Equal(buf[:got], exp) {
				t.Fatalf("read %d@%d = %v, want %v", n, off, buf[:got], exp)
			}
		}
	}
	f.Release(h)
}
