package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mercurial is one installed hg the suite checks hgfs against. Users run
// hg 6.x and 7.x, so interoperability tests run once per Mercurial:
//
//	for _, hg := range testenv.Mercurials(t) {
//		t.Run(hg.Name, func(t *testing.T) { ... hg.Run(t, dir, "verify") ... })
//	}
type Mercurial struct {
	Name    string // "hg6.3", "hg7.2": a subtest name
	Path    string // the command
	Version string // "6.3.2", as hg --version prints it
}

// Major is the version's major number (6, 7).
func (m Mercurial) Major() int {
	var major int
	fmt.Sscanf(m.Version, "%d", &major)
	return major
}

// Run runs this hg in dir with args and returns its stdout; a non-zero
// exit fails the test with hg's stderr.
func (m Mercurial) Run(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	out, errOut, err := m.Result(t, dir, args...)
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", m.Name, strings.Join(args, " "), dir, err, out, errOut)
	}
	return out
}

// Result runs this hg and returns stdout, stderr and the exit error, for
// tests that expect it to fail. Each command is bounded by hgWait.
func (m Mercurial) Result(t testing.TB, dir string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hgWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Path, HgArgs(dir, args...)...)
	cmd.Env = HgEnv()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("no result in %v, killed (%v)", hgWait, err)
	}
	return o.Bytes(), e.Bytes(), err
}

// Serve starts this hg's `hg serve` for repoDir, as the package's Serve
// does, and returns the repository URL.
func (m Mercurial) Serve(t testing.TB, repoDir string, extraArgs ...string) string {
	t.Helper()
	return serveWith(t, m.Path, repoDir, extraArgs...)
}

// Default is the hg on PATH (Debian bookworm's 6.3 here), the one Hg,
// HgResult and Serve run. It skips the test (fails it on CI) without hg.
func Default(t testing.TB) Mercurial {
	t.Helper()
	p := HgPath(t)
	v, err := hgVersion(p)
	if err != nil {
		t.Fatalf("hg --version: %v", err)
	}
	return Mercurial{Name: versionName(v), Path: p, Version: v}
}

// Hg7Path is where scripts/hg7.sh installs hg 7 by default; HGFS_HG7
// names another command.
const Hg7Path = "/var/cache/hgfs/sid/hg7"

// Hg7 returns Mercurial 7 (from Debian sid, installed by scripts/hg7.sh,
// which make deps runs as root). It skips the test where hg 7 is not
// installed, and fails it on CI.
func Hg7(t testing.TB) Mercurial {
	t.Helper()
	m, err := hg7()
	if err != nil {
		Missing(t, err.Error())
	}
	return m
}

// Mercurials returns every Mercurial the suite checks against: the hg on
// PATH (6.3) and hg 7. Where hg 7 is not installed the list holds only
// the first and the test logs why (on CI it fails instead); without hg
// on PATH the test skips.
func Mercurials(t testing.TB) []Mercurial {
	t.Helper()
	ms := []Mercurial{Default(t)}
	m, err := hg7()
	switch {
	case err == nil:
		ms = append(ms, m)
	case CI():
		t.Fatalf("%v on CI (make deps installs it)", err)
	default:
		t.Logf("only %s: %v (make deps installs it as root)", ms[0].Name, err)
	}
	return ms
}

var (
	hg7Once sync.Once
	hg7M    Mercurial
	hg7Err  error
)

func hg7() (Mercurial, error) {
	hg7Once.Do(func() {
		p := os.Getenv("HGFS_HG7")
		if p == "" {
			p = Hg7Path
		}
		if _, err := os.Stat(p); err != nil {
			hg7Err = fmt.Errorf("Mercurial 7 is not installed (%s)", p)
			return
		}
		v, err := hgVersion(p)
		if err != nil {
			hg7Err = fmt.Errorf("Mercurial 7 at %s does not run: %v", p, err)
			return
		}
		if !strings.HasPrefix(v, "7.") {
			hg7Err = fmt.Errorf("%s is Mercurial %s, not 7.x", p, v)
			return
		}
		hg7M = Mercurial{Name: versionName(v), Path: p, Version: v}
	})
	return hg7M, hg7Err
}

var versionRE = regexp.MustCompile(`\(version ([0-9][^)]*)\)`)

var versions sync.Map // path -> version

func hgVersion(path string) (string, error) {
	if v, ok := versions.Load(path); ok {
		return v.(string), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = HgEnv()
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no version in %q", firstLine(out))
	}
	v := string(m[1])
	versions.Store(path, v)
	return v, nil
}

// versionName is "hg" and the major.minor of v: "hg6.3".
func versionName(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 {
		return "hg" + parts[0] + "." + parts[1]
	}
	return "hg" + v
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
