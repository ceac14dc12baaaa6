package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestSupportedMatchesMercurial asks hg's own gathersupportedrequirements
// for the set it recognizes.
func TestSupportedMatchesMercurial(t *testing.T) {
	t.Parallel()
	cmd := testenv.HgPython(t, `
from mercurial import ui as uimod, localrepo
for r in sorted(localrepo.gathersupportedrequirements(uimod.ui.load())):
    print(r.decode())
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	want := strings.Fields(string(out))
	if !slices.Equal(supported, want) {
		t.Errorf("supported requirements differ from Mercurial's:\nours %q\nhg's %q", supported, want)
	}
	for _, n := range want {
		if !SupportedRequirement(n) {
			t.Errorf("SupportedRequirement(%q) = false", n)
		}
	}
}

func TestParseRequirements(t *testing.T) {
	r := ParseRequirements([]byte("store\r\nfncache\rrevlogv1\n\nstore\nlast"))
	if got := r.List(); !slices.Equal(got, []string{"", "fncache", "last", "revlogv1", "store"}) {
		t.Errorf("List = %q", got)
	}
	if !errors.Is(r.Check(), ErrCorruptRequires) {
		t.Errorf("Check with an empty line = %v, want ErrCorruptRequires", r.Check())
	}
	if r := ParseRequirements(nil); r.Len() != 0 || r.Check() != nil {
		t.Errorf("empty: %v %v", r.List(), r.Check())
	}
	r = NewRequirements("zeta", "store", "alpha", "revlogv1")
	err := r.Check()
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupportedRequirement) {
		t.Fatalf("Check = %v", err)
	}
	if want := "repository requires features unknown to this Mercurial: alpha zeta"; err.Error() != want {
		t.Errorf("Error = %q, want %q", err, want)
	}
	if string(NewRequirements("b", "a").Bytes()) != "a\nb\n" {
		t.Errorf("Bytes = %q", NewRequirements("b", "a").Bytes())
	}
	if err := NewRequirements("store", "treemanifest").CheckReadable(); err == nil || err.Error() != "repository requires features unsupported by hgfs: treemanifest" {
		t.Errorf("CheckReadable = %v", err)
	}
}

// hgAbort is what hg prints for an abort with a hint.
func hgAbort(err error) string {
	s := "abort: " + err.Error() + "\n"
	var ue *UnsupportedError
	if errors.As(err, &ue) {
		s += "(" + ue.Hint() + ")\n"
	}
	return s
}

// TestRequirementsErrorsMatchHg breaks requires files and compares our
// errors with hg's aborts.
func TestRequirementsErrorsMatchHg(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	cases := []struct {
		name, file, add string
		corrupt         bool
	}{
		{"store-unknown", ".hg/store/requires", "zzz-feature\nlfs\n", false},
		{"wdir-unknown", ".hg/requires", "narrowhg-experimental\nlargefiles\n", false},
		{"corrupt", ".hg/requires", "-bad\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(base, c.name)
			testenv.Hg(t, base, "init", root)
			f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(c.file)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(c.add)
			f.Close()
			_, stderr, hgErr := testenv.HgResult(t, root, "log")
			if hgErr == nil {
				t.Fatal("hg log succeeded")
			}
			_, err = ReadRequirements(root)
			if err == nil {
				t.Fatal("ReadRequirements succeeded")
			}
			if c.corrupt != errors.Is(err, ErrCorruptRequires) {
				t.Errorf("err = %v", err)
			}
			if got := hgAbort(err); got != string(stderr) {
				t.Errorf("ours:\n%shg's:\n%s", got, stderr)
			}
			if _, err := Open(root); err == nil {
				t.Error("Open succeeded")
			}
		})
	}
}

func TestOpenLayoutsAndRefusals(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	for _, c := range []struct {
		name   string
		args   []string
		layout Layout
		refuse string
	}{
		{"default", nil, LayoutDotencode, ""},
		{"treemanifest", []string{"--config", "experimental.treemanifest=1"}, 0, "treemanifest"},
		{"revlogv2", []string{"--config", "experimental.revlogv2=enable-unstable-format-and-corrupt-my-data"}, 0, "exp-revlogv2.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(base, c.name)
			testenv.Hg(t, base, append([]string{"init", root}, c.args...)...)
			req, err := ReadRequirements(root)
			if err != nil {
				t.Fatalf("ReadRequirements: %v", err)
			}
			st, err := Open(root)
			if c.refuse != "" {
				var ue *UnsupportedError
				if !errors.As(err, &ue) || !ue.Hgfs || !slices.Contains(ue.Missing, c.refuse) {
					t.Fatalf("Open = %v, want refusal of %s", err, c.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Layout != c.layout || st.Dir != filepath.Join(root, ".hg", "store") {
				t.Errorf("layout %v dir %s", st.Layout, st.Dir)
			}
			// hg init writes share-safe in .hg/requires and the rest in
			// the store's: both must be read.
			for _, n := range []string{ReqShareSafe, ReqStore, ReqRevlogV1, ReqFncache} {
				if !req.Has(n) {
					t.Errorf("requirements %v lack %s", req, n)
				}
			}
		})
	}
}

func TestOpenShare(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := layoutRepo(t, LayoutDotencode)
	for _, rel := range []bool{false, true} {
		name := "share"
		args := []string{"--config", "extensions.share=", "share", "-q", "-U"}
		if rel {
			name = "relshare"
			args = append(args, "--relative")
		}
		dst := filepath.Join(base, name)
		testenv.Hg(t, base, append(args, src, dst)...)
		st, err := Open(dst)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := filepath.Join(src, ".hg", "store")
		if st.Dir != want || st.CacheDir != filepath.Join(src, ".hg", "cache") {
			t.Errorf("%s: Dir %s CacheDir %s, want %s", name, st.Dir, st.CacheDir, want)
		}
		if !st.Requirements.Has(ReqShared) && !st.Requirements.Has(ReqRelShared) || !st.Requirements.Has(ReqStore) {
			t.Errorf("%s: requirements %v", name, st.Requirements)
		}
		// Through an fs.FS the share source is out of reach.
		if _, err := OpenFS(os.DirFS(filepath.Join(dst, ".hg"))); !errors.Is(err, ErrShared) {
			t.Errorf("%s: OpenFS = %v, want ErrShared", name, err)
		}
	}
}

// TestOpenFS checks that a store opened through an fs.FS lists, in every
// layout, exactly what the one opened by path does.
func TestOpenFS(t *testing.T) {
	t.Parallel()
	for _, l := range []Layout{LayoutBasic, LayoutEncoded, LayoutFncache, LayoutDotencode} {
		root := layoutRepo(t, l)
		byPath, err := Open(root)
		if err != nil {
			t.Fatal(err)
		}
		byFS, err := OpenFS(os.DirFS(filepath.Join(root, ".hg")))
		if err != nil {
			t.Fatal(err)
		}
		if byFS.Layout != l || byFS.Requirements.String() != byPath.Requirements.String() || byFS.Dir != "" {
			t.Errorf("%v: OpenFS gives layout %v, requirements %v, Dir %q", l, byFS.Layout, byFS.Requirements, byFS.Dir)
		}
		for _, list := range []struct {
			what string
			get  func(*Store) (any, error)
		}{
			{"Walk", func(s *Store) (any, error) { return s.Walk() }},
			{"SnapshotFiles", func(s *Store) (any, error) { return s.SnapshotFiles(true, true) }},
			{"CacheFiles", func(s *Store) (any, error) { return s.CacheFiles() }},
			{"Fncache", func(s *Store) (any, error) { return s.Fncache() }},
		} {
			want, err := list.get(byPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := list.get(byFS)
			if err != nil {
				t.Fatalf("%v: %s through fs.FS: %v", l, list.what, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v: %s through fs.FS = %v, want %v", l, list.what, got, want)
			}
		}
	}
	if _, err := OpenFS(os.DirFS(t.TempDir() + "/missing")); !errors.Is(err, ErrNotRepository) {
		t.Errorf("OpenFS(missing dir) = %v", err)
	}
}

func TestOpenNotRepository(t *testing.T) {
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotRepository) {
		t.Errorf("Open(empty dir) = %v", err)
	}
}

func FuzzRequirements(f *testing.F) {
	f.Add([]byte("dotencode\nfncache\ngeneraldelta\nrevlogv1\nsparserevlog\nstore\n"))
	f.Add([]byte("share-safe\n"))
	f.Add([]byte("a\r\n\rb\n-x\n"))
	f.Add([]byte(""))
	f.Add([]byte("treemanifest\nexp-revlogv2.2\n\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := ParseRequirements(data)
		list := r.List()
		if !slices.IsSorted(list) {
			t.Fatalf("List not sorted: %q", list)
		}
		for _, n := range list {
			if !r.Has(n) || strings.ContainsAny(n, "\r\n") {
				t.Fatalf("bad entry %q", n)
			}
		}
		// Re-serializing and parsing is stable once the set is valid.
		if err := r.Check(); err == nil {
			if got := ParseRequirements(r.Bytes()).List(); !slices.Equal(got, list) {
				t.Fatalf("round trip %q -> %q", list, got)
			}
		} else if !errors.Is(err, ErrCorruptRequires) && !errors.Is(err, ErrUnsupportedRequirement) {
			t.Fatalf("Check = %v", err)
		}
		_ = r.CheckReadable()
	})
}

// TestDefaultAndSplitMatchHgInit: a fresh hg init writes exactly
// DefaultRequirements, divided as Split divides them.
func TestDefaultAndSplitMatchHgInit(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "r")
	testenv.Hg(t, filepath.Dir(root), "init", root)
	wdir, err := os.ReadFile(filepath.Join(root, ".hg", "requires"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := os.ReadFile(filepath.Join(root, ".hg", "store", "requires"))
	if err != nil {
		t.Fatal(err)
	}
	w, s, ok := DefaultRequirements().Split()
	if !ok || string(w.Bytes()) != string(wdir) || string(s.Bytes()) != string(store) {
		t.Errorf("Split(DefaultRequirements) = %q / %q, hg init wrote %q / %q", w.Bytes(), s.Bytes(), wdir, store)
	}
	if w, s, ok := NewRequirements(ReqStore, ReqRevlogV1).Split(); ok || w.String() != "revlogv1 store" || s.Len() != 0 {
		t.Errorf("Split without share-safe = %v / %v / %v", w, s, ok)
	}
}

func TestStreamCloneRequirements(t *testing.T) {
	src := NewRequirements(ReqStore, ReqFncache, ReqRevlogV1, ReqGeneralDelta, ReqTreemanifest, ReqShareSafe, ReqDirstateV2)
	if got := src.Streamed().String(); got != "generaldelta revlogv1 treemanifest" {
		t.Errorf("Streamed = %s", got)
	}
	got := NewStreamCloneRequirements(DefaultRequirements(), NewRequirements(ReqRevlogV1, ReqGeneralDelta)).String()
	if want := "dotencode fncache generaldelta revlogv1 share-safe store"; got != want {
		t.Errorf("NewStreamCloneRequirements = %s, want %s", got, want)
	}
	// Local choices that are not stream-fixed are kept.
	if got := NewStreamCloneRequirements(NewRequirements(ReqStore, ReqFncache, ReqPersistentNodemap, ReqRevlogV1), NewRequirements(ReqRevlogV1)).String(); got != "fncache persistent-nodemap revlogv1 store" {
		t.Errorf("NewStreamCloneRequirements kept %s", got)
	}
}
