//go:build linux

package mount

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/testenv"
)

// makeViewRepo builds the repository the views tests read (the same
// history as hgview's tests): a tag, a bookmark, a named branch, an exec
// file, a symlink, a rename, binary content, a file starting like a
// metadata header, a removal.
func makeViewRepo(t *testing.T, dir string) {
	t.Helper()
	write := func(name, data string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	hg := func(args ...string) { testenv.Hg(t, dir, args...) }
	testenv.Hg(t, "", "init", dir)
	write("a.txt", "alpha\n", 0o644)
	write("bin.dat", "\x00\x01\x02binary\x00\xff\n\x00", 0o644)
	write("dir/sub/c.txt", "charlie\n", 0o644)
	write("dir-x.txt", "sorts between dir and dir/\n", 0o644)
	write("exec.sh", "#!/bin/sh\necho hi\n", 0o755)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	hg("commit", "-A", "-q", "-d", "1700000000 0", "-m", "initial")
	write("a.txt", "alpha\nbeta\n", 0o644)
	hg("mv", "dir/sub/c.txt", "dir/moved.txt")
	hg("commit", "-q", "-d", "1700000100 -3600", "-m", "rename and edit")
	hg("tag", "-d", "1700000200 0", "-r", "1", "v1.0")
	hg("branch", "-q", "stable")
	write("a.txt", "alpha\nstable\n", 0o644)
	write("exec.sh", "#!/bin/sh\necho stable\n", 0o644)
	hg("commit", "-q", "-d", "1700000300 0", "-m", "on stable")
	hg("update", "-q", "default")
	write("bin.dat", "\x00\x00more binary\xfe", 0o644)
	write("meta.txt", "\x01\nlooks like a header\x01\nbut is content\n", 0o644)
	hg("commit", "-A", "-q", "-d", "1700000400 0", "-m", "binary and meta")
	hg("bookmark", "-r", "4", "book")
	hg("bookmark", "-r", "3", "feature/x")
	hg("rm", "-q", "link")
	hg("commit", "-q", "-d", "1700000500 0", "-m", "remove link")
}

// viewOracle is what real hg says about the test repository.
type viewOracle struct {
	forms    map[int][]string             // rev -> every REV naming it
	files    map[int]map[string]string    // rev -> path -> `hg manifest -v` mode column
	cat      map[int]string               // rev -> directory of `hg cat -o %p` output
	debug    map[string]map[int][]byte    // store path -> rev -> `hg debugdata`
	status   map[[2]int]map[string]string // (a, b) -> path -> status letter
	texts    map[string][]byte
	dateRev0 int64
}

func newViewOracle(t *testing.T, src string) *viewOracle {
	o := &viewOracle{forms: map[int][]string{}, files: map[int]map[string]string{}, cat: map[int]string{},
		debug: map[string]map[int][]byte{}, status: map[[2]int]map[string]string{}, texts: map[string][]byte{}, dateRev0: 1700000000}
	names := map[int][]string{1: {"v1.0"}, 3: {"stable"}, 4: {"book"}, 5: {"tip", "default"}}
	for _, rev := range []int{0, 1, 3, 4, 5} {
		r := strconv.Itoa(rev)
		node := string(testenv.Hg(t, src, "log", "-r", r, "-T", "{node}"))
		o.forms[rev] = append([]string{r, node, node[:12]}, names[rev]...)
		o.files[rev] = map[string]string{}
		for _, line := range strings.Split(strings.TrimSuffix(string(testenv.Hg(t, src, "manifest", "-v", "-r", r)), "\n"), "\n") {
			o.files[rev][line[6:]] = line[:5]
		}
		o.cat[rev] = t.TempDir()
		testenv.Hg(t, src, "cat", "-r", r, "-o", filepath.Join(o.cat[rev], "%p"), "glob:**")
	}
	for _, c := range []struct {
		store string
		sel   string
		n     int
	}{{"00changelog.i", "-c", 6}, {"data/a.txt.i", "a.txt", 3}, {"data/meta.txt.i", "meta.txt", 1}} {
		o.debug[c.store] = map[int][]byte{}
		for rev := 0; rev < c.n; rev++ {
			o.debug[c.store][rev] = testenv.Hg(t, src, "debugdata", c.sel, strconv.Itoa(rev))
		}
		o.debug[c.store][-1] = testenv.Hg(t, src, "debugindex", "--debug", c.sel)
	}
	for _, p := range [][2]int{{0, 5}, {1, 3}} {
		st := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(testenv.Hg(t, src, "status", "--rev", strconv.Itoa(p[0]), "--rev", strconv.Itoa(p[1])))), "\n") {
			st[line[2:]] = line[:1]
		}
		o.status[p] = st
	}
	for _, name := range []string{"log", "heads", "tags", "bookmarks", "branches"} {
		o.texts[name] = testenv.Hg(t, src, name)
	}
	return o
}

// checkViews compares MP/.hgfs with the oracle.
func checkViews(t *testing.T, mp string, o *viewOracle) {
	h := filepath.Join(mp, VirtualDirName)
	// A tree walked before anything in it is looked up, as grep -r does:
	// every name comes from a listing (READDIRPLUS entries carrying
	// attributes, content stored in the page cache at open), and every
	// file, its size and mode must still be hg's.
	for rev, forms := range o.forms {
		root := filepath.Join(h, "rev", forms[len(forms)-1])
		seen := 0
		err := filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, name)
			want, err := os.ReadFile(filepath.Join(o.cat[rev], rel))
			if err != nil {
				return err
			}
			seen++
			var st syscall.Stat_t
			if err := syscall.Lstat(name, &st); err != nil {
				return err
			}
			got := []byte(nil)
			if o.files[rev][rel] == "644 @" {
				target, err := os.Readlink(name)
				if err != nil {
					return err
				}
				got = []byte(target)
			} else if got, err = os.ReadFile(name); err != nil {
				return err
			}
			if !bytes.Equal(got, want) || st.Size != int64(len(want)) {
				t.Errorf("walk: %s: %q (size %d), hg cat -r %s says %q", name, got, st.Size, forms[len(forms)-1], want)
			}
			if o.files[rev][rel] == "644 @" {
				return nil
			}
			// Once the kernel has dropped the pages, a new open reads
			// through READ again (the repository view's handles are then
			// lazy).
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				return err
			}
			if again, err := io.ReadAll(f); err != nil || !bytes.Equal(again, want) {
				t.Errorf("walk: %s after dropping its pages: %q, %v; hg cat says %q", name, again, err, want)
			}
			return nil
		})
		if err != nil || seen != len(o.files[rev]) {
			t.Errorf("walk of %s: %d files of %d: %v", root, seen, len(o.files[rev]), err)
		}
	}
	for rev, forms := range o.forms {
		for _, form := range forms {
			for p, mode := range o.files[rev] {
				name := filepath.Join(h, "rev", form, p)
				want, err := os.ReadFile(filepath.Join(o.cat[rev], p))
				if err != nil {
					t.Fatal(err)
				}
				var st syscall.Stat_t
				if err := syscall.Lstat(name, &st); err != nil {
					t.Errorf("lstat %s: %v", name, err)
					continue
				}
				var got []byte
				switch mode {
				case "644 @":
					target, err := os.Readlink(name)
					if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
						t.Errorf("%s: not a symlink (mode %o): %v", name, st.Mode, err)
					}
					got = []byte(target)
				case "755 *":
					if st.Mode != syscall.S_IFREG|0o555 {
						t.Errorf("%s: mode %o, hg manifest -v says executable", name, st.Mode)
					}
					got, err = os.ReadFile(name)
				default:
					if st.Mode != syscall.S_IFREG|0o444 {
						t.Errorf("%s: mode %o, want 0444 file", name, st.Mode)
					}
					got, err = os.ReadFile(name)
				}
				if err != nil || !bytes.Equal(got, want) || st.Size != int64(len(want)) {
					t.Errorf("%s: %q (size %d, %v), hg cat -r %s says %q", name, got, st.Size, err, form, want)
				}
			}
		}
	}
	// Revlog revisions and index against hg debugdata / debugindex --debug.
	for store, revs := range o.debug {
		for rev, want := range revs {
			name := filepath.Join(h, "revlogs", store, strconv.Itoa(rev))
			if rev < 0 {
				name = filepath.Join(h, "revlogs", store, "index")
			}
			if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %v\n%s", name, err, testenv.Diff("hg", string(want), "mount", string(got)))
			}
		}
	}
	// diff -rq between two trees against hg status --rev A --rev B.
	for p, want := range o.status {
		a, b := filepath.Join(h, "rev", strconv.Itoa(p[0])), filepath.Join(h, "rev", strconv.Itoa(p[1]))
		out, _ := exec.Command("diff", "-rq", "--no-dereference", a, b).Output()
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			switch {
			case strings.HasPrefix(line, "Files "):
				f := strings.Fields(line)
				rel, _ := filepath.Rel(a, f[1])
				got[rel] = "M"
			case strings.HasPrefix(line, "Only in "):
				dir, name, _ := strings.Cut(strings.TrimPrefix(line, "Only in "), ": ")
				letter, base := "R", a
				if strings.HasPrefix(dir, b) {
					letter, base = "A", b
				}
				filepath.WalkDir(filepath.Join(dir, name), func(path string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(base, path)
						got[rel] = letter
					}
					return err
				})
			case line != "":
				t.Errorf("diff -rq: %s", line)
			}
		}
		if !equalMaps(got, want) {
			t.Errorf("diff -rq rev/%d rev/%d gives %v; hg status --rev says %v", p[0], p[1], got, want)
		}
	}
	for name, want := range o.texts {
		if got, err := os.ReadFile(filepath.Join(h, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf(".hgfs/%s: %v\n%s", name, err, testenv.Diff("hg "+name, string(want), "mount", string(got)))
		}
	}
	// Dates, stable numbers, listings.
	st := stat(t, filepath.Join(h, "rev", "0", "a.txt"))
	if st.Mtim.Sec != o.dateRev0 {
		t.Errorf("rev/0/a.txt mtime %d, changeset date %d", st.Mtim.Sec, o.dateRev0)
	}
	if st2 := stat(t, filepath.Join(h, "rev", "0", "a.txt")); st2.Ino != st.Ino || st.Ino < virtualBase {
		t.Errorf("rev/0/a.txt inode %#x then %#x", st.Ino, st2.Ino)
	}
	if st3 := stat(t, filepath.Join(h, "rev", o.forms[0][1], "a.txt")); st3.Ino == st.Ino {
		t.Error("rev/0/a.txt and rev/NODE/a.txt share an inode number")
	}
	ents, err := os.ReadDir(h)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "bookmark bookmarks branch branches heads log rev revlogs stats tag tags" {
		t.Errorf(".hgfs lists %q", got)
	}
	checkNameDirs(t, h, o)
	if ents, err := os.ReadDir(filepath.Join(h, "rev")); err != nil || len(ents) != 6 {
		t.Errorf(".hgfs/rev lists %d entries, %v", len(ents), err)
	}
	if err := os.WriteFile(filepath.Join(h, "rev", "0", "a.txt"), nil, 0o644); err == nil {
		t.Error("wrote into a view")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// statusLines runs hg status in dir and returns its lines.
func statusLines(t *testing.T, dir string) []string {
	out := strings.TrimSpace(string(testenv.Hg(t, dir, "status", "--all")))
	lines := strings.Split(out, "\n")
	sort.Strings(lines)
	return lines
}

// mountRepo mounts the repository src on a new directory, unmounted at
// the test's cleanup, and returns the mount point.
func mountRepo(t *testing.T, src string, opt Options) string {
	t.Helper()
	mp := t.TempDir()
	srv, err := MountRepo(src, mp, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return mp
}

// viewFixture skips without FUSE or hg, else makes the views' test
// repository and its oracle.
func viewFixture(t *testing.T) (src string, o *viewOracle) {
	t.Helper()
	testenv.RequireFUSE(t)
	testenv.HgPath(t)
	src = filepath.Join(t.TempDir(), "src")
	makeViewRepo(t, src)
	return src, newViewOracle(t, src)
}

func TestViews(t *testing.T) {
	src, o := viewFixture(t)

	t.Run("repo", func(t *testing.T) {
		mp := mountRepo(t, src, Options{})
		checkViews(t, mp, o)
		for _, line := range statusLines(t, mp) {
			if strings.Contains(line, VirtualDirName) {
				t.Errorf("hg status shows the views: %q", line)
			}
		}
	})

	t.Run("cache", func(t *testing.T) {
		m := newMount(t)
		if _, err := os.Stat(filepath.Join(m.mp, VirtualDirName, "rev")); err == nil {
			t.Error(".hgfs/rev exists before there is a repository")
		}
		testenv.Hg(t, "", "clone", "-q", src, m.mp)
		testenv.Hg(t, m.mp, "update", "-q", "tip")
		checkViews(t, m.mp, o)
		lines := statusLines(t, m.mp)
		for _, line := range lines {
			if strings.Contains(line, VirtualDirName) || !strings.HasPrefix(line, "C ") {
				t.Errorf("hg status --all in the mount: %q", line)
			}
		}
		if len(lines) != len(o.files[5]) {
			t.Errorf("hg status --all lists %d files, tip has %d", len(lines), len(o.files[5]))
		}
		// The views follow a commit into the mount; once the kernel's
		// one-second entry for "tip" lapses, tip is the new changeset.
		writeFile(t, m.path("a.txt"), "committed in the mount\n")
		testenv.Hg(t, m.mp, "commit", "-q", "-d", "1700000600 0", "-m", "in mount")
		if got := readFile(t, filepath.Join(m.mp, VirtualDirName, "rev", "6", "a.txt")); got != "committed in the mount\n" {
			t.Errorf("rev/6/a.txt after commit: %q", got)
		}
		tip := filepath.Join(m.mp, VirtualDirName, "rev", "tip", "a.txt")
		deadline := time.Now().Add(10 * time.Second)
		for readFile(t, tip) != "committed in the mount\n" {
			if time.Now().After(deadline) {
				t.Fatalf("rev/tip/a.txt still %q after the commit", readFile(t, tip))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got, want := readFile(t, filepath.Join(m.mp, VirtualDirName, "log")), string(testenv.Hg(t, m.mp, "log")); got != want {
			t.Errorf(".hgfs/log after commit:\n%s", testenv.Diff("hg log", want, "mount", got))
		}
	})
}

// checkNameDirs checks .hgfs/tag, bookmark and branch: ls lists the
// names (a bookmark with a slash as a directory), each a link to
// rev/FULLNODE that leads to the changeset's files.
func checkNameDirs(t *testing.T, h string, o *viewOracle) {
	node := func(rev int) string { return o.forms[rev][1] }
	for _, c := range []struct {
		dir, list string
		links     map[string]int
	}{
		{"tag", "tip v1.0", map[string]int{"tip": 5, "v1.0": 1}},
		{"branch", "default stable", map[string]int{"default": 5, "stable": 3}},
		{"bookmark", "book feature", map[string]int{"book": 4, "feature/x": 3}},
		{"bookmark/feature", "x", nil},
	} {
		ents, err := os.ReadDir(filepath.Join(h, c.dir))
		if err != nil {
			t.Errorf("ls %s: %v", c.dir, err)
			continue
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, " "); got != c.list {
			t.Errorf("ls .hgfs/%s: %q, want %q", c.dir, got, c.list)
		}
		for name, rev := range c.links {
			p := filepath.Join(h, c.dir, name)
			target, err := os.Readlink(p)
			want := strings.Repeat("../", strings.Count(name, "/")+1) + "rev/" + node(rev)
			if err != nil || target != want {
				t.Errorf("readlink .hgfs/%s/%s: %q, %v; want %q", c.dir, name, target, err, want)
			}
			wantA, _ := os.ReadFile(filepath.Join(o.cat[rev], "a.txt"))
			if got, err := os.ReadFile(filepath.Join(p, "a.txt")); err != nil || !bytes.Equal(got, wantA) {
				t.Errorf(".hgfs/%s/%s/a.txt: %q, %v; want %q", c.dir, name, got, err, wantA)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(h, "bookmark", "nosuch")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bookmark/nosuch: %v", err)
	}
}
