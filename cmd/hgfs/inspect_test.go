package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestMain removes the repositories testenv.Generate made for this
// package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

// hgIn runs real hg in dir and returns its outputs and exit status.
func hgIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	o, e, err := testenv.HgResult(t, dir, args...)
	code = 0
	if err != nil {
		var ok bool
		if code, ok = exitCode(err); !ok {
			t.Fatalf("hg %s: %v", strings.Join(args, " "), err)
		}
	}
	return string(o), string(e), code
}

func exitCode(err error) (int, bool) {
	type coder interface{ ExitCode() int }
	if c, ok := err.(coder); ok {
		return c.ExitCode(), true
	}
	return 0, false
}

// goldenCompare runs the same command with hg (through the command
// server hs) and hgfs in dir and fails unless stdout, stderr and the exit
// status are identical.
func goldenCompare(t *testing.T, hs *testenv.HgServer, dir string, args ...string) {
	t.Helper()
	// Parallel tests share generated repositories, and a command that
	// takes the repository's lock (verify, a local clone of it) waits
	// for another test's: hg then prints "waiting for lock ..." and "got
	// lock after N seconds", which are about the suite, not the command
	// compared. ui.timeout.warn at hg's lock timeout keeps them out;
	// a wait that long still fails as hg's timeout.
	hob, heb, hc := hs.Run(t, append([]string{"--cwd", dir, "--config", "ui.timeout.warn=600"}, args...)...)
	ho, he := string(hob), string(heb)
	fo, fe, fc := hgfsIn(dir, args...)
	name := strings.Join(args, " ")
	if d := testenv.Diff("hg "+name, ho, "hgfs "+name, fo); d != "" {
		t.Errorf("stdout differs in %s:\n%s", dir, d)
	}
	if d := testenv.Diff("hg "+name+" (stderr)", he, "hgfs "+name+" (stderr)", fe); d != "" {
		t.Errorf("stderr differs in %s:\n%s", dir, d)
	}
	if hc != fc {
		t.Errorf("%s: exit status: hg %d, hgfs %d", name, hc, fc)
	}
}

// goldenRepos are the generated repositories every inspection command is
// compared on: each compression, generaldelta on and off, every store
// layout, encodings, split revlogs, history features, obsolescence.
func goldenRepos() map[string]testenv.Spec {
	m := map[string]testenv.Spec{
		"small":          testenv.Small,
		"encodings":      testenv.Encodings,
		"zlib":           testenv.Zlib,
		"none":           testenv.NoCompression,
		"nogeneraldelta": testenv.NoGeneralDelta,
		"obsolete":       testenv.Obsolete,
	}
	for _, s := range testenv.OldLayouts() {
		m["encodings-"+string(s.Layout)] = s
	}
	return m
}

// full is the command list run on Small; the other repositories get the
// commands whose output depends on their format.
var fullCommands = [][]string{
	{"log"}, {"log", "-v"}, {"log", "--debug"}, {"log", "-l", "3"},
	{"log", "-r", "tip"}, {"log", "-r", "null"}, {"log", "-r", "."}, {"log", "-r", "-3"},
	{"log", "-r", "stable"}, {"log", "-r", "old-branch"}, {"log", "-r", "v1.0"}, {"log", "-r", "local-tag"},
	{"log", "-r", "feature"}, {"log", "-r", "5:2"}, {"log", "-r", "3", "-r", "1:2"}, {"log", "-r", "nope"},
	{"log", "-r", "no-such"}, {"log", "-r", "99"},
	{"manifest"}, {"manifest", "-v"}, {"manifest", "--debug", "-r", "0"}, {"manifest", "-r", "stable"},
	{"cat", "-r", "0", "README", "link", "data.bin", "meta.txt"}, {"cat", "bin"}, {"cat", "nope"},
	{"cat", "-r", "1", "README", "nope"},
	{"debugindex", "-c"}, {"debugindex", "-m"}, {"debugindex", "--debug", "-m"}, {"debugindex", "-v", "chain.txt"},
	{"debugindex", "nope"}, {"debugindex", "-c", "-m"},
	{"debugdata", "-c", "2"}, {"debugdata", "-m", "--", "-1"}, {"debugdata", "meta-renamed.txt", "0"},
	{"debugdata", "-c", "99"}, {"debugdata", "-c", "--", "-2"}, {"debugdata", "-m", "a"},
	{"verify"},
}

var formatCommands = [][]string{
	{"log", "--debug"}, {"manifest", "--debug"}, {"debugindex", "-m"}, {"debugindex", "--debug", "-c"},
	{"debugdata", "-m", "tip"}, {"verify"},
}

func TestGoldenSmall(t *testing.T) {
	dir := testenv.Generate(t, testenv.Small)
	hs := testenv.StartHgServer(t, dir)
	for _, args := range fullCommands {
		t.Run(strings.Join(args, "_"), func(t *testing.T) { goldenCompare(t, hs, dir, args...) })
	}
}

func TestGoldenFormats(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow: generates every repository kind")
	}
	hs := testenv.StartHgServer(t, t.TempDir())
	for name, spec := range goldenRepos() {
		if name == "small" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := testenv.Generate(t, spec)
			for _, args := range formatCommands {
				goldenCompare(t, hs, dir, args...)
			}
		})
	}
}

func TestGoldenEncodedNames(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.Generate(t, testenv.Encodings)
	// Every file of the encoding repository, through its filelog.
	for _, name := range []string{"Dir/Sub/UPPER.TXT", ".hidden", "aux", "x.i/file", "trailing.", "colon:star*quest?quote\"lt<gt>pipe|",
		"unicodé/naïve-ü.txt", testenv.EncodingNames[len(testenv.EncodingNames)-1], "big.bin"} {
		goldenCompare(t, hs, dir, "debugindex", name)
		goldenCompare(t, hs, dir, "cat", "-r", "0", name)
	}
	goldenCompare(t, hs, dir, "cat", "x.i", "Dir")
}

func TestGoldenCatFromSubdir(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.Generate(t, testenv.Small)
	sub := dir + "/bin"
	goldenCompare(t, hs, sub, "cat", "run.sh", "../README")
	goldenCompare(t, hs, sub, "cat", "README")
}

func TestGoldenObsolete(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.Generate(t, testenv.Obsolete)
	goldenCompare(t, hs, dir, "log")
	// Hidden changesets: 16 was amended into 17, 18 was pruned.
	for _, rev := range []string{"16", "18", "17"} {
		goldenCompare(t, hs, dir, "log", "-r", rev)
	}
}

func TestGoldenLongChain(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.Generate(t, testenv.LongChain)
	goldenCompare(t, hs, dir, "debugindex", "-v", "chain.txt")
	for _, rev := range []string{"0", "100", "-1", "-2", "151", "7a"} {
		goldenCompare(t, hs, dir, "debugdata", "chain.txt", "--", rev)
	}
	goldenCompare(t, hs, dir, "verify")
}

// corruptions damage a copy of a repository; verify must report the named
// file and exit 1, as hg verify does on the same copy.
var corruptions = []struct {
	name  string
	spec  testenv.Spec
	file  string // the store file damaged, relative to .hg/store
	blame string // what hgfs verify's report must name
	apply func(t *testing.T, path string)
}{
	{"flipped byte in .d", testenv.Zlib, "data/big.bin.d", "big.bin@", func(t *testing.T, p string) {
		flipByte(t, p, 1000)
	}},
	{"truncated .i", testenv.Small, "data/chain.txt.i", "chain.txt@", func(t *testing.T, p string) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, fi.Size()-10); err != nil {
			t.Fatal(err)
		}
	}},
	{"wrong node in index", testenv.Small, "data/~2ehgtags.i", ".hgtags@", func(t *testing.T, p string) {
		flipByte(t, p, 40) // inside rev 0's node (entry bytes 32..51)
	}},
	{"missing filelog", testenv.Small, "data/stable.txt.i", "stable.txt", func(t *testing.T, p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}},
	{"flipped byte in manifest data", testenv.Small, "00manifest.i", "manifest@", func(t *testing.T, p string) {
		flipByte(t, p, 64+20) // inside rev 0's compressed chunk
	}},
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCorrupt(t *testing.T) {
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			dir := testenv.CopyRepo(t, testenv.Generate(t, c.spec))
			c.apply(t, dir+"/.hg/store/"+c.file)
			_, he, hc := hgIn(t, dir, "verify")
			if hc != 1 {
				t.Fatalf("hg verify exit %d on the damaged copy (want 1):\n%s", hc, he)
			}
			fo, fe, fc := hgfsIn(dir, "verify")
			if fc != 1 {
				t.Errorf("hgfs verify exit %d, want 1\nstdout:\n%s\nstderr:\n%s", fc, fo, fe)
			}
			if !strings.Contains(fe, c.blame) {
				t.Errorf("hgfs verify does not name %q:\n%s", c.blame, fe)
			}
			if !strings.Contains(fe, "integrity errors encountered!") {
				t.Errorf("no error summary:\n%s", fe)
			}
			if !strings.Contains(fo, "checked ") {
				t.Errorf("no final count line:\n%s", fo)
			}
		})
	}
}

// TestVerifyMissingFilelogLikeHg compares the whole report for the case
// whose wording hgfs reproduces exactly.
func TestVerifyMissingFilelogLikeHg(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	if err := os.Remove(dir + "/.hg/store/data/stable.txt.i"); err != nil {
		t.Fatal(err)
	}
	goldenCompare(t, hs, dir, "verify")
}

func TestVerifyOrphanAndFncache(t *testing.T) {
	hs := testenv.StartHgServer(t, t.TempDir())
	dir := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	// A filelog the fncache does not list, and an fncache entry with no
	// tracked file behind it.
	fnc := dir + "/.hg/store/fncache"
	b, err := os.ReadFile(fnc)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("data/README.i\n"), nil, 1)
	if err := os.WriteFile(fnc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	goldenCompare(t, hs, dir, "verify")
}

func TestLogLimitAndErrors(t *testing.T) {
	dir := testenv.Generate(t, testenv.Small)
	if _, e, code := hgfsIn(dir, "log", "-l", "0"); code != 255 || !strings.Contains(e, "limit must be positive") {
		t.Errorf("log -l 0: exit %d, %q", code, e)
	}
	o, _, code := hgfsIn(dir, "log", "-l", "2")
	if code != 0 || strings.Count(o, "changeset:") != 2 {
		t.Errorf("log -l 2: exit %d:\n%s", code, o)
	}
	if _, e, code := hgfsIn(t.TempDir(), "log"); code != 255 || !strings.Contains(e, "no repository found") {
		t.Errorf("log outside a repository: exit %d, %q", code, e)
	}
}
