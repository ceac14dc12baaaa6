//go:build linux

package fsnode

import (
	"fmt"
	"path"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// TestConformanceVirtual runs the POSIX suite over virtual files: every
// regular file a case writes is made virtual (SetVirtual, its bytes held
// by a testStore) after each write, truncation or fallocate and before
// each close, so the case's next read, write, truncation, rename, link,
// unlink while open, chmod or utimens meets a virtual file, and every
// change of contents crosses the copy-on-write boundary. Each case must
// behave as over ordinary files. Then the tree (contents, attributes,
// which files are virtual) must come back the same after a close and a
// reopen, with fsck clean.
func TestConformanceVirtual(t *testing.T) {
	runConformanceVirtual(t, Options{})
}

// TestConformanceVirtualTinyInline repeats it with a 16-byte inline
// threshold, so that copies into the cache take the data-file paths.
func TestConformanceVirtualTinyInline(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	runConformanceVirtual(t, Options{InlineMax: 16, QueueCap: 8, BatchItems: 4})
}

func runConformanceVirtual(t *testing.T, opt Options) {
	opt.CommitInterval = time.Millisecond
	cases, sets := 0, 0
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		dir := t.TempDir()
		f, err := Create(dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		st := newTestStore()
		f.SetResolver(st.resolve)
		vc := &virtualCase{f: f, st: st}
		t.Cleanup(func() {
			cases++
			sets += vc.sets
			vc.check(t)
			vc.reopen(t, dir)
		})
		return posixtest.Hooked(t, &pathFS{f: f}, vc.hook)
	})
	t.Logf("%d cases, %d files made virtual", cases, sets)
	if sets == 0 {
		t.Error("no file was made virtual")
	}
}

// virtualCase is one case's cache (for its counts) and revisions.
type virtualCase struct {
	f    *FS
	st   *testStore
	sets int // SetVirtual calls
}

// hook makes the case's open file virtual: its bytes become a revision
// of the store, its times are kept (SetVirtual sets the ctime).
func (vc *virtualCase) hook(pf posixtest.File) error {
	f, ino := pf.(*pathFile).f, pf.(*pathFile).ino
	a, err := f.GetAttr(bg, ino)
	if err != nil {
		return err
	}
	data, err := readIno(f, ino, a.Size)
	if err != nil {
		return err
	}
	ref := vc.st.add(fmt.Sprintf("ino%d", ino), data)
	b, err := f.SetVirtual(bg, ino, ref, uint64(len(data)), a.Mtime)
	if err != nil {
		return err
	}
	if !b.Mtime.Equal(a.Mtime) || !b.Atime.Equal(a.Atime) || b.Size != a.Size || b.Mode != a.Mode || b.Nlink != a.Nlink {
		return fmt.Errorf("SetVirtual changed the attributes: %+v, was %+v", b, a)
	}
	vc.sets++
	return nil
}

// readIno reads size bytes of regular file ino.
func readIno(f *FS, ino Ino, size uint64) ([]byte, error) {
	buf := make([]byte, size+1)
	n := 0
	for n < len(buf) {
		k, err := f.ReadInode(bg, ino, int64(n), buf[n:])
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	if uint64(n) != size {
		return nil, fmt.Errorf("inode %d: read %d bytes, size %d", ino, n, size)
	}
	return buf[:n], nil
}

// check fails a case of posixtest.ReadBackCases that did not resolve a revision or
// copy one into the cache.
func (vc *virtualCase) check(t *testing.T) {
	cow, ok := posixtest.ReadBackCases[path.Base(t.Name())]
	if !ok || t.Skipped() {
		return
	}
	if vc.sets == 0 || vc.st.calls == 0 {
		t.Errorf("%d files made virtual, %d revisions read", vc.sets, vc.st.calls)
	}
	if m := vc.f.VirtualStats().Materialized; cow && m == 0 {
		t.Errorf("no virtual file was copied into the cache")
	}
}

// TestRandomOpsAgainstKernelVirtual is TestRandomOpsAgainstKernel with
// the cache's files made virtual after every change and before every
// close (TestConformanceVirtual's hook): every result and the trees must
// still agree with the kernel's, through reopens and compactions, with
// fallocate's modes too.
func TestRandomOpsAgainstKernelVirtual(t *testing.T) {
	seeds, steps := []uint64{11, 12, 13, 14}, 600
	if testing.Short() {
		seeds, steps = seeds[:1], 150
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			st := newTestStore()
			runRandomOps(t, seed, steps, st)
			if st.calls == 0 {
				t.Error("no virtual file was read")
			}
		})
	}
}

// treeEntry is what a reopen must keep of a name.
type treeEntry struct {
	ino      Ino
	mode     uint32
	nlink    uint32
	size     uint64
	uid, gid uint32
	mtime    int64
	data     string
	virtual  bool
}

// snapshotTree lists every name under the root with its entry.
func snapshotTree(t *testing.T, f *FS) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	var walk func(dir Ino, prefix string)
	walk = func(dir Ino, prefix string) {
		ents, err := f.ReadDir(bg, dir, 0)
		if err != nil {
			t.Fatalf("readdir %q: %v", prefix, err)
		}
		for _, e := range ents {
			name := prefix + e.Name
			a, err := f.GetAttr(bg, e.Ino)
			if err != nil {
				t.Fatalf("getattr %q: %v", name, err)
			}
			te := treeEntry{ino: a.Ino, mode: a.Mode, nlink: a.Nlink, size: a.Size, uid: a.Uid, gid: a.Gid, mtime: a.Mtime.UnixNano()}
			switch a.Mode & syscall.S_IFMT {
			case syscall.S_IFREG:
				data, err := readIno(f, a.Ino, a.Size)
				if err != nil {
					t.Fatalf("read %q: %v", name, err)
				}
				te.data = string(data)
				_, te.virtual, err = f.Virtual(bg, a.Ino)
				if err != nil {
					t.Fatal(err)
				}
			case syscall.S_IFLNK:
				if te.data, err = f.Readlink(bg, a.Ino); err != nil {
					t.Fatalf("readlink %q: %v", name, err)
				}
			case syscall.S_IFDIR:
				walk(a.Ino, name+"/")
			}
			out[name] = te
		}
	}
	walk(RootIno, "")
	return out
}

// reopen closes the case's cache, checks it, opens it again and finds
// the same tree.
func (vc *virtualCase) reopen(t *testing.T, dir string) {
	before := snapshotTree(t, vc.f)
	f := closeAndReopen(t, vc.f, dir)
	f.SetResolver(vc.st.resolve)
	after := snapshotTree(t, f)
	posixtest.SameTree(t, "reopened", before, after)
	if err := f.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	checkFsck(t, dir)
}

// TestVirtualConcurrent: reads of a virtual file from several
// goroutines while another copies it into the cache (a write, a
// truncation, a punched hole) or moves it to another revision
// (posixtest.RaceChanges).
func TestVirtualConcurrent(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64})
	st := newTestStore()
	f.SetResolver(st.resolve)
	revA, revB := posixtest.RaceRevisions()
	refA, refB := st.add("f", revA), st.add("f", revB)
	ino := createFile(t, f, RootIno, "f", nil).Ino
	setVirtual := func(ref VirtualRef) func() error {
		return func() error { _, err := f.SetVirtual(bg, ino, ref, posixtest.RaceSize, time.Time{}); return err }
	}
	posixtest.RaceChanges(t, 24, posixtest.ChangeRace{
		Reset: setVirtual(refA),
		Read:  func(off int64, buf []byte) (int, error) { return f.ReadInode(bg, ino, off, buf) },
		Write: func(off int64, b []byte) error { _, err := f.WriteInode(bg, ino, off, b, syscall.O_RDWR); return err },
		Truncate: func(size int64) error {
			sz := uint64(size)
			_, err := f.SetAttr(bg, ino, SetAttr{Size: &sz})
			return err
		},
		PunchHole: func(off, n int64) error { return f.Fallocate(bg, ino, off, n, FallocPunchHole|FallocKeepSize) },
		Move:      setVirtual(refB),
	})
	if st.calls == 0 {
		t.Error("no revision was read")
	}
}
