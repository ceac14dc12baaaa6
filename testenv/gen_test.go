package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveGenerated()
	os.Exit(code)
}

func TestGenerateCaches(t *testing.T) {
	a := Generate(t, Small)
	b := Generate(t, Small)
	if a != b {
		t.Fatalf("same spec generated twice: %s, %s", a, b)
	}
	other := Small
	other.Seed = 7
	if c := Generate(t, other); c == a {
		t.Fatal("different specs share a repository")
	}
}

func TestGenerateSmall(t *testing.T) {
	dir := Generate(t, Small)
	hs := StartHgServer(t, dir)
	run := func(args ...string) string {
		o, e, code := hs.Run(t, args...)
		if code != 0 {
			t.Fatalf("hg %v: exit %d\n%s", args, code, e)
		}
		return string(o)
	}
	run("verify", "-q")
	if got := run("log", "-r", "v1.0+v2.0+stable-tag+feature+main-bm", "-T", "{rev} "); len(strings.Fields(got)) != 5 {
		t.Errorf("tags and bookmarks: %q", got)
	}
	if got := run("log", "-r", "public()", "-T", "x"); got == "" {
		t.Error("no public changesets")
	}
	if got := run("log", "-r", "secret()", "-T", "x"); got != "x" {
		t.Errorf("secret changesets: %q", got)
	}
	if got := run("log", "-r", "merge()", "-T", "x"); got != "x" {
		t.Errorf("merges: %q", got)
	}
	if got := run("log", "-r", "branch(stable)", "-T", "x"); len(got) < 2 {
		t.Errorf("stable branch: %q", got)
	}
	if got := run("log", "-r", "closed()", "-T", "x"); got != "x" {
		t.Errorf("closed heads: %q", got)
	}
	man := run("manifest", "-v", "-r", "tip")
	for _, want := range []string{"755 * bin/tool", "644 @ link", "644   meta-renamed.txt"} {
		if !strings.Contains(man, want) {
			t.Errorf("manifest lacks %q:\n%s", want, man)
		}
	}
	if got := run("log", "-r", "tip", "--follow", "-T", "{file_copies}", "copied/README.copy"); got == "" {
		t.Log("copy not shown by follow (fine)")
	}
	if got := run("debugdata", "meta-renamed.txt", "0"); !strings.HasPrefix(got, "\x01\ncopy: meta.txt\n") {
		t.Errorf("rename metadata: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "README")); err != nil {
		t.Errorf("working directory not checked out: %v", err)
	}
}

func TestGenerateFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("generates several repositories")
	}
	cases := []struct {
		spec     Spec
		has, not []string // requirements
		files    []string // store files that must exist (relative to .hg)
	}{
		{Encodings, []string{"store", "fncache", "dotencode", "generaldelta"}, nil,
			[]string{"store/data/big.bin.d", "store/data/~2ehidden.i", "store/data/au~78.i", "store/data/x.i.hg/file.i"}},
		{OldLayouts()[0], []string{"fncache"}, []string{"dotencode"}, []string{"store/data/_r_e_a_d_m_e.i"}},
		{OldLayouts()[1], []string{"store"}, []string{"fncache"}, []string{"store/data/_r_e_a_d_m_e.i"}},
		{OldLayouts()[2], nil, []string{"store"}, []string{"data/README.i", "00changelog.i"}},
		{NoCompression, []string{"exp-compression-none"}, nil, nil},
		{Zlib, nil, []string{"revlog-compression-zstd"}, nil},
		{NoGeneralDelta, nil, []string{"generaldelta", "sparserevlog"}, nil},
		{Obsolete, nil, nil, []string{"store/obsstore", "hgrc"}},
	}
	hs := StartHgServer(t, t.TempDir())
	for _, c := range cases {
		dir := Generate(t, c.spec)
		req := readReqs(t, dir)
		for _, r := range c.has {
			if !req[r] {
				t.Errorf("%s: lacks requirement %s", c.spec.Key(), r)
			}
		}
		for _, r := range c.not {
			if req[r] {
				t.Errorf("%s: has requirement %s", c.spec.Key(), r)
			}
		}
		for _, f := range c.files {
			if _, err := os.Stat(filepath.Join(dir, ".hg", f)); err != nil {
				t.Errorf("%s: %v", c.spec.Key(), err)
			}
		}
		if c.spec.Encodings && c.spec.Layout == LayoutDefault {
			dh, err := filepath.Glob(filepath.Join(dir, ".hg/store/dh/*"))
			if err != nil || len(dh) == 0 {
				t.Errorf("no hashed dh/ paths: %v", err)
			}
		}
		if _, e, code := hs.Run(t, "--cwd", dir, "verify", "-q"); code != 0 {
			t.Errorf("%s: hg verify: exit %d\n%s", c.spec.Key(), code, e)
		}
	}
}

func readReqs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	for _, p := range []string{".hg/requires", ".hg/store/requires"} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			continue
		}
		for _, l := range strings.Fields(string(b)) {
			m[l] = true
		}
	}
	return m
}

func TestGenerateDirOutsideTests(t *testing.T) {
	HgPath(t)
	dir := filepath.Join(t.TempDir(), "r")
	if err := GenerateDir(dir, Spec{Files: 3, NoCheckout: true}); err != nil {
		t.Fatal(err)
	}
	out := Hg(t, dir, "log", "-T", "{rev}\n")
	if string(out) != "0\n" {
		t.Errorf("log: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "README")); !os.IsNotExist(err) {
		t.Errorf("NoCheckout left a working copy: %v", err)
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("a", "x\ny\n", "b", "x\ny\n"); d != "" {
		t.Errorf("equal inputs: %q", d)
	}
	d := Diff("a", "x\ny\nz\n", "b", "x\nY\nz\n")
	if !strings.Contains(d, "-y\n") || !strings.Contains(d, "+Y\n") {
		t.Errorf("diff:\n%s", d)
	}
	// Long listings differing in one field of every record: each
	// differing line, with the one before it, not the first lines of each.
	var a, b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&a, "changeset: %d\nphase: public\n", i)
		fmt.Fprintf(&b, "changeset: %d\nphase: %s\n", i, map[bool]string{true: "draft", false: "public"}[i%500 == 7])
	}
	d = Diff("a", a.String(), "b", b.String())
	want := "--- a\n+++ b\n@@ line 16 @@\n changeset: 7\n-phase: public\n+phase: draft\n@@ line 1016 @@\n changeset: 507\n"
	if !strings.HasPrefix(d, want) || strings.Count(d, "+phase: draft") != 4 {
		t.Errorf("long diff:\n%s", d)
	}
}
