package repo

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

func open(t *testing.T, spec testenv.Spec) (*Repo, string, *testenv.HgServer) {
	t.Helper()
	dir := testenv.Generate(t, spec)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, testenv.StartHgServer(t, dir)
}

// hgLines runs hg through the command server and returns its output lines.
func hgLines(t *testing.T, hs *testenv.HgServer, args ...string) []string {
	t.Helper()
	o, e, code := hs.Run(t, args...)
	if code != 0 {
		t.Fatalf("hg %v: exit %d: %s", args, code, e)
	}
	return strings.Fields(strings.ReplaceAll(string(o), "\n", "\n "))
}

// TestLookup resolves every kind of symbol and compares with hg's answer
// (hg log -r SYMBOL -T '{rev}'), errors included.
func TestLookup(t *testing.T) {
	for _, spec := range []testenv.Spec{testenv.Small, testenv.Obsolete} {
		r, dir, hs := open(t, spec)
		syms := []string{"tip", "null", ".", "0", "3", "-1", "-2", "-100", "100", "v1.0", "v2.0", "stable-tag",
			"local-tag", "feature", "main-bm", "stable", "default", "old-branch", "nope", "b", "x", "0" + "0",
			"stable:old-branch", "3:1", ":2", "16", "18", "a"}
		for rev := 0; rev < r.Changelog().Len(); rev += 3 {
			n := r.Changelog().Entry(rev).Node.String()
			syms = append(syms, n, n[:12], n[:5], "x"+n[:6])
		}
		for _, sym := range syms {
			o, e, code := hs.Run(t, "log", "-r", sym, "-T", "{rev}\n")
			revs, err := r.LookupRange(sym)
			if code != 0 {
				want := strings.TrimPrefix(strings.SplitN(string(e), "\n", 2)[0], "abort: ")
				if err == nil {
					t.Errorf("%s: %q: hgfs found %v, hg: %s", dir, sym, revs, e)
				} else if err.Error() != want {
					t.Errorf("%q: error %q, hg %q", sym, err, want)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q: %v; hg found %s", sym, err, o)
				continue
			}
			var got []string
			for _, rev := range revs {
				got = append(got, strconv.Itoa(rev))
			}
			if g, w := strings.Join(got, " "), strings.Join(strings.Fields(string(o)), " "); g != w {
				t.Errorf("%q: hgfs %s, hg %s", sym, g, w)
			}
		}
	}
}

func TestLookupErrors(t *testing.T) {
	r, _, _ := open(t, testenv.Obsolete)
	_, err := r.Lookup("nope")
	if !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("nope: %v", err)
	}
	_, err = r.Lookup("16")
	var le *LookupError
	if !errors.Is(err, ErrHidden) || !errors.As(err, &le) || le.Hint() == "" {
		t.Errorf("hidden 16: %v", err)
	}
}

func nodeMap(t *testing.T, lines []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(lines); i += 2 {
		m[lines[i]] = lines[i+1]
	}
	return m
}

func hexMap(m map[string]revlog.Node) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v.String()
	}
	return out
}

func sameMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, hg %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s %q: got %s, hg %s", what, k, got[k], v)
		}
	}
}

func TestNames(t *testing.T) {
	for _, spec := range []testenv.Spec{testenv.Small, testenv.Obsolete} {
		r, _, hs := open(t, spec)
		tags, err := r.Tags()
		if err != nil {
			t.Fatal(err)
		}
		sameMap(t, "tags", hexMap(tags), nodeMap(t, hgLines(t, hs, "tags", "-T", "{tag} {node}\n")))
		bms, err := r.Bookmarks()
		if err != nil {
			t.Fatal(err)
		}
		sameMap(t, "bookmarks", hexMap(bms), nodeMap(t, hgLines(t, hs, "bookmarks", "-T", "{bookmark} {node}\n")))

		// Phases and visibility of every changeset.
		want := nodeMap(t, hgLines(t, hs, "log", "--hidden", "-T", "{rev} {phase}\n"))
		got := map[string]string{}
		for rev := 0; rev < r.Changelog().Len(); rev++ {
			got[strconv.Itoa(rev)] = r.Phase(rev).String()
		}
		sameMap(t, "phases", got, want)
		vis, err := r.Visible()
		if err != nil {
			t.Fatal(err)
		}
		var gv []string
		for _, rev := range vis {
			gv = append(gv, strconv.Itoa(rev))
		}
		wv := hgLines(t, hs, "log", "-r", "all()", "-T", "{rev}\n")
		if strings.Join(gv, " ") != strings.Join(wv, " ") {
			t.Errorf("visible: got %v, hg %v", gv, wv)
		}
		for _, br := range []string{"default", "stable", "old-branch"} {
			heads, err := r.BranchHeads(br)
			if err != nil {
				t.Fatal(err)
			}
			var gh []string
			for _, h := range heads {
				gh = append(gh, strconv.Itoa(h))
			}
			wh := hgLines(t, hs, "log", "-r", "sort(head() and branch('"+br+"'))", "-T", "{rev}\n")
			if strings.Join(gh, " ") != strings.Join(wh, " ") {
				t.Errorf("heads of %s: got %v, hg %v", br, gh, wh)
			}
		}
		p, err := r.WorkingParent()
		if err != nil {
			t.Fatal(err)
		}
		if w := hgLines(t, hs, "log", "-r", ".", "-T", "{rev}\n"); strconv.Itoa(p) != w[0] {
			t.Errorf("working parent %d, hg %s", p, w[0])
		}
	}
}

// TestManifestAndFiles reads every file of the tip manifest and compares
// with hg's manifest and cat.
func TestManifestAndFiles(t *testing.T) {
	r, _, hs := open(t, testenv.Encodings)
	tip, err := r.Tip()
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Manifest(tip)
	if err != nil {
		t.Fatal(err)
	}
	o, _, _ := hs.Run(t, "manifest", "-r", "tip")
	var paths []string
	for _, e := range m {
		paths = append(paths, e.Path)
	}
	if got := strings.Join(paths, "\n") + "\n"; got != string(o) {
		t.Fatalf("manifest differs:\n%s", testenv.Diff("hg", string(o), "repo", got))
	}
	if !sort.StringsAreSorted(paths) {
		t.Error("manifest not sorted")
	}
	for _, e := range m {
		data, err := r.FileData(e)
		if err != nil {
			t.Errorf("%s: %v", e.Path, err)
			continue
		}
		want, _, code := hs.Run(t, "cat", "-r", "tip", "path:"+e.Path)
		if code != 0 || string(want) != string(data) {
			t.Errorf("%s: %d bytes, hg cat gives %d (exit %d)", e.Path, len(data), len(want), code)
		}
		if _, ok := FindEntry(m, e.Path); !ok {
			t.Errorf("FindEntry(%q) failed", e.Path)
		}
	}
	if _, err := r.File("no/such/file"); !errors.Is(err, ErrNoFile) {
		t.Errorf("File(missing) = %v, want ErrNoFile", err)
	}
	// ReadManifest by the tip changeset's manifest node is Manifest(tip);
	// FileContent over a filelog opened by the caller is FileData.
	c, err := r.Changeset(tip)
	if err != nil {
		t.Fatal(err)
	}
	if byNode, err := r.ReadManifest(c.Manifest); err != nil || !slices.Equal(byNode, m) {
		t.Errorf("ReadManifest(%s): %d entries, %v; Manifest(tip) has %d", c.Manifest.Short(), len(byNode), err, len(m))
	}
	if m, err := r.ReadManifest(revlog.NullNode); err != nil || m != nil {
		t.Errorf("ReadManifest(null) = %v, %v", m, err)
	}
	if _, err := r.ReadManifest(revlog.Node{1}); !errors.Is(err, revlog.ErrNotFound) {
		t.Errorf("ReadManifest(unknown) = %v, want ErrNotFound", err)
	}
	e := m[0]
	fl, err := r.File(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	want, _ := r.FileData(e)
	if got, err := FileContent(fl, e); err != nil || string(got) != string(want) {
		t.Errorf("FileContent(%s) = %d bytes, %v; FileData gives %d", e.Path, len(got), err, len(want))
	}
	e.Node = revlog.Node{1}
	if _, err := FileContent(fl, e); !errors.Is(err, revlog.ErrNotFound) || !strings.Contains(err.Error(), e.Path+"@") {
		t.Errorf("FileContent(unknown node) = %v", err)
	}
}

func TestOldLayouts(t *testing.T) {
	for _, spec := range testenv.OldLayouts() {
		r, _, hs := open(t, spec)
		tip, err := r.Tip()
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Manifest(tip)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m {
			if _, err := r.FileData(e); err != nil {
				t.Errorf("%s: %s: %v", spec.Layout, e.Path, err)
			}
		}
		if w := hgLines(t, hs, "log", "-r", "tip", "-T", "{rev}\n"); strconv.Itoa(tip) != w[0] {
			t.Errorf("tip %d, hg %s", tip, w[0])
		}
	}
}

func TestEmptyRepository(t *testing.T) {
	dir := t.TempDir()
	testenv.Hg(t, dir, "init", "r")
	r, err := Open(dir + "/r")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, sym := range []string{"tip", ".", "null", "-1"} {
		if rev, err := r.Lookup(sym); err != nil || rev != revlog.NullRev {
			t.Errorf("%s: %d, %v", sym, rev, err)
		}
	}
	if m, err := r.Manifest(revlog.NullRev); err != nil || len(m) != 0 {
		t.Errorf("null manifest: %v, %v", m, err)
	}
	// "0" is a prefix of the null node, as hg resolves it too.
	if rev, err := r.Lookup("0"); err != nil || rev != revlog.NullRev {
		t.Errorf("0 in an empty repository: %d, %v", rev, err)
	}
	if _, err := r.Lookup("1"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("1 in an empty repository: %v", err)
	}
}

// TestDirstateV2Parent reads the working directory parent from a
// dirstate-v2 docket (as package dirstate writes it).
func TestDirstateV2Parent(t *testing.T) {
	dir := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	r0, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := r0.Node(3)
	r0.Close()
	dk := dirstate.Docket{}
	dk.Parents[0] = want
	docket := dk.Encode()
	if err := os.WriteFile(dir+"/.hg/dirstate", docket, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rev, err := r.Lookup("."); err != nil || rev != 3 {
		t.Errorf(". = %d, %v; want 3", rev, err)
	}
}

// TestOpenFS checks that a repository read through an fs.FS answers as
// the one opened by path: names, heads, branches, phases and lookups.
func TestOpenFS(t *testing.T) {
	for _, spec := range []testenv.Spec{testenv.Small, testenv.Obsolete} {
		byPath, dir, _ := open(t, spec)
		byFS, err := OpenFS(os.DirFS(dir + "/.hg"))
		if err != nil {
			t.Fatal(err)
		}
		defer byFS.Close()
		if byFS.Root != "" || byFS.Changelog().Len() != byPath.Changelog().Len() {
			t.Fatalf("OpenFS: Root %q, %d changesets", byFS.Root, byFS.Changelog().Len())
		}
		same := func(what string, get func(*Repo) (any, error)) {
			t.Helper()
			want, err := get(byPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := get(byFS)
			if err != nil {
				t.Fatalf("%s through fs.FS: %v", what, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s through fs.FS = %v, want %v", what, got, want)
			}
		}
		same("Visible", func(r *Repo) (any, error) { return r.Visible() })
		same("Heads", func(r *Repo) (any, error) { return r.Heads() })
		same("Branches", func(r *Repo) (any, error) { return r.Branches() })
		same("Tags", func(r *Repo) (any, error) { return r.Tags() })
		same("Bookmarks", func(r *Repo) (any, error) { return r.Bookmarks() })
		same("ActiveBookmark", func(r *Repo) (any, error) { return r.ActiveBookmark() })
		same("WorkingParent", func(r *Repo) (any, error) { return r.WorkingParent() })
		tags, _ := byPath.Tags()
		bms, _ := byPath.Bookmarks()
		branches, _ := byPath.Branches()
		syms := []string{"tip", "null", ".", "0", "-1", "x", "0000", "nonexistent"}
		for name := range tags {
			syms = append(syms, name)
		}
		for name := range bms {
			syms = append(syms, name)
		}
		for _, b := range branches {
			syms = append(syms, b.Name)
		}
		for rev := 0; rev < byPath.Changelog().Len(); rev++ {
			syms = append(syms, byPath.Node(rev).String()[:8])
		}
		for _, sym := range syms {
			same("Lookup "+sym, func(r *Repo) (any, error) {
				rev, err := r.Lookup(sym)
				return fmt.Sprint(rev, err), nil
			})
		}
	}
}
