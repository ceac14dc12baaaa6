//go:build linux

package mount

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// posixCases are the mount's POSIX cases beyond fsnode's conformance
// suite; the shared suite (suite_linux_test.go) runs them on every
// backend.
var posixCases = map[string]func(t *testing.T, dir string){
	"SetgidDirectory": func(t *testing.T, dir string) {
		// As on a local filesystem: entries made in a set-group-ID
		// directory take its group, new directories its bit as well.
		gid := 4321 // any group will do for root
		if os.Geteuid() != 0 {
			gid = os.Getgid()
		}
		shared := filepath.Join(dir, "shared")
		if err := os.Mkdir(shared, 0o775); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(shared, -1, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(shared, 0o775|os.ModeSetgid); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(shared, "f"), "x")
		if err := os.Mkdir(filepath.Join(shared, "d"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("f", filepath.Join(shared, "l")); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"f", "d", "l"} {
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(shared, name), &st); err != nil {
				t.Fatal(err)
			}
			if int(st.Gid) != gid {
				t.Errorf("%s: group %d, want the directory's %d", name, st.Gid, gid)
			}
			if isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR; isDir != (st.Mode&syscall.S_ISGID != 0) {
				t.Errorf("%s: mode %o: set-group-ID should be on directories only", name, st.Mode)
			}
		}
	},
	"CreateReadWrite": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "hello")
		if got := readFile(t, p); got != "hello" {
			t.Fatalf("read %q, want hello", got)
		}
		if st := stat(t, p); st.Size != 5 || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
			t.Fatalf("stat: size %d mode %o nlink %d", st.Size, st.Mode, st.Nlink)
		}
		// Overwrite in the middle through a second handle.
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("J"), 1); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		n, err := f.ReadAt(buf, 0)
		if n != 5 || string(buf[:n]) != "hJllo" {
			t.Fatalf("ReadAt = %d %q %v", n, buf[:n], err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		// Sparse write past EOF reads back zeros in the hole.
		f, err = os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("!"), 9); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := readFile(t, p); got != "hJllo\x00\x00\x00\x00!" {
			t.Fatalf("after hole: %q", got)
		}
	},
	"LargeFile": func(t *testing.T, dir string) {
		data := make([]byte, 3<<20+123)
		for i := range data {
			data[i] = byte(i * 7 >> 3)
		}
		p := filepath.Join(dir, "big")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes (%v), equal=%v", len(got), err, bytes.Equal(got, data))
		}
		if st := stat(t, p); st.Blocks*512 < st.Size {
			t.Errorf("blocks %d too few for size %d", st.Blocks, st.Size)
		}
	},
	"Append": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "log")
		writeFile(t, p, "a")
		for _, s := range []string{"b", "cd"} {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			// O_APPEND ignores the position.
			if _, err := f.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		if got := readFile(t, p); got != "abcd" {
			t.Fatalf("got %q, want abcd", got)
		}
	},
	"Truncate": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "0123456789")
		if err := os.Truncate(p, 4); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); got != "0123" {
			t.Fatalf("after shrink: %q", got)
		}
		if err := os.Truncate(p, 6); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); got != "0123\x00\x00" {
			t.Fatalf("after grow: %q", got)
		}
		// O_TRUNC on open.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("x"))
		// ftruncate on an open handle.
		if err := f.Truncate(3); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := readFile(t, p); got != "x\x00\x00" {
			t.Fatalf("after O_TRUNC+ftruncate: %q", got)
		}
	},
	"Exclusive": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); !errors.Is(err, syscall.EEXIST) {
			t.Fatalf("second O_EXCL create: %v, want EEXIST", err)
		}
		if st := stat(t, p); st.Mode&0o777 != 0o600 {
			t.Fatalf("mode %o, want 600", st.Mode&0o777)
		}
	},
	"RenameOverExisting": func(t *testing.T, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, a, "new")
		writeFile(t, b, "old")
		inoA := stat(t, a).Ino
		if err := os.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, b); got != "new" {
			t.Fatalf("b = %q", got)
		}
		if st := stat(t, b); st.Ino != inoA {
			t.Errorf("inode changed across rename: %d -> %d", inoA, st.Ino)
		}
		if _, err := os.Lstat(a); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a still there: %v", err)
		}
		// Across directories, and a directory onto an empty one.
		sub := filepath.Join(dir, "sub")
		os.Mkdir(sub, 0o755)
		if err := os.Rename(b, filepath.Join(sub, "c")); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(sub, "c")); got != "new" {
			t.Fatalf("sub/c = %q", got)
		}
		empty := filepath.Join(dir, "empty")
		os.Mkdir(empty, 0o755)
		// os.Rename refuses to replace a directory; rename(2) does not.
		if err := syscall.Rename(sub, empty); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(empty, "c")); got != "new" {
			t.Fatalf("empty/c = %q", got)
		}
	},
	"RenameFlags": func(t *testing.T, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, a, "A")
		writeFile(t, b, "B")
		err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE)
		if !errors.Is(err, syscall.EEXIST) {
			t.Fatalf("RENAME_NOREPLACE onto existing: %v, want EEXIST", err)
		}
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			t.Fatalf("RENAME_EXCHANGE: %v", err)
		}
		if readFile(t, a) != "B" || readFile(t, b) != "A" {
			t.Fatalf("exchange: a=%q b=%q", readFile(t, a), readFile(t, b))
		}
	},
	"UnlinkWhileOpen": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "still here")
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat after unlink: %v", err)
		}
		if _, err := f.WriteAt([]byte("S"), 0); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32)
		n, _ := f.ReadAt(buf, 0)
		if string(buf[:n]) != "Still here" {
			t.Fatalf("read through unlinked handle: %q", buf[:n])
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink != 0 {
			t.Fatalf("fstat unlinked: nlink %d, %v", st.Nlink, err)
		}
	},
	// Access compares access(2) on the mount with the native file system
	// for every mode class: the kernel decides with default_permissions,
	// the adapter's Access without it (a root mount; see rootOnly).
	"Access": func(t *testing.T, dir string) {
		native := t.TempDir()
		for _, mode := range []uint32{0o644, 0o755, 0o444, 0o000, 0o100, 0o010, 0o001} {
			for _, isDir := range []bool{false, true} {
				name := fmt.Sprintf("f%o-%v", mode, isDir)
				results := make([]string, 0, 2)
				for _, base := range []string{dir, native} {
					p := filepath.Join(base, name)
					if isDir {
						if err := os.Mkdir(p, 0o755); err != nil {
							t.Fatal(err)
						}
					} else {
						writeFile(t, p, "x")
					}
					if err := os.Chmod(p, os.FileMode(mode)); err != nil {
						t.Fatal(err)
					}
					var r []string
					for mask := uint32(0); mask <= 7; mask++ {
						r = append(r, fmt.Sprint(syscall.Access(p, mask)))
					}
					results = append(results, strings.Join(r, ","))
					if err := os.Chmod(p, 0o755); err != nil { // so cleanup can remove it
						t.Fatal(err)
					}
				}
				if results[0] != results[1] {
					t.Errorf("%s: access on the mount %s, native %s", name, results[0], results[1])
				}
			}
		}
	},
	// CachedAttrsFollowChanges: the kernel keeps entries and attributes
	// of cache nodes for a long time (nodeTimeout), so every change made
	// through one name must show at once through every cached one.
	"CachedAttrsFollowChanges": func(t *testing.T, dir string) {
		a, b, sub := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "sub")
		writeFile(t, a, "12345")
		if err := os.Link(a, b); err != nil {
			t.Fatal(err)
		}
		before, dirBefore := stat(t, a), stat(t, dir) // cached from here on
		if _, err := os.Stat(filepath.Join(dir, "later")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat later: %v", err) // a negative entry, cached
		}
		writeFile(t, b, "1234567890")
		if st := stat(t, a); st.Size != 10 || st.Nlink != 2 {
			t.Fatalf("after writing b: a has size %d nlink %d", st.Size, st.Nlink)
		}
		if err := os.Truncate(b, 3); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(b, 0o600); err != nil {
			t.Fatal(err)
		}
		st := stat(t, a)
		if st.Size != 3 || st.Mode&0o777 != 0o600 || st.Ctim == before.Ctim && st.Mtim == before.Mtim {
			t.Fatalf("after truncate and chmod of b: a has size %d mode %o, times unchanged %v", st.Size, st.Mode&0o777, st.Mtim == before.Mtim)
		}
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if st := stat(t, dir); st.Nlink != dirBefore.Nlink+1 {
			t.Fatalf("directory nlink %d after mkdir, was %d", st.Nlink, dirBefore.Nlink)
		}
		writeFile(t, filepath.Join(dir, "later"), "now")
		if got := readFile(t, filepath.Join(dir, "later")); got != "now" {
			t.Fatalf("later = %q", got)
		}
		if err := os.Rename(a, filepath.Join(sub, "moved")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat a after renaming it away: %v", err)
		}
		if err := os.Remove(b); err != nil {
			t.Fatal(err)
		}
		if st := stat(t, filepath.Join(sub, "moved")); st.Nlink != 1 || st.Size != 3 {
			t.Fatalf("moved: nlink %d size %d after removing b", st.Nlink, st.Size)
		}
	},
	"HardLinks": func(t *testing.T, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, a, "shared")
		if err := os.Link(a, b); err != nil {
			t.Fatal(err)
		}
		sa, sb := stat(t, a), stat(t, b)
		if sa.Ino != sb.Ino || sb.Nlink != 2 {
			t.Fatalf("link: ino %d/%d nlink %d", sa.Ino, sb.Ino, sb.Nlink)
		}
		writeFile(t, b, "changed")
		if got := readFile(t, a); got != "changed" {
			t.Fatalf("a = %q after writing b", got)
		}
		if err := os.Remove(a); err != nil {
			t.Fatal(err)
		}
		if st := stat(t, b); st.Nlink != 1 {
			t.Fatalf("nlink after unlink %d", st.Nlink)
		}
		if err := os.Link(dir, filepath.Join(dir, "d")); !errors.Is(err, syscall.EPERM) {
			t.Fatalf("hard link to a directory: %v, want EPERM", err)
		}
	},
	"Symlinks": func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "target"), "via link")
		l := filepath.Join(dir, "l")
		if err := os.Symlink("target", l); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(l); err != nil || got != "target" {
			t.Fatalf("readlink %q %v", got, err)
		}
		if got := readFile(t, l); got != "via link" {
			t.Fatalf("read through link %q", got)
		}
		st := stat(t, l)
		if st.Mode&syscall.S_IFMT != syscall.S_IFLNK || st.Size != int64(len("target")) {
			t.Fatalf("lstat link: mode %o size %d", st.Mode, st.Size)
		}
		// hg's lock files are dangling symlinks named after host:pid.
		lock := filepath.Join(dir, "lock")
		if err := os.Symlink("host:1234", lock); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("host:999", lock); !errors.Is(err, syscall.EEXIST) {
			t.Fatalf("second lock symlink: %v, want EEXIST", err)
		}
	},
	"Chmod": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "x")
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if st := stat(t, p); st.Mode != syscall.S_IFREG|0o755 {
			t.Fatalf("mode %o", st.Mode)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if st := stat(t, dir); st.Mode != syscall.S_IFDIR|0o700 {
			t.Fatalf("dir mode %o", st.Mode)
		}
	},
	"Utimens": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "x")
		at := time.Unix(1_600_000_000, 123456789)
		mt := time.Unix(1_500_000_000, 987654321)
		if err := os.Chtimes(p, at, mt); err != nil {
			t.Fatal(err)
		}
		st := stat(t, p)
		if st.Atim.Nano() != at.UnixNano() || st.Mtim.Nano() != mt.UnixNano() {
			t.Fatalf("times %v %v, want %v %v", st.Atim, st.Mtim, at, mt)
		}
		// UTIME_OMIT keeps atime, UTIME_NOW sets mtime to now.
		before := time.Now().Add(-time.Second)
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, 0); err != nil {
			t.Fatal(err)
		}
		st = stat(t, p)
		if st.Atim.Nano() != at.UnixNano() {
			t.Errorf("UTIME_OMIT changed atime to %v", st.Atim)
		}
		if time.Unix(st.Mtim.Unix()).Before(before) {
			t.Errorf("UTIME_NOW left mtime at %v", time.Unix(st.Mtim.Unix()))
		}
	},
	"MtimeOnWrite": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "x")
		old := time.Unix(1_000_000_000, 0)
		os.Chtimes(p, old, old)
		writeFile(t, p, "xy")
		if st := stat(t, p); st.Mtim.Sec == old.Unix() || st.Size != 2 {
			t.Fatalf("write left mtime %d size %d", st.Mtim.Sec, st.Size)
		}
	},
	"ReadDir": func(t *testing.T, dir string) {
		// Enough entries to need several READDIRPLUS replies.
		var want []string
		for i := 0; i < 600; i++ {
			name := fmt.Sprintf("file-with-a-longish-name-%04d", i)
			want = append(want, name)
			writeFile(t, filepath.Join(dir, name), name)
		}
		os.Mkdir(filepath.Join(dir, "subdir"), 0o755)
		want = append(want, "subdir")
		sort.Strings(want)
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
			if e.Name() == "subdir" != e.IsDir() {
				t.Errorf("%s: IsDir %v", e.Name(), e.IsDir())
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("readdir: %d names, want %d", len(got), len(want))
		}
		// Removing entries while listing keeps cookies valid: every
		// surviving entry is seen exactly once.
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		first, err := f.Readdirnames(100)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range want[300:400] {
			os.Remove(filepath.Join(dir, n))
		}
		rest, err := f.Readdirnames(-1)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, n := range append(first, rest...) {
			seen[n]++
		}
		for _, n := range want {
			if seen[n] > 1 {
				t.Errorf("%s listed %d times", n, seen[n])
			}
		}
		for _, n := range append(want[:300:300], want[400:]...) {
			if seen[n] != 1 && !slices.Contains(first, n) {
				t.Errorf("%s missing from the listing", n)
			}
		}
	},
	"MkdirRmdir": func(t *testing.T, dir string) {
		d := filepath.Join(dir, "d")
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(d, 0o750); !errors.Is(err, syscall.EEXIST) {
			t.Fatalf("mkdir twice: %v", err)
		}
		if st := stat(t, d); st.Mode != syscall.S_IFDIR|0o750 || st.Nlink < 2 {
			t.Fatalf("dir mode %o nlink %d", st.Mode, st.Nlink)
		}
		writeFile(t, filepath.Join(d, "f"), "x")
		if err := syscall.Rmdir(d); !errors.Is(err, syscall.ENOTEMPTY) {
			t.Fatalf("rmdir non-empty: %v", err)
		}
		if err := syscall.Rmdir(filepath.Join(d, "f")); !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("rmdir file: %v", err)
		}
		os.Remove(filepath.Join(d, "f"))
		if err := syscall.Rmdir(d); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after rmdir: %v", err)
		}
		if err := os.Remove(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("remove missing: %v", err)
		}
	},
	"Fsync": func(t *testing.T, dir string) {
		f, err := os.Create(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write([]byte("durable"))
		if err := f.Sync(); err != nil {
			t.Fatalf("fsync: %v", err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatalf("fdatasync: %v", err)
		}
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Sync(); err != nil {
			t.Fatalf("fsync dir: %v", err)
		}
	},
	"Locks": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "x")
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatalf("flock: %v", err)
		}
		g, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if err := unix.Flock(int(g.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatalf("second flock: %v, want EWOULDBLOCK", err)
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
			t.Fatalf("fcntl lock: %v", err)
		}
	},
	"Xattrs": func(t *testing.T, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, p, "x")
		// A file has none until set (posixtest's Xattrs has the rest);
		// the control directory has none and takes none.
		if _, err := unix.Getxattr(p, "user.x", make([]byte, 10)); !errors.Is(err, unix.ENODATA) {
			t.Fatalf("getxattr: %v, want ENODATA", err)
		}
		if n, err := unix.Listxattr(p, make([]byte, 10)); n != 0 || err != nil {
			t.Fatalf("listxattr: %d, %v, want none", n, err)
		}
		ctl := filepath.Join(filepath.Dir(dir), VirtualDirName)
		if _, err := unix.Getxattr(ctl, "user.x", make([]byte, 10)); !errors.Is(err, unix.ENODATA) {
			t.Fatalf("getxattr of the control directory: %v, want ENODATA", err)
		}
		if err := unix.Setxattr(ctl, "user.x", nil, 0); err == nil {
			t.Fatalf("setxattr of the control directory succeeded")
		}
	},
	"Statfs": func(t *testing.T, dir string) {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Bsize == 0 || st.Blocks == 0 || st.Namelen == 0 {
			t.Fatalf("statfs: %+v", st)
		}
	},
}
