package streamclone

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// memSink records a clone in memory and checks every name it is given.
type memSink struct {
	mu       sync.Mutex
	files    map[string][]byte
	order    []string
	bad      []string // names that escaped .hg/ (must stay empty)
	finished bool
	aborted  bool
	expected int64
}

func newMemSink() *memSink { return &memSink{files: map[string][]byte{}, expected: -1} }

func (m *memSink) Expect(files, bytes int64) { m.expected = files }

func (m *memSink) Create(name string, size int64) (io.WriteCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !strings.HasPrefix(name, ".hg/") || path.Clean(name) != name || checkRelative(name) != nil {
		m.bad = append(m.bad, name)
		return nil, fmt.Errorf("memSink: bad name %q", name)
	}
	if _, dup := m.files[name]; dup {
		return nil, fmt.Errorf("memSink: %q created twice", name)
	}
	if m.finished || m.aborted {
		return nil, ErrSinkClosed
	}
	m.files[name] = nil
	m.order = append(m.order, name)
	return &memFile{m: m, name: name, size: size}, nil
}

func (m *memSink) Finish() error { m.finished = true; return nil }
func (m *memSink) Abort() error  { m.aborted = true; return nil }

type memFile struct {
	m    *memSink
	name string
	size int64
	buf  bytes.Buffer
}

func (f *memFile) Write(p []byte) (int, error) {
	if int64(f.buf.Len()+len(p)) > f.size {
		return 0, fmt.Errorf("memSink: %s: write beyond declared size %d", f.name, f.size)
	}
	return f.buf.Write(p)
}

func (f *memFile) Close() error {
	if int64(f.buf.Len()) != f.size {
		return fmt.Errorf("memSink: %s: %d bytes written, %d declared", f.name, f.buf.Len(), f.size)
	}
	f.m.mu.Lock()
	f.m.files[f.name] = f.buf.Bytes()
	f.m.mu.Unlock()
	return nil
}

// checkOutcome asserts the invariant every apply must keep: no name
// outside .hg/, and exactly one of Finish (success) or Abort (failure).
func (m *memSink) checkOutcome(t testing.TB, err error) {
	t.Helper()
	if len(m.bad) > 0 {
		t.Fatalf("names escaped .hg/: %q", m.bad)
	}
	if err == nil && (!m.finished || m.aborted) {
		t.Fatalf("success but finished=%v aborted=%v", m.finished, m.aborted)
	}
	if err != nil && (m.finished || !m.aborted) {
		t.Fatalf("error %v but finished=%v aborted=%v", err, m.finished, m.aborted)
	}
}

// Fixture repositories, made once per test binary with real hg.
type fixture struct {
	name string
	dir  string
}

var (
	fixturesOnce sync.Once
	fixtureDir   string
	fixtureRepos []fixture
	fixtureErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	testenv.RemoveGenerated()
	os.Exit(code)
}

// fixtures returns small repositories made by hg: one zstd (hg's default
// here), one zlib; each non-publishing with public and draft changesets,
// files with upper-case and underscore names, two bookmarks.
func fixtures(t testing.TB) []fixture {
	t.Helper()
	testenv.HgPath(t)
	fixturesOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "streamclone-fixtures-")
		if fixtureErr != nil {
			return
		}
		for _, f := range []struct{ name, comp string }{{"zstd", "zstd"}, {"zlib", "zlib"}} {
			dir := filepath.Join(fixtureDir, f.name)
			if fixtureErr = makeFixture(t, dir, f.comp); fixtureErr != nil {
				return
			}
			fixtureRepos = append(fixtureRepos, fixture{f.name, dir})
		}
	})
	if fixtureErr != nil {
		t.Fatalf("making fixtures: %v", fixtureErr)
	}
	return fixtureRepos
}

func makeFixture(t testing.TB, dir, comp string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	testenv.Hg(t, "", "init", "--config", "format.revlog-compression="+comp, dir)
	if err := os.WriteFile(filepath.Join(dir, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644); err != nil {
		return err
	}
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			panic(err)
		}
	}
	write("a.txt", "a\n")
	write("Dir_X/Upper_File.TXT", "B\n")
	write("under_score/x_y.c", strings.Repeat("some line of text\n", 300))
	write(".hidden/AUX.txt", "aux\n")
	testenv.Hg(t, dir, "commit", "-q", "-A", "-m", "one", "-d", "0 0")
	testenv.Hg(t, dir, "phase", "-p", "0")
	write("a.txt", "a\nb\n")
	write("B/C/d.txt", "d\n")
	testenv.Hg(t, dir, "commit", "-q", "-A", "-m", "two", "-d", "1 0")
	testenv.Hg(t, dir, "bookmark", "-r", "0", "bm-one")
	testenv.Hg(t, dir, "bookmark", "-r", "1", "Zeta")
	write("under_score/x_y.c", strings.Repeat("some other line\n", 200))
	testenv.Hg(t, dir, "commit", "-q", "-m", "three", "-d", "2 0")
	return nil
}

// hgOut runs hg and returns stdout as a string.
func hgOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return string(testenv.Hg(t, dir, args...))
}

// storeFiles maps the files of a repository's .hg/store (relative,
// slash-separated) to their content, leaving out transaction leftovers
// and the fncache (compared as a set by fncacheSet).
func storeFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	st := filepath.Join(root, ".hg", "store")
	err := filepath.WalkDir(st, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(st, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "undo") || strings.HasPrefix(rel, "journal") || rel == "fncache" || rel == "lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fncacheSet(t testing.TB, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".hg", "store", "fncache"))
	if err != nil {
		t.Fatal(err)
	}
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	sort.Strings(l)
	return l
}

var (
	wantLogMu sync.Mutex
	wantLog   = map[string]string{}
)

// hgLog is `hg log --debug` (history, phases, bookmarks), cached for
// reference repositories: hg costs about a second per run on a loaded
// machine.
func hgLog(t testing.TB, dir string, cache bool) string {
	t.Helper()
	wantLogMu.Lock()
	defer wantLogMu.Unlock()
	if s, ok := wantLog[dir]; ok && cache {
		return s
	}
	s := hgOut(t, dir, "log", "--debug")
	if cache {
		wantLog[dir] = s
	}
	return s
}

// compareRepos checks got with hg verify and compares what hg shows of it
// with want (history with phases and bookmarks, `hg log --debug`), then
// the files (compareTrees).
func compareRepos(t testing.TB, want, got string) {
	t.Helper()
	testenv.Hg(t, got, "verify", "-q")
	if w, g := hgLog(t, want, true), hgLog(t, got, false); w != g {
		t.Errorf("hg log --debug differs:\nwant:\n%s\ngot:\n%s", w, g)
	}
	compareTrees(t, want, got)
}

// compareTrees compares two repositories' store files byte for byte
// (requires aside: hg's debugapplystreamclonebundle does not rewrite them)
// and their fncache as a set.
func compareTrees(t testing.TB, want, got string) {
	t.Helper()
	ws, gs := storeFiles(t, want), storeFiles(t, got)
	for name, w := range ws {
		if g, ok := gs[name]; !ok && name != "requires" {
			t.Errorf("store file %s missing", name)
		} else if g != w && name != "requires" {
			t.Errorf("store file %s differs (%d vs %d bytes)", name, len(g), len(w))
		}
	}
	for name := range gs {
		if _, ok := ws[name]; !ok && name != "requires" {
			t.Errorf("extra store file %s", name)
		}
	}
	if w, g := fncacheSet(t, want), fncacheSet(t, got); strings.Join(w, "\n") != strings.Join(g, "\n") {
		t.Errorf("fncache differs:\nwant %q\ngot  %q", w, g)
	}
}

// sameFiles compares the named files of two repositories.
func sameFiles(t testing.TB, want, got string, names ...string) {
	t.Helper()
	for _, f := range names {
		w, werr := os.ReadFile(filepath.Join(want, f))
		g, gerr := os.ReadFile(filepath.Join(got, f))
		if (werr == nil) != (gerr == nil) || string(w) != string(g) {
			t.Errorf("%s: want %q (%v), got %q (%v)", f, w, werr, g, gerr)
		}
	}
}

// hgServe starts `hg serve` for repo on a free loopback port and returns
// its URL; the server is stopped at cleanup.
func hgServe(t testing.TB, repo string) string {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "hg.pid")
	out := hgOut(t, repo, "serve", "-a", "127.0.0.1", "-p", "0", "-d", "--pid-file", pidFile,
		"--config", "server.uncompressed=true")
	m := regexp.MustCompile(`bound to 127\.0\.0\.1:(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("hg serve printed %q", out)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	})
	return "http://127.0.0.1:" + m[1] + "/"
}
