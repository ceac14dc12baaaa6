//go:build linux

package fsnode

import (
	"bytes"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
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
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("reopened: %q is gone", name)
		case a != b:
			t.Errorf("reopened: %q is %+v, was %+v", name, a, b)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("reopened: %q appeared", name)
		}
	}
	if err := f.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	checkFsck(t, dir)
}

// TestVirtualConcurrent: reads of a virtual file running while another
// goroutine copies it into the cache (a write, a truncation, a punched
// hole) or moves it to another revision. While the change runs, a read
// is one revision's bytes or the other's, never a mix, and across a
// copy every byte is the revision's or the change's; a read that starts
// after the change returned shows it in full; a range no change touches
// reads the revision's bytes throughout; and no read fails.
func TestVirtualConcurrent(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64})
	st := newTestStore()
	f.SetResolver(st.resolve)
	const size = 200_000
	revA, revB := make([]byte, size), make([]byte, size)
	for i := range revA {
		revA[i], revB[i] = byte(i*7+1), byte(i*13+5)
	}
	refA, refB := st.add("f", revA), st.add("f", revB)
	ino := createFile(t, f, RootIno, "f", nil).Ino
	const readers = 4
	for round := range 24 {
		if _, err := f.SetVirtual(bg, ino, refA, size, time.Time{}); err != nil {
			t.Fatal(err)
		}
		// during says whether a read at off during the change may be got;
		// after, whether one once it returned may be.
		var during, after func(off int, got []byte) bool
		var change func() error
		// bytesOK checks each byte of got against may.
		bytesOK := func(off int, got []byte, may func(i int, b byte) bool) bool {
			for i, b := range got {
				if !may(off+i, b) {
					return false
				}
			}
			return true
		}
		isRev := func(rev []byte) func(off int, got []byte) bool {
			return func(off int, got []byte) bool { return bytes.Equal(got, rev[off:off+len(got)]) }
		}
		switch round % 4 {
		case 0:
			written := func(i int) bool { return i >= 5000 && i < 5003 }
			during = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || written(i) && b == "XYZ"[i-5000] })
			}
			after = func(off int, got []byte) bool {
				return len(got) == min(9000, size-off) && bytesOK(off, got, func(i int, b byte) bool {
					return !written(i) && b == revA[i] || written(i) && b == "XYZ"[i-5000]
				})
			}
			change = func() error { _, err := f.WriteInode(bg, ino, 5000, []byte("XYZ"), syscall.O_RDWR); return err }
		case 1:
			during = isRev(revA)
			after = func(off int, got []byte) bool { return len(got) == max(0, min(9000, 1000-off)) && isRev(revA)(off, got) }
			change = func() error {
				sz := uint64(1000)
				_, err := f.SetAttr(bg, ino, SetAttr{Size: &sz})
				return err
			}
		case 2:
			hole := func(i int) bool { return i >= 100_000 && i < 104_096 }
			during = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return b == revA[i] || hole(i) && b == 0 })
			}
			after = func(off int, got []byte) bool {
				return bytesOK(off, got, func(i int, b byte) bool { return !hole(i) && b == revA[i] || hole(i) && b == 0 })
			}
			change = func() error { return f.Fallocate(bg, ino, 100_000, 4096, FallocPunchHole|FallocKeepSize) }
		case 3:
			during = func(off int, got []byte) bool { return isRev(revA)(off, got) || isRev(revB)(off, got) }
			after = isRev(revB)
			change = func() error { _, err := f.SetVirtual(bg, ino, refB, size, time.Time{}); return err }
		}
		var changed atomic.Bool
		stop := make(chan struct{})
		var started, done sync.WaitGroup
		errs := make(chan error, readers)
		for r := range readers {
			started.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				first := true
				defer func() {
					if first {
						started.Done()
					}
				}()
				buf := make([]byte, 9000)
				if r == 0 {
					buf = buf[:100] // a range no change touches: [0, 1000)
				}
				for k := 0; ; k++ {
					off := (k*40_009 + r*17_011) % size
					if r == 0 {
						off = k % 900
					}
					late := changed.Load()
					n, err := f.ReadInode(bg, ino, int64(off), buf)
					if err != nil {
						errs <- fmt.Errorf("read at %d: %w", off, err)
						return
					}
					if late && !after(off, buf[:n]) {
						errs <- fmt.Errorf("read at %d after the change: %d bytes, not what it made", off, n)
						return
					} else if !late && !during(off, buf[:n]) {
						errs <- fmt.Errorf("read at %d during the change: %d bytes, neither before nor after", off, n)
						return
					}
					if first {
						first = false
						started.Done()
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
		}
		started.Wait() // every reader has read once: the change meets them reading
		err := change()
		changed.Store(true)
		close(stop)
		done.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("round %d: %v", round, e)
		}
		if err != nil {
			t.Fatalf("round %d: change: %v", round, err)
		}
		got := readAll(t, f, ino)
		if n := len(got); !after(0, got[:min(n, 9000)]) || n > 9000 && !after(9000, got[9000:min(n, 18000)]) {
			t.Errorf("round %d: the file after the change is not what it made", round)
		}
	}
	if st.calls == 0 {
		t.Error("no revision was read")
	}
}
