//go:build linux

package fsnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// TestRandomOpsAgainstKernel is model checking lite with the kernel's own
// file system as the model: the same random sequence of operations runs on
// a native directory and on the cache (through pathFS); every result
// (errno included) and, every few steps, the whole tree must agree. The
// cache is closed and reopened now and then, so the committed state is
// compared too.
func TestRandomOpsAgainstKernel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	steps := 600
	if os.Getenv("FSNODE_MODEL_SEEDS") != "" {
		n, _ := strconv.Atoi(os.Getenv("FSNODE_MODEL_SEEDS"))
		seeds = nil
		for i := range n {
			seeds = append(seeds, uint64(i+100))
		}
	}
	if testing.Short() {
		seeds, steps = seeds[:2], 150
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandomOps(t, seed, steps, nil) })
	}
}

// runRandomOps runs steps random operations; a non-nil store makes the
// cache's files virtual as TestConformanceVirtual does, with their bytes
// in store.
func runRandomOps(t *testing.T, seed uint64, steps int, store *testStore) {
	native := posixtest.OS(t.TempDir())
	dir := t.TempDir()
	opt := Options{InlineMax: 64, CommitInterval: 1, QueueCap: 16, BatchItems: 8, DataFileMax: 8 << 10}
	f, err := Create(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Odd seeds evict whatever they can after every commit: clean inodes
	// from the table, the entries of directories the commit left.
	evictAll := func(f *FS) {
		if seed%2 == 1 {
			f.tree.Lock()
			f.c.evictBase, f.c.evictAt, f.c.dirEvictBase, f.c.dirEvictAt = 0, 0, 0, 0
			f.tree.Unlock()
		}
	}
	evictAll(f)
	cache := &pathFS{f: f}
	var cacheFS posixtest.FS = cache
	if store != nil {
		f.SetResolver(store.resolve)
		cacheFS = posixtest.Hooked(t, cache, (&virtualCase{st: store}).hook)
	}
	defer func() {
		if err := cache.f.Close(); err != nil {
			t.Error(err)
		}
		checkFsck(t, dir)
	}()
	r := rand.New(rand.NewPCG(seed, 99))
	names := []string{"a", "b", "c", "d/a", "d/b", "d/e/a", "e", "e/a"}
	pick := func() string { return names[r.IntN(len(names))] }
	var log []string
	for step := range steps {
		var desc string
		var op func(fsys posixtest.FS) (string, error)
		var paths []string // the op's paths
		follow := false    // it follows a symlink in its last component
		switch r.IntN(13) {
		case 0, 1:
			name, data, off := pick(), randData(r), r.IntN(200)
			desc = fmt.Sprintf("write %s %d@%d", name, len(data), off)
			paths, follow = []string{name}, true
			op = func(fsys posixtest.FS) (string, error) {
				fh, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
				if err != nil {
					return "", err
				}
				_, err = fh.WriteAt(data, int64(off))
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				return "", err
			}
		case 2:
			name := pick()
			desc = "create-excl " + name
			paths, follow = []string{name}, true
			op = func(fsys posixtest.FS) (string, error) {
				fh, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return "", err
				}
				return "", fh.Close()
			}
		case 3:
			name, size := pick(), int64(r.IntN(300))
			desc = fmt.Sprintf("truncate %s %d", name, size)
			paths, follow = []string{name}, true
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Truncate(name, size) }
		case 4:
			name := pick()
			desc = "mkdir " + name
			paths = []string{name}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Mkdir(name, 0o755) }
		case 5:
			name := pick()
			desc = "rmdir " + name
			paths = []string{name}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Rmdir(name) }
		case 6:
			name := pick()
			desc = "unlink " + name
			paths = []string{name}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Unlink(name) }
		case 7, 8:
			from, to := pick(), pick()
			flags := []uint{0, 0, unix.RENAME_NOREPLACE, unix.RENAME_EXCHANGE}[r.IntN(4)]
			desc = fmt.Sprintf("rename %s %s %d", from, to, flags)
			paths = []string{from, to}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Rename(from, to, flags) }
		case 9:
			from, to := pick(), pick()
			desc = fmt.Sprintf("link %s %s", from, to)
			paths = []string{from, to}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Link(from, to) }
		case 10:
			name := pick()
			desc = "symlink " + name
			paths = []string{name}
			op = func(fsys posixtest.FS) (string, error) { return "", fsys.Symlink("target-"+name, name) }
		case 11:
			name := pick()
			desc = "read " + name
			paths, follow = []string{name}, true
			op = func(fsys posixtest.FS) (string, error) {
				fh, err := fsys.OpenFile(name, os.O_RDONLY, 0)
				if err != nil {
					return "", err
				}
				defer fh.Close()
				b, err := io.ReadAll(fh)
				return string(b), err
			}
		case 12:
			name, off, n := pick(), int64(r.IntN(200)), int64(1+r.IntN(150))
			mode := []uint32{0, FallocKeepSize, FallocPunchHole | FallocKeepSize, FallocZeroRange, FallocZeroRange | FallocKeepSize, FallocPunchHole}[r.IntN(6)]
			desc = fmt.Sprintf("fallocate %s %#x %d@%d", name, mode, n, off)
			paths, follow = []string{name}, true
			op = func(fsys posixtest.FS) (string, error) {
				fh, err := fsys.OpenFile(name, os.O_RDWR, 0)
				if err != nil {
					return "", err
				}
				err = fh.(posixtest.Fallocator).Fallocate(mode, off, n)
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				return "", err
			}
		}
		// The kernel resolves symlinks before the core sees a request;
		// pathFS does not, so steps that would follow one are skipped.
		if followsSymlink(native, paths, follow) {
			continue
		}
		log = append(log, desc)
		wantOut, wantErr := op(native)
		gotOut, gotErr := op(cacheFS)
		if errnoOf(wantErr) != errnoOf(gotErr) || wantOut != gotOut {
			t.Fatalf("step %d: %s: kernel (%q, %v), cache (%q, %v)\nhistory:\n%s",
				step, desc, wantOut, wantErr, gotOut, gotErr, historyTail(log))
		}
		if step%20 == 19 {
			if r.IntN(3) == 0 {
				if err := cache.f.Close(); err != nil {
					t.Fatal(err)
				}
				checkFsck(t, dir)
				if cache.f, err = Open(dir, opt); err != nil {
					t.Fatal(err)
				}
				evictAll(cache.f)
				if store != nil {
					cache.f.SetResolver(store.resolve)
				}
			} else if r.IntN(2) == 0 {
				if _, err := cache.f.Compact(bg); err != nil {
					t.Fatal(err)
				}
			}
			if diff := compareTrees(native, cacheFS, "."); diff != "" {
				t.Fatalf("step %d: trees differ: %s\nhistory:\n%s", step, diff, historyTail(log))
			}
		}
	}
}

func historyTail(log []string) string {
	if len(log) > 30 {
		log = log[len(log)-30:]
	}
	var b bytes.Buffer
	for _, l := range log {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func randData(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(150))
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return b
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// compareTrees returns a description of the first difference.
func compareTrees(a, b posixtest.FS, dir string) string {
	la, ea := listDir(a, dir)
	lb, eb := listDir(b, dir)
	if ea != nil || eb != nil {
		return fmt.Sprintf("%s: readdir %v / %v", dir, ea, eb)
	}
	if !slices.Equal(la, lb) {
		return fmt.Sprintf("%s: entries %q / %q", dir, la, lb)
	}
	for _, n := range la {
		p := n
		if dir != "." {
			p = dir + "/" + n
		}
		sa, _ := a.Lstat(p)
		sb, _ := b.Lstat(p)
		if sa.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			sa.Size, sb.Size = 0, 0 // ext4 says 4096
		}
		if sa.Mode != sb.Mode || sa.Size != sb.Size || sa.Nlink != sb.Nlink {
			return fmt.Sprintf("%s: mode %o/%o size %d/%d nlink %d/%d", p, sa.Mode, sb.Mode, sa.Size, sb.Size, sa.Nlink, sb.Nlink)
		}
		switch sa.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if d := compareTrees(a, b, p); d != "" {
				return d
			}
		case syscall.S_IFLNK:
			ta, _ := a.Readlink(p)
			tb, _ := b.Readlink(p)
			if ta != tb {
				return fmt.Sprintf("%s: symlink %q / %q", p, ta, tb)
			}
		default:
			if ca, cb := readAllFS(a, p), readAllFS(b, p); !bytes.Equal(ca, cb) {
				return fmt.Sprintf("%s: contents %q / %q", p, ca, cb)
			}
		}
	}
	return ""
}

func listDir(fsys posixtest.FS, dir string) ([]string, error) {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var all []string
	for {
		n, err := d.Next(100)
		if err != nil {
			return nil, err
		}
		if len(n) == 0 {
			break
		}
		all = append(all, n...)
	}
	sort.Strings(all)
	return all, nil
}

func readAllFS(fsys posixtest.FS, p string) []byte {
	fh, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		return []byte("error: " + err.Error())
	}
	defer fh.Close()
	b, _ := io.ReadAll(fh)
	return b
}

// followsSymlink reports whether resolving any of paths goes through a
// symlink (in a directory component, or in the last one if follow).
func followsSymlink(fsys posixtest.FS, paths []string, follow bool) bool {
	for _, p := range paths {
		parts := strings.Split(p, "/")
		for i := range parts {
			if i == len(parts)-1 && !follow {
				break
			}
			st, err := fsys.Lstat(strings.Join(parts[:i+1], "/"))
			if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
				return true
			}
		}
	}
	return false
}
