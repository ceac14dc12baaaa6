package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// deltaInfoRepo makes, with hg 7, a repository in a format hg 6.3 and
// hgfs lack: delta-info-revlog (format.use-delta-info-flags), which hg 7
// streams as a requirement (it is not in STREAM_IGNORABLE_REQUIREMENTS).
func deltaInfoRepo(t *testing.T, hg7 testenv.Mercurial, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "deltainfo")
	hg7.Run(t, dir, "init", "--config", "format.use-delta-info-flags=yes", src)
	for i, content := range []string{"one\n", "one\ntwo\n", "one\ntwo\nthree\n"} {
		os.WriteFile(filepath.Join(src, "f"), []byte(content), 0o644)
		os.WriteFile(filepath.Join(src, "g"+strings.Repeat("x", i)), []byte(content), 0o644)
		hg7.Run(t, src, "commit", "-qAm", content)
	}
	hg7.Run(t, src, "bookmark", "-r", "1", "mark")
	reqs, _ := os.ReadFile(filepath.Join(src, ".hg", "store", "requires"))
	if !strings.Contains(string(reqs), "delta-info-revlog\n") {
		t.Fatalf("hg 7 made no delta-info-revlog repository:\n%s", reqs)
	}
	return src
}

// TestCloneMissingRequirements: a stream whose requirements hgfs lacks
// (hg 7's delta-info-revlog) is not asked for: hgfs clone --stream from
// hg 7's hg serve warns as hg 6.3 does (streamclone.canperformstreamclone)
// and applies changegroups, with hg 6.3's output and the history hg 7's
// own clone has. Where a stream is the only way (--mount), a local source
// and stream bundles, the clone is refused by name, with hg 6.3's
// messages.
func TestCloneMissingRequirements(t *testing.T) {
	t.Parallel()
	hg6 := testenv.Default(t)
	hg7 := testenv.Hg7(t)
	dir := t.TempDir()
	src := deltaInfoRepo(t, hg7, dir)
	url := hg7.Serve(t, src)
	history := func(repo string) string {
		testenv.Hg(t, repo, "verify", "-q")
		return string(testenv.Hg(t, repo, "log", "--debug", "-r", "all()"))
	}
	// --pull: a copy would keep the format hg 6.3 cannot read.
	hg7.Run(t, dir, "clone", "-q", "-U", "--pull", src, filepath.Join(dir, "hg7-clone"))
	want := history(filepath.Join(dir, "hg7-clone"))

	for _, args := range [][]string{{"--stream"}, {}} {
		name := "hgfs" + strings.Join(args, "")
		t.Run(name, func(t *testing.T) {
			dest := filepath.Join(dir, name)
			stdout, stderr, code := hgfsClone(t, dir, append(append([]string{"-U"}, args...), url, dest)...)
			if code != 0 {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
			}
			o, e, err := hg6.Result(t, dir, append(append([]string{"clone", "-U"}, args...), url, filepath.Join(dir, "hg6"+name))...)
			if err != nil {
				t.Fatalf("hg 6.3 clone: %v\n%s%s", err, o, e)
			}
			if stdout != string(o) || stderr != string(e) {
				t.Errorf("output differs from hg 6.3's:\n%s", testenv.Diff("hg6.3", string(o)+string(e), "hgfs", stdout+stderr))
			}
			if len(args) > 0 && !strings.Contains(stderr, "client is missing requirements: delta-info-revlog\n") {
				t.Errorf("no warning naming the requirement: %q", stderr)
			}
			if got := history(dest); got != want {
				t.Errorf("clone differs from hg 7's:\n%s", testenv.Diff("hg7", want, "hgfs", got))
			}
		})
	}

	packed1 := filepath.Join(dir, "deltainfo.packed1")
	hg7.Run(t, src, "debugcreatestreamclonebundle", packed1)
	v2 := filepath.Join(dir, "deltainfo.v2")
	hg7.Run(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", v2)
	hg6.Run(t, dir, "init", "empty6")
	refusals := []struct {
		name   string
		args   []string
		oracle []string // hg 6.3's command and its directory
	}{
		{"mount", []string{"--mount", "--cache", filepath.Join(dir, "cache"), url}, nil},
		{"local", []string{src}, []string{dir, "clone", "-U", src, filepath.Join(dir, "hg6-local")}},
		{"packed1", []string{packed1}, []string{filepath.Join(dir, "empty6"), "debugapplystreamclonebundle", packed1}},
		{"stream-v2-bundle", []string{v2}, []string{filepath.Join(dir, "empty6"), "unbundle", v2}},
	}
	t.Run("unbundle", func(t *testing.T) {
		repo := filepath.Join(dir, "unbundle-target")
		hg6.Run(t, dir, "init", repo)
		before := repoState(t, repo, false)
		stdout, stderr, code := hgfsIn(repo, "unbundle", v2)
		o, e, err := hg6.Result(t, filepath.Join(dir, "empty6"), "unbundle", v2)
		if err == nil || code != 255 || stdout != string(o) || stderr != string(e) {
			t.Errorf("hgfs unbundle: exit %d, hg 6.3: %v\n%s", code, err, testenv.Diff("hg6.3", string(o)+string(e), "hgfs", stdout+stderr))
		}
		if after := repoState(t, repo, true); after != before {
			t.Errorf("repository changed:\n%s", testenv.Diff("before", before, "after", after))
		}
	})
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(dir, "refused-"+tc.name)
			stdout, stderr, code := hgfsClone(t, dir, append([]string{"-U"}, append(tc.args, dest)...)...)
			if code != 255 || !strings.Contains(stderr, "delta-info-revlog") {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
			}
			if tc.oracle != nil {
				o, e, err := hg6.Result(t, tc.oracle[0], tc.oracle[1:]...)
				if err == nil {
					t.Fatalf("hg 6.3 %s succeeded:\n%s", tc.oracle[1], o)
				}
				if stdout != string(o) || stderr != string(e) {
					t.Errorf("output differs from hg 6.3's:\n%s", testenv.Diff("hg6.3", string(o)+string(e), "hgfs", stdout+stderr))
				}
			}
			if _, err := os.Stat(dest); !os.IsNotExist(err) {
				t.Errorf("destination left behind: %v", err)
			}
		})
	}
}

// TestCloneTreeManifest: hgfs cannot write tree manifests from
// changegroups, so a clone from hg 7's hg serve of a treemanifest
// repository is refused by name before anything is fetched (hg 6.3 fails
// there too, on "no common changegroup version"), with the hint that
// --stream copies it, which then gives what hg 6.3's stream clone gives.
func TestCloneTreeManifest(t *testing.T) {
	hg7 := testenv.Hg7(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "tree")
	hg7.Run(t, dir, "init", "--config", "experimental.treemanifest=yes", src)
	os.MkdirAll(filepath.Join(src, "d", "e"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "e", "f"), []byte("f\n"), 0o644)
	os.WriteFile(filepath.Join(src, "top"), []byte("top\n"), 0o644)
	hg7.Run(t, src, "commit", "-qAm", "trees")
	url := hg7.Serve(t, src)

	dest := filepath.Join(dir, "pulled")
	stdout, stderr, code := hgfsClone(t, dir, "-U", url, dest)
	want := "abort: the source repository requires treemanifest, which hgfs cannot write from changegroups\n(clone it with --stream, which copies it as it is)\n"
	if code != 255 || stdout != "" || stderr != want {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}

	dest = filepath.Join(dir, "streamed")
	if stdout, stderr, code := hgfsClone(t, dir, "-U", "--stream", url, dest); code != 0 {
		t.Fatalf("hgfs clone --stream: exit %d\n%s%s", code, stdout, stderr)
	}
	testenv.Hg(t, dir, "clone", "-q", "-U", "--stream", url, filepath.Join(dir, "hg6"))
	if got, want := repoState(t, dest, true), repoState(t, filepath.Join(dir, "hg6"), false); got != want {
		t.Errorf("clone differs from hg 6.3's:\n%s", testenv.Diff("hg6.3", want, "hgfs", got))
	}
}

// TestCloneLocalFormats: a local copy keeps the source's store
// requirements and so its file name layout (localrepo.clone_requirements),
// as each Mercurial's clone does, where a stream into the local defaults
// would give it dotencode and fncache.
func TestCloneLocalFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hgs := testenv.Mercurials(t)
	layout := func(repo string) string {
		var b strings.Builder
		for _, f := range []string{".hg/requires", ".hg/store/requires"} {
			data, _ := os.ReadFile(filepath.Join(repo, f))
			b.WriteString(f + ":\n" + string(data))
		}
		// The revlogs' on-disk names.
		data := filepath.Join(repo, ".hg", "store", "data")
		filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(data, p)
				b.WriteString(filepath.ToSlash(rel) + "\n")
			}
			return err
		})
		return b.String()
	}
	for name, initArgs := range map[string][]string{
		"no-dotencode": {"--config", "format.dotencode=false"},
		"no-fncache":   {"--config", "format.usefncache=false"},
	} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(dir, name)
			testenv.Hg(t, dir, append([]string{"init", src}, initArgs...)...)
			os.MkdirAll(filepath.Join(src, "Upper"), 0o755)
			os.WriteFile(filepath.Join(src, "Upper", ".hidden~"), []byte("x\n"), 0o644)
			testenv.Hg(t, src, "commit", "-qAm", "x")
			dest := filepath.Join(dir, name+"-hgfs")
			if stdout, stderr, code := hgfsClone(t, dir, "-U", src, dest); code != 0 {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
			}
			testenv.Hg(t, dest, "verify", "-q")
			for _, hg := range hgs {
				oracle := filepath.Join(dir, name+"-"+hg.Name)
				hg.Run(t, dir, "clone", "-q", "-U", src, oracle)
				if got, want := layout(dest), layout(oracle); got != want {
					t.Errorf("differs from %s's clone:\n%s", hg.Name, testenv.Diff(hg.Name, want, "hgfs", got))
				}
			}
		})
	}
}
