package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCommandChangesDirectoryAfterExec: Command runs its program in dir,
// and its child never changes directory itself before exec (no Cmd.Dir),
// which could deadlock on a mount this process serves.
func TestCommandChangesDirectoryAfterExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Command uses Cmd.Dir on Windows")
	}
	parent, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(parent, "-dir with 'quotes' and $x")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(d string) {
		t.Helper()
		cmd := Command(d, "pwd", "-P")
		if cmd.Dir != "" {
			t.Fatalf("Command(%q) sets Cmd.Dir = %q: the forked child would chdir before exec", d, cmd.Dir)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("Command(%q): %v\n%s", d, err, out)
		}
		if got := strings.TrimSuffix(string(out), "\n"); got != dir {
			t.Errorf("Command(%q) ran in %q, want %q", d, got, dir)
		}
	}
	check(dir)
	// A relative dir starting with "-" is a directory, not an option.
	t.Chdir(parent)
	check(filepath.Base(dir))
	if out, err := Command("", "pwd", "-P").Output(); err != nil || len(out) == 0 {
		t.Errorf("Command with no dir: %q %v", out, err)
	}
}

// TestHgArgs: hg changes directory itself (--cwd, before anything else).
func TestHgArgs(t *testing.T) {
	if got := HgArgs("", "log"); !slices.Equal(got, []string{"log"}) {
		t.Errorf("HgArgs without dir: %q", got)
	}
	if got := HgArgs("/r", "log", "-r", "tip"); !slices.Equal(got, []string{"--cwd", "/r", "log", "-r", "tip"}) {
		t.Errorf("HgArgs with dir: %q", got)
	}
	HgPath(t)
	repo := filepath.Join(t.TempDir(), "repo")
	Hg(t, "", "init", repo)
	want, _ := filepath.EvalSymlinks(repo)
	if got := strings.TrimSpace(string(Hg(t, repo, "root"))); got != want {
		t.Errorf("hg root in %s: %q", repo, got)
	}
}

// errorsTB records Errorf instead of failing the test.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestWithin: a wait that ends in time passes; one that does not fails,
// naming what it waited for and showing where it is stuck.
func TestWithin(t *testing.T) {
	rec := &errorsTB{TB: t}
	if !Within(rec, time.Minute, "quick", func() {}) || len(rec.errs) != 0 {
		t.Fatalf("a wait that returned at once: %q", rec.errs)
	}
	stuck := make(chan struct{})
	defer close(stuck)
	if Within(rec, 10*time.Millisecond, "the stuck thing", func() { <-stuck }) {
		t.Fatal("Within returned true for a wait that never ended")
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "the stuck thing: still waiting after 10ms") || !strings.Contains(rec.errs[0], "TestWithin.func") {
		t.Errorf("timeout report: %q", rec.errs)
	}
}

// TestMercurials runs every oracle: each answers with the version it
// claims, and hg 7 is there on CI.
func TestMercurials(t *testing.T) {
	ms := Mercurials(t)
	if CI() && len(ms) < 2 {
		t.Fatalf("want hg 6 and hg 7 on CI, have %v", ms)
	}
	for _, m := range ms {
		out := string(m.Run(t, "", "--version"))
		if !strings.Contains(out, "(version "+m.Version+")") {
			t.Errorf("%s: --version says %q", m.Name, firstLine([]byte(out)))
		}
		if m.Major() < 6 {
			t.Errorf("%s: major version %d", m.Name, m.Major())
		}
	}
}

func TestCorpus(t *testing.T) {
	p := Corpus(t, CorpusHistory)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 4 || string(b[:4]) != "HG20" {
		t.Fatalf("%s does not start with HG20", p)
	}
}
