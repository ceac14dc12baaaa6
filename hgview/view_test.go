package hgview

import (
	"bytes"
	"errors"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// walk looks up a slash-separated path from the root.
func walk(t *testing.T, v *View, p string) (*Node, error) {
	t.Helper()
	n := v.Root()
	for _, name := range strings.Split(p, "/") {
		var err error
		if n, err = v.Lookup(n, name); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func mustWalk(t *testing.T, v *View, p string) *Node {
	t.Helper()
	n, err := walk(t, v, p)
	if err != nil {
		t.Fatalf("lookup %s: %v", p, err)
	}
	return n
}

func openView(t *testing.T, dir string) *View {
	t.Helper()
	v, err := OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// manifestV parses `hg manifest -v -r REV`: path -> mode column and flag.
func manifestV(t *testing.T, dir, rev string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(testenv.Hg(t, dir, "manifest", "-v", "-r", rev)), "\n"), "\n") {
		// "644   a.txt", "755 * exec.sh", "644 @ link"
		out[line[6:]] = line[:5]
	}
	return out
}

// revForms returns every way hg names rev that is a valid file name.
func revForms(t *testing.T, dir string, rev int, names ...string) []string {
	node := strings.TrimSpace(string(testenv.Hg(t, dir, "log", "-r", strconv.Itoa(rev), "-T", "{node}")))
	return append([]string{strconv.Itoa(rev), node, node[:12], node[:7]}, names...)
}

func TestRevTreesMatchHgCat(t *testing.T) {
	dir := testRepo(t)
	v := openView(t, dir)
	for _, c := range []struct {
		rev   int
		names []string
	}{
		{0, nil}, {1, []string{"v1.0"}}, {3, []string{"stable"}}, {4, []string{"book"}}, {5, []string{"tip", "default", "-1"}},
	} {
		catDir := t.TempDir()
		testenv.Hg(t, dir, "cat", "-r", strconv.Itoa(c.rev), "-o", filepath.Join(catDir, "%p"), "-R", dir, "glob:**")
		man := manifestV(t, dir, strconv.Itoa(c.rev))
		for _, form := range revForms(t, dir, c.rev, c.names...) {
			root := mustWalk(t, v, "rev/"+form)
			top := map[string]bool{}
			for p, flags := range man {
				top[strings.SplitN(p, "/", 2)[0]] = true
				n := mustWalk(t, v, "rev/"+form+"/"+p)
				a, err := v.GetAttr(n)
				if err != nil {
					t.Fatalf("%s@%s: getattr: %v", p, form, err)
				}
				want, err := os.ReadFile(filepath.Join(catDir, p))
				if err != nil {
					t.Fatal(err)
				}
				got, err := v.Content(n)
				if err != nil {
					t.Fatalf("%s@%s: %v", p, form, err)
				}
				if !bytes.Equal(got, want) || a.Size != uint64(len(want)) {
					t.Errorf("%s@%s: content %q (size %d), hg cat says %q", p, form, got, a.Size, want)
				}
				wantMode := uint32(syscall.S_IFREG | 0o444)
				switch flags {
				case "755 *":
					wantMode = syscall.S_IFREG | 0o555
				case "644 @":
					wantMode = syscall.S_IFLNK | 0o777
					target, err := v.Readlink(n)
					if err != nil || target != string(want) {
						t.Errorf("%s@%s: readlink %q, %v; want %q", p, form, target, err, want)
					}
				}
				if a.Mode != wantMode {
					t.Errorf("%s@%s: mode %o, hg manifest -v says %q", p, form, a.Mode, flags)
				}
				if !a.Fixed {
					t.Errorf("%s@%s: a changeset's file should be fixed", p, form)
				}
			}
			ents, err := v.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name)
				n := mustWalk(t, v, "rev/"+form+"/"+e.Name)
				if n.Ino != e.Ino {
					t.Errorf("%s@%s: listing ino %#x, lookup %#x", e.Name, form, e.Ino, n.Ino)
				}
			}
			if len(names) != len(top) {
				t.Errorf("rev/%s lists %v, manifest has %v", form, names, top)
			}
			for i := 1; i < len(names); i++ {
				if names[i-1] >= names[i] {
					t.Errorf("rev/%s listing not sorted: %v", form, names)
				}
			}
			ra, _ := v.GetAttr(root)
			if ra.Fixed != (len(form) == 40) {
				t.Errorf("rev/%s: Fixed = %v", form, ra.Fixed)
			}
		}
	}
	for _, bad := range []string{"nosuch", "zzzz", "99", "", ".", "a/b"} {
		if _, err := v.Lookup(mustWalk(t, v, "rev"), bad); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("rev/%q: %v, want ENOENT", bad, err)
		}
	}
	if _, err := walk(t, v, "rev/0/dir/moved.txt"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("rev/0/dir/moved.txt: %v, want ENOENT", err)
	}
}

func TestRevlogFilesMatchDebugdata(t *testing.T) {
	dir := testRepo(t)
	v := openView(t, dir)
	cases := []struct {
		store string
		args  []string // hg debugdata/debugindex selector
	}{
		{"00changelog.i", []string{"-c"}},
		{"00manifest.i", []string{"-m"}},
		{"data/a.txt.i", []string{"a.txt"}},
		{"data/dir/moved.txt.i", []string{"dir/moved.txt"}},
		{"data/meta.txt.i", []string{"meta.txt"}},
	}
	for _, c := range cases {
		rl := mustWalk(t, v, "revlogs/"+c.store)
		idx := mustWalk(t, v, "revlogs/"+c.store+"/index")
		got, err := v.Content(idx)
		if err != nil {
			t.Fatal(err)
		}
		want := testenv.Hg(t, dir, append([]string{"debugindex", "--debug"}, c.args...)...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s/index:\n%s", c.store, testenv.Diff("hg debugindex --debug", string(want), "view", string(got)))
		}
		ents, err := v.ReadDir(rl)
		if err != nil {
			t.Fatal(err)
		}
		revs := len(ents) - 1
		if revs < 1 {
			t.Fatalf("%s lists %v", c.store, ents)
		}
		for rev := 0; rev < revs; rev++ {
			n := mustWalk(t, v, "revlogs/"+c.store+"/"+strconv.Itoa(rev))
			got, err := v.Content(n)
			if err != nil {
				t.Fatal(err)
			}
			want := testenv.Hg(t, dir, append(append([]string{"debugdata"}, c.args...), strconv.Itoa(rev))...)
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%d: %q, hg debugdata says %q", c.store, rev, got, want)
			}
		}
		if _, err := walk(t, v, "revlogs/"+c.store+"/"+strconv.Itoa(revs)); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("%s/%d past the end: %v", c.store, revs, err)
		}
	}
	// The store listing shows revlogs and data/, not fncache or undo files.
	ents, err := v.ReadDir(mustWalk(t, v, "revlogs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "00changelog.i 00manifest.i data" {
		t.Errorf("revlogs/ lists %q", got)
	}
	for _, bad := range []string{"fncache", "data/a.txt.d", "phaseroots", "00changelog.i/x"} {
		if _, err := walk(t, v, "revlogs/"+bad); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("revlogs/%s: %v, want ENOENT", bad, err)
		}
	}
}

// TestFollowsCommits checks that symbolic names and text files move when
// the repository changes, while looked-up changeset trees stay put.
func TestFollowsCommits(t *testing.T) {
	src := testRepo(t)
	dir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	v := openView(t, dir)
	oldTip := mustWalk(t, v, "rev/tip")
	oldA := mustWalk(t, v, "rev/tip/a.txt")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new tip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, dir, "commit", "-q", "-d", "1700000600 0", "-m", "new")
	newA := mustWalk(t, v, "rev/tip/a.txt")
	if got, _ := v.Content(newA); string(got) != "new tip\n" {
		t.Errorf("rev/tip/a.txt after commit: %q", got)
	}
	if got, _ := v.Content(oldA); string(got) != "alpha\nbeta\n" {
		t.Errorf("old rev/tip/a.txt node after commit: %q", got)
	}
	if newA.Ino == oldA.Ino || mustWalk(t, v, "rev/tip").Ino == oldTip.Ino {
		t.Error("a moved name kept its inode number")
	}
	if n := mustWalk(t, v, "rev/6/a.txt"); n.Ino == newA.Ino {
		t.Error("rev/6 and rev/tip share an inode number")
	}
	got, _ := v.Content(mustWalk(t, v, "log"))
	if want := testenv.Hg(t, dir, "log"); !bytes.Equal(got, want) {
		t.Errorf("log after commit:\n%s", testenv.Diff("hg log", string(want), "view", string(got)))
	}
	testenv.Hg(t, dir, "bookmark", "-f", "-r", "0", "book")
	if n := mustWalk(t, v, "rev/book"); n.cs.rev != 0 {
		t.Errorf("rev/book after moving it: rev %d", n.cs.rev)
	}
}

func TestNodeTable(t *testing.T) {
	v := openView(t, testRepo(t))
	n := mustWalk(t, v, "rev/1/dir/moved.txt")
	if !v.Owns(n.Ino) || v.Owns(1<<63+1+1) || v.Owns(12345) {
		t.Error("Owns is wrong")
	}
	if _, ok := v.Node(n.Ino); ok {
		t.Error("unremembered node found")
	}
	if err := v.Remember(n); err != nil {
		t.Fatal(err)
	}
	v.Remember(n)
	if got, ok := v.Node(n.Ino); !ok || got.path != "dir/moved.txt" {
		t.Errorf("Node: %v %v", got, ok)
	}
	v.Forget(n.Ino, 1)
	if _, ok := v.Node(n.Ino); !ok {
		t.Error("forgotten too early")
	}
	v.Forget(n.Ino, 1)
	if _, ok := v.Node(n.Ino); ok {
		t.Error("not forgotten")
	}
	for _, p := range []string{"rev", "revlogs", "log", "tags"} {
		want := mustWalk(t, v, p)
		if got, ok := v.Node(want.Ino); !ok || got.kind != want.kind {
			t.Errorf("fixed node %s not found by number", p)
		}
	}
}

// TestLayouts reads every file at tip, and finds each filelog under its
// encoded store path, in every store layout and with names that need
// every encoding rule.
func TestLayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("generates four repositories")
	}
	for _, spec := range append([]testenv.Spec{testenv.Encodings}, testenv.OldLayouts()...) {
		dir := testenv.Generate(t, spec)
		v := openView(t, dir)
		cat := t.TempDir()
		testenv.Hg(t, dir, "cat", "-r", "tip", "-o", filepath.Join(cat, "%p"), "glob:**")
		files := strings.Split(strings.TrimSuffix(string(testenv.Hg(t, dir, "manifest", "-r", "tip")), "\n"), "\n")
		for _, p := range files {
			want, err := os.ReadFile(filepath.Join(cat, p))
			if err != nil {
				t.Fatal(err)
			}
			n, err := walk(t, v, "rev/tip/"+p)
			if err != nil {
				t.Errorf("layout %v: rev/tip/%s: %v", spec.Layout, p, err)
				continue
			}
			if got, err := v.Content(n); err != nil || !bytes.Equal(got, want) {
				t.Errorf("layout %v: %s: %v", spec.Layout, p, err)
			}
			storePath := v.layout.Encode("data/" + p + ".i")
			if _, err := walk(t, v, "revlogs/"+storePath+"/index"); err != nil {
				t.Errorf("layout %v: revlogs/%s: %v", spec.Layout, storePath, err)
			}
		}
	}
}

// FuzzLookup feeds arbitrary names (as FUSE requests carry them) to every
// directory kind: each gives a node or an error, never a panic.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"rev", "revlogs", "0", "tip", "-1", "..", "x", "00changelog.i", "data", "index", "a.txt", "dir", "\x00", "ffffffffffff", "book"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v := openView(t, testRepo(t))
		dirs := []*Node{v.Root()}
		for _, p := range []string{"rev", "rev/tip", "rev/0/dir", "revlogs", "revlogs/data", "revlogs/00changelog.i"} {
			dirs = append(dirs, mustWalk(t, v, p))
		}
		for _, d := range dirs {
			if n, err := v.Lookup(d, name); err == nil {
				if _, err := v.GetAttr(n); err != nil {
					t.Errorf("%q: found, but getattr: %v", name, err)
				}
			}
		}
	})
}

// TestTextEdgeCases compares the text files with hg on an empty
// repository, then one with a merge, a closed branch, an inactive branch,
// an active bookmark and a non-ASCII tag.
// TestHiddenChangesets checks that obsolete changesets are hidden as hg
// hides them: the text files match hg's, hidden nodes are not found and
// rev/ does not list them.

// TestHashIno: the inline hash is FNV-1a over each part and a 0 byte, as
// hash/fnv computes it, so inode numbers stay those of earlier versions.
func TestHashIno(t *testing.T) {
	for _, parts := range [][]string{{"t", "tip", "0123abcd", "dir/file.txt"}, {"cs", ""}, {}, {"é\x00x"}} {
		h := fnv.New64a()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		if got, want := hashIno(parts...), hashedBase|h.Sum64()%(1<<62-1); got != want {
			t.Errorf("hashIno(%q) = %#x, want %#x", parts, got, want)
		}
	}
}

// TestDirEntryNode: a changeset tree's listing carries, for each entry,
// the node Lookup finds for its name; other listings carry none.
func TestDirEntryNode(t *testing.T) {
	v := openView(t, testRepo(t))
	for _, p := range []string{"rev/1", "rev/1/dir", "rev/tip", "rev/0/dir/sub"} {
		dir := mustWalk(t, v, p)
		ents, err := v.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			t.Fatalf("%s lists nothing", p)
		}
		for _, e := range ents {
			want, err := v.Lookup(dir, e.Name)
			if err != nil {
				t.Fatalf("lookup %s/%s: %v", p, e.Name, err)
			}
			got := e.Node()
			if got == nil || *got != *want {
				t.Errorf("%s/%s: listed node %+v, lookup finds %+v", p, e.Name, got, want)
			}
		}
	}
	ents, err := v.ReadDir(mustWalk(t, v, "rev"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Node() != nil {
			t.Errorf("rev/%s carries a node", e.Name)
		}
	}
}
