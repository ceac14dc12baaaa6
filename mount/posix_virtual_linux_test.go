//go:build linux

package mount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// TestConformanceVirtualMount runs fsnode's POSIX suite through the
// kernel over virtual files, on each backend that takes VirtualXattr:
// every regular file a case writes is made virtual (VirtualXattr set
// through its descriptor, its bytes a revision of the test's resolver)
// after each write, truncation or fallocate and before each close, so
// the case's next read, write, truncation, O_TRUNC or O_APPEND open,
// rename, link, unlink while open, chmod, utimens, extended attribute,
// fallocate or fsync meets a virtual file whose pages the kernel has
// dropped. Each case must behave as over ordinary files. Then the whole
// tree (contents, attributes, which files are virtual) must be the same
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
				t.Skipf("the %s backend takes no %s", b.name, VirtualXattr)
			}
			revs := newTestRevs()
			m.fsys.SetResolver(revs.resolve)
			cases, sets := 0, 0
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
			t.Logf("%d cases, %d files made virtual", cases, sets)
			if sets == 0 {
				t.Fatal("no file was made virtual")
			}
			before := snapshotMount(t, m.mp)
			m.remount(t)
			m.fsys.SetResolver(revs.resolve)
			after := snapshotMount(t, m.mp)
			for name, b := range before {
				a, ok := after[name]
				switch {
				case !ok:
					t.Errorf("remounted: %q is gone", name)
				case a != b:
					t.Errorf("remounted: %q is %+v, was %+v", name, a, b)
				}
			}
			for name := range after {
				if _, ok := before[name]; !ok {
					t.Errorf("remounted: %q appeared", name)
				}
			}
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
	fd := int(f.(interface{ Fd() uintptr }).Fd())
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
