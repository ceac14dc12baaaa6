//go:build linux

package mount

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/fsnode/posixtest"
	"github.com/hgfs/hgfs/internal/mmapload"
)

// TestConformanceVirtualMount runs fsnode's POSIX suite through the
// kernel over virtual files, on each backend that takes VirtualXattr:
// every regular file a case writes is made virtual (VirtualXattr set
// through its descriptor, its bytes a revision of the test's resolver)
// after each write, truncation or fallocate and before each close, so
// the case's next read, write, truncation, O_TRUNC or O_APPEND open,
// rename, link, unlink while open, chmod, utimens, extended attribute,
// fallocate or fsync meets a virtual file whose pages the kernel has
// dropped. Each case must behave as over ordinary files. The mount's
// own POSIX cases (posixCases) run too, each file made virtual once
// writeFile wrote it. Then the whole tree (contents, attributes, which files are virtual) must be the same
// after an unmount and a remount, with fsck clean.
func TestConformanceVirtualMount(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			m := newMountWith(t, b.mount)
			info, err := ReadInfo(m.mp)
			if err != nil {
				t.Fatal(err)
			}
			if !info.Virtual {
				// By design (Info.Virtual): hgfs update writes files
				// through such a mount instead.
				t.Logf("the %s backend takes no %s: nothing to run", b.name, VirtualXattr)
				return
			}
			revs := newTestRevs()
			m.fsys.SetResolver(revs.resolve)
			cases, sets := 0, 0
			t.Run("Conformance", func(t *testing.T) {
				posixtest.Run(t, func(t *testing.T) posixtest.FS {
					dir := m.path(posixtest.DirName(t))
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					vc := &mountVirtualCase{revs: revs, calls: revs.resolutions(), copies: m.fsys.VirtualStats().Materialized}
					t.Cleanup(func() {
						cases++
						sets += vc.sets
						vc.check(t, m)
					})
					return posixtest.Hooked(t, posixtest.OSWith(dir, b.lacks), vc.hook)
				})
			})
			// The mount's own cases, each file made virtual once
			// writeFile wrote it.
			t.Run("POSIX", func(t *testing.T) {
				vc := &mountVirtualCase{revs: revs}
				afterWriteFile = func(t *testing.T, name string) {
					if !strings.HasPrefix(name, m.mp+"/") {
						return // Access's native twin
					}
					f, err := os.Open(name)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					if err := vc.makeVirtual(int(f.Fd())); err != nil {
						t.Fatalf("making %s virtual: %v", name, err)
					}
				}
				defer func() { afterWriteFile = nil }()
				suitePOSIX(t, b, m)
				cases += len(posixCases)
				sets += vc.sets
			})
			t.Logf("%d cases, %d files made virtual", cases, sets)
			if sets == 0 {
				t.Fatal("no file was made virtual")
			}
			before := snapshotMount(t, m.mp)
			m.remount(t)
			m.fsys.SetResolver(revs.resolve)
			after := snapshotMount(t, m.mp)
			posixtest.SameTree(t, "remounted", before, after)
		})
	}
}

// mountVirtualCase is one case's count of files made virtual, and the
// resolutions and copies into the cache before it.
type mountVirtualCase struct {
	revs   *testRevs
	sets   int
	calls  int
	copies int64
}

// hook makes the case's open file virtual through its descriptor: its
// bytes (read through /proc/self/fd, which reopens even an unlinked
// file) become a revision, its mtime is kept.
func (vc *mountVirtualCase) hook(f posixtest.File) error {
	return vc.makeVirtual(int(f.(interface{ Fd() uintptr }).Fd()))
}

// makeVirtual makes the file open as fd virtual.
func (vc *mountVirtualCase) makeVirtual(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return err
	}
	if int64(len(data)) != st.Size {
		return fmt.Errorf("read %d bytes, size %d", len(data), st.Size)
	}
	set := VirtualSet{Ref: vc.revs.add(fmt.Sprintf("ino%d", st.Ino), data), Size: uint64(len(data)), Mtime: time.Unix(st.Mtim.Unix())}
	if err := unix.Fsetxattr(fd, VirtualXattr, set.Encode(), 0); err != nil {
		return fmt.Errorf("setting %s: %w", VirtualXattr, err)
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Size != st.Size || now.Mtim != st.Mtim || now.Atim != st.Atim || now.Mode != st.Mode || now.Nlink != st.Nlink || now.Ino != st.Ino {
		return fmt.Errorf("made virtual, the file's attributes changed: %+v, were %+v", now, st)
	}
	if _, err := unix.Fgetxattr(fd, VirtualXattr, make([]byte, 4200)); err != nil {
		return fmt.Errorf("made virtual, %s: %w", VirtualXattr, err)
	}
	vc.sets++
	return nil
}

// check fails a case of posixtest.ReadBackCases that did not resolve a
// revision or copy one into the cache.
func (vc *mountVirtualCase) check(t *testing.T, m *testMount) {
	cow, ok := posixtest.ReadBackCases[path.Base(t.Name())]
	if !ok || t.Skipped() {
		return
	}
	if vc.sets == 0 || vc.revs.resolutions() == vc.calls {
		t.Errorf("%d files made virtual, %d revisions read", vc.sets, vc.revs.resolutions()-vc.calls)
	}
	if cow && m.fsys.VirtualStats().Materialized == vc.copies {
		t.Errorf("no virtual file was copied into the cache")
	}
}

// mountEntry is what a remount must keep of a name.
type mountEntry struct {
	ino, nlink   uint64
	mode         uint32
	uid, gid     uint32
	rdev         uint64
	size         int64
	mtime        unix.Timespec
	data, xattrs string
	virtual      bool
}

// snapshotMount lists every name under the mountpoint with its entry.
func snapshotMount(t *testing.T, mp string) map[string]mountEntry {
	t.Helper()
	out := map[string]mountEntry{}
	err := filepath.WalkDir(mp, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == mp {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		e := mountEntry{ino: st.Ino, nlink: uint64(st.Nlink), mode: st.Mode, uid: st.Uid, gid: st.Gid, rdev: st.Rdev, size: st.Size, mtime: st.Mtim}
		names, err := posixtest.XattrNames(p)
		if err != nil {
			return err
		}
		e.xattrs = fmt.Sprint(names)
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = string(data)
			_, err = unix.Getxattr(p, VirtualXattr, make([]byte, 4200))
			if err != nil && !errors.Is(err, unix.ENODATA) {
				return err
			}
			e.virtual = err == nil
		case syscall.S_IFLNK:
			if e.data, err = os.Readlink(p); err != nil {
				return err
			}
		}
		out[p[len(mp):]] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// virtualOps are what a program may do to a file that the conformance
// suite's cases do not, or not through the kernel's own paths: each
// records what it observes (results, errors, contents as hashes, times
// as comparisons), and TestVirtualMountOps runs it on an ordinary file
// and on a virtual one of the same contents and mtime, which must
// record the same and end the same. The file is f in dir; an op may
// make other files there.
var virtualOps = map[string]func(t *testing.T, dir string, rec func(format string, args ...any)){
	"Pread": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_RDONLY)
		defer unix.Close(fd)
		size := fstatT(t, fd).Size
		for _, at := range []int64{0, 1, size / 2, size - 1, size, size + 10, 4095, 4096, 131072} {
			buf := make([]byte, 70000)
			n, err := unix.Pread(fd, buf, at)
			rec("pread at %d: %d %s %v", at, max(n, 0), hashOf(buf[:max(n, 0)]), err)
		}
	},
	"Seek": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_RDONLY)
		defer unix.Close(fd)
		for _, s := range []struct {
			off    int64
			whence int
		}{{0, unix.SEEK_END}, {0, unix.SEEK_DATA}, {0, unix.SEEK_HOLE}, {5, unix.SEEK_DATA}, {1 << 30, unix.SEEK_DATA}, {1 << 30, unix.SEEK_HOLE}} {
			off, err := unix.Seek(fd, s.off, s.whence)
			rec("lseek %d %d: %d %v", s.off, s.whence, off, err)
		}
	},
	"AppendAfterSeek": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_WRONLY|unix.O_APPEND)
		_, err := unix.Seek(fd, 0, unix.SEEK_SET)
		rec("seek: %v", err)
		n, err := unix.Write(fd, []byte("appended"))
		rec("write: %d %v", n, err)
		off, err := unix.Seek(fd, 0, unix.SEEK_CUR)
		rec("position: %d %v", off, err)
		unix.Close(fd)
	},
	"TruncateSameSize": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		before := lstatT(t, p)
		rec("truncate: %v", unix.Truncate(p, before.Size))
		after := lstatT(t, p)
		rec("size %d, mtime moved %v", after.Size, after.Mtim != before.Mtim)
	},
	"TruncateReaderOpen": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		fd := openFd(t, dir, "f", unix.O_RDONLY)
		defer unix.Close(fd)
		buf := make([]byte, 64)
		n, err := unix.Pread(fd, buf, 0)
		rec("pread: %d %s %v", n, hashOf(buf[:max(n, 0)]), err)
		size := lstatT(t, p).Size
		rec("truncate down: %v", unix.Truncate(p, size/3))
		n, err = unix.Pread(fd, buf, 0)
		rec("pread after: %d %s %v", n, hashOf(buf[:max(n, 0)]), err)
		rec("truncate up: %v", unix.Truncate(p, size+5000))
		big := make([]byte, size+6000)
		n, err = unix.Pread(fd, big, 0)
		rec("pread the hole: %d %s %v", n, hashOf(big[:max(n, 0)]), err)
	},
	"CopyFileRange": func(t *testing.T, dir string, rec func(string, ...any)) {
		src := openFd(t, dir, "f", unix.O_RDWR)
		defer unix.Close(src)
		dst := openFd(t, dir, "g", unix.O_RDWR|unix.O_CREAT)
		defer unix.Close(dst)
		size := fstatT(t, src).Size
		n, err := unix.CopyFileRange(src, nil, dst, nil, int(size), 0)
		rec("to a new file: %d %v", n, err)
		var in, out int64 = 0, size
		n, err = unix.CopyFileRange(src, &in, src, &out, int(min(size, 5000)), 0)
		rec("within the file: %d %v (offsets %d %d)", n, err, in, out)
		in, out = 0, 1
		n, err = unix.CopyFileRange(dst, &in, src, &out, 3, 0)
		rec("into it: %d %v", n, err)
	},
	"Sendfile": func(t *testing.T, dir string, rec func(string, ...any)) {
		src := openFd(t, dir, "f", unix.O_RDONLY)
		defer unix.Close(src)
		dst := openFd(t, dir, "g", unix.O_WRONLY|unix.O_CREAT)
		defer unix.Close(dst)
		off := int64(1)
		n, err := unix.Sendfile(dst, src, &off, 1<<20)
		rec("sendfile: %d %v, offset %d", n, err, off)
	},
	"UtimeOmitNow": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		at := unix.NsecToTimespec(time.Unix(1_600_000_000, 123456789).UnixNano())
		mt := unix.NsecToTimespec(time.Unix(1_500_000_000, 987654321).UnixNano())
		rec("set: %v", unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{at, mt}, 0))
		st := lstatT(t, p)
		rec("times kept: %v %v", st.Atim == at, st.Mtim == mt)
		before := time.Now().Add(-time.Second)
		rec("omit, now: %v", unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}, 0))
		st = lstatT(t, p)
		rec("atime kept %v, mtime now %v", st.Atim == at, !time.Unix(st.Mtim.Unix()).Before(before))
	},
	"Locks": func(t *testing.T, dir string, rec func(string, ...any)) {
		a := openFd(t, dir, "f", unix.O_RDWR)
		defer unix.Close(a)
		b := openFd(t, dir, "f", unix.O_RDWR)
		defer unix.Close(b)
		rec("flock: %v", unix.Flock(a, unix.LOCK_EX|unix.LOCK_NB))
		rec("second flock: %v", unix.Flock(b, unix.LOCK_EX|unix.LOCK_NB))
		lk := unix.Flock_t{Type: unix.F_WRLCK}
		rec("fcntl lock: %v", unix.FcntlFlock(uintptr(a), unix.F_SETLK, &lk))
		n, err := unix.Pwrite(a, []byte("locked"), 2)
		rec("write under the lock: %d %v", n, err)
	},
	"LinkWriteOther": func(t *testing.T, dir string, rec func(string, ...any)) {
		p, q := filepath.Join(dir, "f"), filepath.Join(dir, "g")
		rec("link: %v", unix.Link(p, q))
		before := lstatT(t, p) // cached from here on
		fd := openFd(t, dir, "g", unix.O_WRONLY)
		n, err := unix.Pwrite(fd, []byte("XYZ"), 3)
		rec("write through g: %d %v", n, err)
		unix.Close(fd)
		rec("truncate g: %v", unix.Truncate(q, before.Size+2))
		after := lstatT(t, p)
		rec("f: size %d nlink %d, mtime moved %v, same inode %v", after.Size, after.Nlink, after.Mtim != before.Mtim, after.Ino == lstatT(t, q).Ino)
		rec("unlink f: %v", unix.Unlink(p))
		rec("g: nlink %d", lstatT(t, q).Nlink)
	},
	"SetuidWrite": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		rec("chmod: %v", unix.Chmod(p, 0o6755))
		fd := openFd(t, dir, "f", unix.O_WRONLY)
		n, err := unix.Pwrite(fd, []byte("w"), 0)
		rec("write: %d %v", n, err)
		unix.Close(fd)
		rec("mode %#o", lstatT(t, p).Mode)
		rec("truncate: %v", unix.Truncate(p, 1))
		rec("mode %#o", lstatT(t, p).Mode)
	},
	"Fsync": func(t *testing.T, dir string, rec func(string, ...any)) {
		for _, flag := range []int{unix.O_RDONLY, unix.O_RDWR} {
			fd := openFd(t, dir, "f", flag)
			rec("fsync %d: %v, fdatasync: %v", flag, unix.Fsync(fd), unix.Fdatasync(fd))
			rec("syncfs: %v", unix.Syncfs(fd))
			unix.Close(fd)
		}
	},
	"Access": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		for _, mode := range []uint32{0o644, 0o000, 0o100, 0o444} {
			rec("chmod %o: %v", mode, unix.Chmod(p, mode))
			for mask := uint32(0); mask <= 7; mask++ {
				rec("access %d: %v", mask, unix.Access(p, mask))
			}
		}
		rec("chmod back: %v", unix.Chmod(p, 0o644))
	},
	"Xattrs": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		rec("set: %v", unix.Setxattr(p, "user.a", []byte("alpha"), 0))
		names, err := posixtest.XattrNames(p)
		rec("list: %q %v", names, err)
		buf := make([]byte, 16)
		n, err := unix.Getxattr(p, "user.a", buf)
		rec("get: %q %v", buf[:max(n, 0)], err)
		rec("remove: %v", unix.Removexattr(p, "user.a"))
		names, err = posixtest.XattrNames(p)
		rec("list: %q %v", names, err)
	},
	"RenameOverOpen": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_RDONLY)
		defer unix.Close(fd)
		g := filepath.Join(dir, "g")
		rec("write g: %v", os.WriteFile(g, []byte("replacement"), 0o644))
		rec("rename: %v", unix.Rename(g, filepath.Join(dir, "f")))
		buf := make([]byte, 1<<20)
		n, err := unix.Pread(fd, buf, 0)
		rec("the replaced file: %d %s %v, nlink %d", n, hashOf(buf[:max(n, 0)]), err, fstatT(t, fd).Nlink)
	},
	"UnlinkOpenWrite": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_RDWR)
		defer unix.Close(fd)
		rec("unlink: %v", unix.Unlink(filepath.Join(dir, "f")))
		n, err := unix.Pwrite(fd, []byte("gone"), 4)
		rec("pwrite: %d %v", n, err)
		buf := make([]byte, 1<<20)
		n, err = unix.Pread(fd, buf, 0)
		rec("pread: %d %s %v", n, hashOf(buf[:max(n, 0)]), err)
		rec("ftruncate: %v, size %d, nlink %d", unix.Ftruncate(fd, 7), fstatT(t, fd).Size, fstatT(t, fd).Nlink)
	},
	"Fallocate": func(t *testing.T, dir string, rec func(string, ...any)) {
		fd := openFd(t, dir, "f", unix.O_RDWR)
		defer unix.Close(fd)
		for _, a := range []struct {
			mode     uint32
			off, len int64
		}{
			{unix.FALLOC_FL_KEEP_SIZE, 0, 100},
			{unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, 2, 5},
			{unix.FALLOC_FL_ZERO_RANGE, 8, 3},
			{0, 100, 70000},
		} {
			rec("fallocate %#x %d %d: %v, size %d", a.mode, a.off, a.len, unix.Fallocate(fd, a.mode, a.off, a.len), fstatT(t, fd).Size)
		}
	},
	"StatBlocks": func(t *testing.T, dir string, rec func(string, ...any)) {
		st := lstatT(t, filepath.Join(dir, "f"))
		rec("size %d, blocks cover it %v, blksize %d", st.Size, st.Blocks*512 >= st.Size, st.Blksize)
	},
	"MmapWriteSync": func(t *testing.T, dir string, rec func(string, ...any)) {
		mmapChild(t, "writesync", filepath.Join(dir, "f"), "40", "7", "1")
	},
	"MmapSeesWrite": func(t *testing.T, dir string, rec func(string, ...any)) {
		p := filepath.Join(dir, "f")
		mapped := mapWaitChild(t, p, func() {
			fd := openFd(t, dir, "f", unix.O_WRONLY)
			defer unix.Close(fd)
			size := fstatT(t, fd).Size
			for _, off := range []int64{0, size / 2, size - 3} {
				n, err := unix.Pwrite(fd, []byte("pwr"), off)
				rec("pwrite at %d: %d %v", off, n, err)
			}
		})
		rec("the mapping: %s", hashOf(mapped))
	},
	"MmapRead": func(t *testing.T, dir string, rec func(string, ...any)) {
		rec("the mapping: %s", hashOf(mapWaitChild(t, filepath.Join(dir, "f"), func() {})))
	},
}

// readOnlyOps are the virtualOps that leave f's contents alone: on a
// virtual file they must read its revision without copying it.
var readOnlyOps = map[string]bool{
	"Pread": true, "Seek": true, "UtimeOmitNow": true, "Fsync": true, "Access": true, "Xattrs": true,
	"StatBlocks": true, "MmapRead": true, "Sendfile": true,
}

// TestVirtualMountOps runs virtualOps on a mount, each on an ordinary
// file and on a virtual one of the same contents and mtime, small and
// larger than a few pages: what they record and the files they leave
// (contents and attributes) must be the same. Then the same after a
// remount.
func TestVirtualMountOps(t *testing.T) {
	m := newMount(t)
	revs := newTestRevs()
	m.fsys.SetResolver(revs.resolve)
	mtime := time.Unix(1_700_000_000, 0)
	type result struct{ plain, virtual string }
	var results []result
	for name, op := range virtualOps {
		for _, size := range []int64{13, 300_000} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				data := make([]byte, size)
				for i := range data {
					data[i] = mmapload.Pattern(int64(i))
				}
				var logs [2]string
				for i, kind := range []string{"plain", "virtual"} {
					dir := m.path(fmt.Sprintf("%s-%s-%d", kind, name, size))
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					p := filepath.Join(dir, "f")
					if err := os.WriteFile(p, data, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(p, mtime, mtime); err != nil {
						t.Fatal(err)
					}
					if kind == "virtual" {
						set := VirtualSet{Ref: revs.add(name, data), Size: uint64(size), Mtime: mtime}
						if err := unix.Setxattr(p, VirtualXattr, set.Encode(), 0); err != nil {
							t.Fatal(err)
						}
					}
					var log strings.Builder
					op(t, dir, func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) })
					logs[i] = log.String() + describeDir(t, dir)
					if kind == "virtual" && readOnlyOps[name] {
						if _, err := unix.Getxattr(p, VirtualXattr, make([]byte, 4200)); err != nil {
							t.Errorf("%s copied the virtual file into the cache (%s: %v)", name, VirtualXattr, err)
						}
					}
				}
				if logs[0] != logs[1] {
					t.Errorf("on an ordinary file:\n%s\non a virtual file:\n%s", logs[0], logs[1])
				}
				results = append(results, result{m.path(fmt.Sprintf("plain-%s-%d", name, size)), m.path(fmt.Sprintf("virtual-%s-%d", name, size))})
			})
		}
	}
	m.remount(t)
	m.fsys.SetResolver(revs.resolve)
	for _, r := range results {
		if p, v := describeDir(t, r.plain), describeDir(t, r.virtual); p != v {
			t.Errorf("after a remount, %s:\n%s\nand %s:\n%s", r.plain, p, r.virtual, v)
		}
	}
}

// describeDir records the files in dir: name, mode, size, links,
// contents.
func describeDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		st := lstatT(t, p)
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s: mode %#o size %d nlink %d contents %s %v\n", e.Name(), st.Mode, st.Size, st.Nlink, hashOf(data), err)
	}
	return b.String()
}

func hashOf(b []byte) string {
	s := sha1.Sum(b)
	return fmt.Sprintf("%d:%x", len(b), s[:6])
}

func openFd(t *testing.T, dir, name string, flag int) int {
	t.Helper()
	fd, err := unix.Open(filepath.Join(dir, name), flag|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return fd
}

func fstatT(t *testing.T, fd int) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func lstatT(t *testing.T, p string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestVirtualMountConcurrent: preads of a virtual file through the
// kernel from several goroutines while another writes it, truncates it,
// punches a hole in it or moves it to another revision (VirtualXattr)
// through the same descriptor (posixtest.RaceChanges): the kernel's
// pages and the daemon's copy on write must agree with every read. A
// read racing a move may mix the revisions page by page (Torn), as a
// read racing a write(2) may on any Linux file system; one that starts
// after the move returned must see only the new revision. A read racing
// a truncation may see zeros past the new size (TruncZeros: the
// kernel's FUSE client zero-fills a short read while the size is
// unstable; any FUSE file system shows it).
func TestVirtualMountConcurrent(t *testing.T) {
	m := newMount(t)
	revs := newTestRevs()
	m.fsys.SetResolver(revs.resolve)
	revA, revB := posixtest.RaceRevisions()
	refA, refB := revs.add("f", revA), revs.add("f", revB)
	writeFile(t, m.path("f"), "")
	fd := openFd(t, m.mp, "f", unix.O_RDWR)
	defer unix.Close(fd)
	setVirtual := func(ref fsnode.VirtualRef) func() error {
		return func() error {
			set := VirtualSet{Ref: ref, Size: posixtest.RaceSize, Mtime: time.Unix(1_700_000_000, 0)}
			return unix.Fsetxattr(fd, VirtualXattr, set.Encode(), 0)
		}
	}
	posixtest.RaceChanges(t, 24, posixtest.ChangeRace{
		Reset:    setVirtual(refA),
		Read:     func(off int64, buf []byte) (int, error) { return unix.Pread(fd, buf, off) },
		Write:    func(off int64, b []byte) error { _, err := unix.Pwrite(fd, b, off); return err },
		Truncate: func(size int64) error { return unix.Ftruncate(fd, size) },
		PunchHole: func(off, n int64) error {
			return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		},
		Move:       setVirtual(refB),
		Torn:       true,
		TruncZeros: true,
	})
	if revs.resolutions() == 0 {
		t.Error("no revision was read")
	}
}

// TestVirtualMountDirtyMapping: a process holds pages of a file dirty
// in a shared mapping while the file is moved to another revision. As
// when an ordinary file is rewritten in place (write(2) of the new
// contents), the new revision is what the file holds afterwards, also
// once the mapping is synced and gone: the stale dirty pages are not
// written over it.
func TestVirtualMountDirtyMapping(t *testing.T) {
	m := newMount(t)
	revs := newTestRevs()
	m.fsys.SetResolver(revs.resolve)
	revA, revB := posixtest.RaceRevisions()
	var got [2][]byte
	for i, kind := range []string{"plain", "virtual"} {
		p := m.path(kind)
		if err := os.WriteFile(p, revA, 0o644); err != nil {
			t.Fatal(err)
		}
		move := func() error {
			return os.WriteFile(p, revB, 0o644) // O_TRUNC, then the new contents
		}
		if kind == "virtual" {
			mtime := time.Unix(1_700_000_000, 0)
			set := VirtualSet{Ref: revs.add(kind, revA), Size: uint64(len(revA)), Mtime: mtime}
			if err := unix.Setxattr(p, VirtualXattr, set.Encode(), 0); err != nil {
				t.Fatal(err)
			}
			move = func() error {
				set := VirtualSet{Ref: revs.add(kind, revB), Size: uint64(len(revB)), Mtime: mtime.Add(time.Second)}
				return unix.Setxattr(p, VirtualXattr, set.Encode(), 0)
			}
		}
		cmd := mmapChildCmd("dirtywait", p, "10", "100000", "199999")
		stdin, _, stderr := startReadyChild(t, cmd, kind+": dirtywait child")
		if err := move(); err != nil {
			t.Errorf("%s: moving the file: %v", kind, err)
		}
		fmt.Fprintln(stdin)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: child: %v\n%s", kind, err, stderr.String())
		}
		var err error
		if got[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	for i, kind := range []string{"plain", "virtual"} {
		t.Logf("%s: %d bytes: %s", kind, len(got[i]), describeRevs(got[i], revA, revB))
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("the virtual file ends differently from the ordinary one")
	}
}

// describeRevs says which of revisions a and b each page of got holds.
func describeRevs(got, a, b []byte) string {
	var out []string
	for off := 0; off < len(got); off += 4096 {
		end := min(off+4096, len(got))
		var which string
		switch {
		case end <= len(b) && bytes.Equal(got[off:end], b[off:end]):
			which = "B"
		case end <= len(a) && bytes.Equal(got[off:end], a[off:end]):
			which = "A"
		default:
			which = "?"
		}
		if len(out) > 0 && strings.HasSuffix(out[len(out)-1], " "+which) {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", off/4096, which))
	}
	return strings.Join(out, ", ")
}
