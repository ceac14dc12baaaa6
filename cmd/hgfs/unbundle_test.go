package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// bundleTypes are the bundle specs hg bundle writes that hgfs unbundle
// must apply (issue: every type, and cg3).
var bundleTypes = []string{"none-v1", "gzip-v1", "bzip2-v1", "none-v2", "zstd-v2", "bzip2-v2", "none-v2;cg.version=03"}

// targetFormats are empty repositories of different formats the bundles
// are applied to: the default (zstd, generaldelta, sparse), zlib without
// generaldelta (deltas must be recomputed against the previous revision),
// and the older store layouts (file name encodings).
var targetFormats = map[string][]string{
	"default":        nil,
	"zlib-nogd":      {"--config", "format.revlog-compression=zlib", "--config", "format.usegeneraldelta=false", "--config", "format.sparse-revlog=false"},
	"no-dotencode":   {"--config", "format.dotencode=false"},
	"no-fncache":     {"--config", "format.usefncache=false"},
	"no-compression": {"--config", "format.revlog-compression=none"},
}

// unbundleBoth applies bundle with real hg and with hgfs to two fresh
// repositories made with initArgs, and compares what both print and the
// resulting repositories (hg verify, hg log --debug with phases and
// bookmarks).
func unbundleBoth(t *testing.T, dir, name, bundle string, initArgs []string) {
	t.Helper()
	hgRepo := filepath.Join(dir, name+"-hg")
	hgfsRepo := filepath.Join(dir, name+"-hgfs")
	testenv.Hg(t, dir, append([]string{"init", hgRepo}, initArgs...)...)
	testenv.Hg(t, dir, append([]string{"init", hgfsRepo}, initArgs...)...)
	want := string(testenv.Hg(t, hgRepo, "--config", "experimental.changegroup3=true", "unbundle", bundle))
	got, stderr, code := hgfsIn(hgfsRepo, "unbundle", bundle)
	if code != 0 {
		t.Fatalf("hgfs unbundle: exit %d\n%s%s", code, got, stderr)
	}
	if got != want {
		t.Errorf("output differs:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
	// hg's own result needs no verify; hgfs's must pass it.
	if w, g := repoState(t, hgRepo, false), repoState(t, hgfsRepo, true); w != g {
		t.Errorf("repository differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
	if _, err := os.Stat(filepath.Join(hgfsRepo, ".hg", "store", "journal")); err == nil {
		t.Error("journal left behind")
	}
}

// generatedKinds are the repository kinds internal/hggen makes.
var generatedKinds = map[string]testenv.Spec{
	"small":          testenv.Small,
	"encodings":      testenv.Encodings,
	"zlib":           testenv.Zlib,
	"nocompression":  testenv.NoCompression,
	"nogeneraldelta": testenv.NoGeneralDelta,
	"obsolete":       testenv.Obsolete,
	"longchain":      testenv.LongChain,
}

// TestUnbundleEveryKindAndType applies `hg bundle -a` of every generated
// repository kind, in every bundle type, to an empty repository: output,
// hg verify and hg log --debug must equal hg unbundle's.
func TestUnbundleEveryKindAndType(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	for name, spec := range generatedKinds {
		t.Run(name, func(t *testing.T) {
			// Kinds run two at a time: most of the time is hg processes,
			// and the package's other tests leave a core idle.
			t.Parallel()
			src := testenv.Generate(t, spec)
			for _, typ := range bundleTypes {
				t.Run(strings.ReplaceAll(typ, ";", "_"), func(t *testing.T) {
					label := name + "-" + strings.NewReplacer(";", "_", "=", "_").Replace(typ)
					bundle := filepath.Join(dir, label+".hg")
					testenv.Hg(t, src, "--config", "experimental.changegroup3=true", "bundle", "-q", "-a", "--hidden", "-t", typ, bundle)
					unbundleBoth(t, dir, label, bundle, nil)
				})
			}
		})
	}
}

// TestUnbundleTargetFormats applies bundles to repositories of other
// formats: deltas recomputed without generaldelta, zlib and no
// compression, the older store layouts.
func TestUnbundleTargetFormats(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	for _, name := range []string{"encodings", "nogeneraldelta", "longchain"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := testenv.Generate(t, generatedKinds[name])
			bundle := filepath.Join(dir, name+".hg")
			testenv.Hg(t, src, "bundle", "-q", "-a", "--hidden", "-t", "zstd-v2", bundle)
			for fname, args := range targetFormats {
				t.Run(fname, func(t *testing.T) {
					unbundleBoth(t, dir, name+"-"+fname, bundle, args)
				})
			}
		})
	}
}

// TestUnbundleIncremental applies bundles of successive ranges on top of
// each other, into a repository that already has the earlier ones, and a
// bundle with nothing new.
func TestUnbundleIncremental(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	first := filepath.Join(dir, "first.hg")
	rest := filepath.Join(dir, "rest.hg")
	all := filepath.Join(dir, "all.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "null", "-r", "0", "-t", "none-v2", first)
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-a", "-t", "gzip-v1", rest)
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2", all)

	hgRepo := filepath.Join(dir, "hg")
	hgfsRepo := filepath.Join(dir, "hgfs")
	testenv.Hg(t, dir, "init", hgRepo)
	testenv.Hg(t, dir, "init", hgfsRepo)
	for _, b := range []string{first, rest, all} {
		want := string(testenv.Hg(t, hgRepo, "unbundle", b))
		got, stderr, code := hgfsIn(hgfsRepo, "unbundle", b)
		if code != 0 {
			t.Fatalf("hgfs unbundle %s: exit %d\n%s%s", b, code, got, stderr)
		}
		if got != want {
			t.Errorf("%s: output differs:\n%s", b, testenv.Diff("hg", want, "hgfs", got))
		}
		if w, g := repoState(t, hgRepo, true), repoState(t, hgfsRepo, true); w != g {
			t.Errorf("%s: repository differs:\n%s", b, testenv.Diff("hg", w, "hgfs", g))
		}
	}
	// hg's undo files make hg rollback work on an hgfs transaction.
	testenv.Hg(t, hgRepo, "rollback", "-q")
	testenv.Hg(t, hgfsRepo, "rollback", "-q")
	if w, g := repoState(t, hgRepo, true), repoState(t, hgfsRepo, true); w != g {
		t.Errorf("after rollback:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
}

// storeSnapshot maps every file under the repository's .hg to its bytes,
// leaving out caches and the journal.* and undo.* copies a transaction
// leaves behind whether it commits or not (hg leaves them too).
func storeSnapshot(t *testing.T, repo string) map[string]string {
	t.Helper()
	out := map[string]string{}
	hg := filepath.Join(repo, ".hg")
	err := filepath.Walk(hg, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(hg, p)
		base := filepath.Base(rel)
		if strings.HasPrefix(base, "undo") || strings.HasPrefix(base, "journal.") || strings.HasPrefix(rel, "cache") || strings.HasPrefix(rel, "wcache") {
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if w, ok := b[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if w != v {
			t.Errorf("%s: %s changed (%d -> %d bytes)", what, k, len(v), len(w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// TestUnbundleTruncated cuts a bundle at many points: every cut must
// abort, roll back and leave the repository byte for byte as it was.
func TestUnbundleTruncated(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	base := filepath.Join(dir, "base.hg")
	more := filepath.Join(dir, "more.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "null", "-r", "0", "-t", "none-v2", base)
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-a", "-t", "none-v1", more)
	repo := filepath.Join(dir, "repo")
	testenv.Hg(t, dir, "init", repo)
	if _, stderr, code := hgfsIn(repo, "unbundle", base); code != 0 {
		t.Fatalf("unbundle base: %s", stderr)
	}
	before := storeSnapshot(t, repo)
	data, err := os.ReadFile(more)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.hg")
	step := len(data)/40 + 1
	for n := 0; n < len(data); n += step {
		if err := os.WriteFile(cut, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := hgfsIn(repo, "unbundle", cut)
		if code == 0 {
			t.Fatalf("cut at %d/%d: unbundle succeeded\n%s", n, len(data), stdout)
		}
		if !strings.HasPrefix(lastLine(stderr), "abort: ") {
			t.Errorf("cut at %d: stderr %q", n, stderr)
		}
		sameSnapshot(t, fmt.Sprintf("cut at %d", n), before, storeSnapshot(t, repo))
	}
	testenv.Hg(t, repo, "verify", "-q")
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestUnbundleHashedSplit applies a bundle whose filelog has a name long
// enough for the hashed dh/ encoding and content big enough to split:
// the .d name carries its own digest, not the .i's with a new suffix.
func TestUnbundleHashedSplit(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", src)
	long := strings.Repeat("Long_Directory_Name/", 8) + strings.Repeat("x", 60) + ".txt"
	p := filepath.Join(src, filepath.FromSlash(long))
	os.MkdirAll(filepath.Dir(p), 0o755)
	// Incompressible lines, so the revlog passes 128 KiB and splits.
	var content strings.Builder
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&content, "%016x%016x%016x\n", rnd.Uint64(), rnd.Uint64(), rnd.Uint64())
	}
	os.WriteFile(p, []byte(content.String()), 0o644)
	testenv.Hg(t, src, "commit", "-qAm", "big")
	os.WriteFile(p, []byte(content.String()+"more\n"), 0o644)
	testenv.Hg(t, src, "commit", "-qm", "more")
	bundle := filepath.Join(dir, "b.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2", bundle)
	unbundleBoth(t, dir, "hashed", bundle, nil)
	// The hgfs repository's store names are hg's, .d included.
	var hgNames, hgfsNames []string
	for _, r := range []struct {
		dir   string
		names *[]string
	}{{filepath.Join(dir, "hashed-hg"), &hgNames}, {filepath.Join(dir, "hashed-hgfs"), &hgfsNames}} {
		root := filepath.Join(r.dir, ".hg", "store")
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && strings.Contains(path, "/dh/") {
				rel, _ := filepath.Rel(root, path)
				*r.names = append(*r.names, rel)
			}
			return nil
		})
	}
	if strings.Join(hgNames, "\n") != strings.Join(hgfsNames, "\n") || len(hgNames) != 2 {
		t.Errorf("hashed names: hg %v, hgfs %v", hgNames, hgfsNames)
	}
}

// TestUnbundlePhasesWithSecret applies a bundle written with phases=yes
// from a repository holding a public, a draft and a secret changeset:
// hg marks the changegroup part targetphase=2 (everything arrives
// secret) and its phase-heads part lists the public and draft heads. The
// draft head must leave the secret phase for draft, not for public
// (advanceboundary retracts the roots it deleted into the target phase);
// hgfs made it public.
func TestUnbundlePhasesWithSecret(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", src)
	commit := func(name string, args ...string) {
		if err := os.WriteFile(filepath.Join(src, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Hg(t, src, append([]string{"commit", "-qAm", name}, args...)...)
	}
	commit("a")
	testenv.Hg(t, src, "phase", "-p", "-r", "0")
	commit("b")
	testenv.Hg(t, src, "update", "-q", "0")
	commit("c", "--secret")
	commit("d", "--secret")
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			bundle := filepath.Join(dir, hg.Name+".hg")
			hg.Run(t, src, "bundle", "-q", "-a", "-t", "none-v2;phases=yes", bundle)
			want := filepath.Join(dir, hg.Name+"-hg")
			got := filepath.Join(dir, hg.Name+"-hgfs")
			hg.Run(t, dir, "init", want)
			hg.Run(t, dir, "init", got)
			hg.Run(t, want, "unbundle", "-q", bundle)
			if out, errOut, code := hgfsIn(got, "unbundle", "-q", bundle); code != 0 {
				t.Fatalf("hgfs unbundle: exit %d\n%s%s", code, out, errOut)
			}
			phases := func(repo string) string {
				return string(hg.Run(t, repo, "log", "-T", "{rev} {phase}\n"))
			}
			if w, g := phases(want), phases(got); w != g {
				t.Errorf("phases differ:\n%s", testenv.Diff(hg.Name, w, "hgfs", g))
			}
			hg.Run(t, got, "verify", "-q")
		})
	}
}
