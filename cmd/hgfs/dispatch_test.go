package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// dispatchRun runs the CLI in-process and returns stdout, stderr and the
// exit status.
func dispatchRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestDispatchErrors(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	_, stderr, code := dispatchRun(t, "nosuchcommand")
	if code != 255 || stderr != "hgfs: unknown command 'nosuchcommand'\n(use 'hgfs help' for a list of commands)\n" {
		t.Errorf("unknown command: %d %q", code, stderr)
	}
	_, stderr, code = dispatchRun(t, "config", "--nosuchflag")
	if code != 255 || !strings.Contains(stderr, "option --nosuchflag not recognized") {
		t.Errorf("bad flag: %d %q", code, stderr)
	}
	_, stderr, code = dispatchRun(t, "--config", "nodot=1", "config")
	if code != 255 || !strings.Contains(stderr, "malformed --config option") {
		t.Errorf("bad --config: %d %q", code, stderr)
	}
	// Unique prefixes select a command, as in hg.
	out, _, code := dispatchRun(t, "--config", "a.b=c", "conf", "a.b")
	if code != 0 || out != "c\n" {
		t.Errorf("prefix: %d %q", code, out)
	}
	// Global options may follow the command.
	out, _, code = dispatchRun(t, "config", "a.b", "--config=a.b=d")
	if code != 0 || out != "d\n" {
		t.Errorf("trailing global option: %d %q", code, out)
	}
	// A missing item is "nothing to do": exit 1, no output.
	out, _, code = dispatchRun(t, "config", "no.such")
	if code != 1 || out != "" {
		t.Errorf("missing item: %d %q", code, out)
	}
}

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.rc")
	incl := filepath.Join(dir, "incl.rc")
	os.WriteFile(incl, []byte("[x]\nfrominclude = yes\ngone = 1\n"), 0o644)
	os.WriteFile(user, []byte("[x]\nlevel = user\nonlyuser = 1\n%include incl.rc\n%unset gone\n"), 0o644)
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(repo, ".hg"), 0o755)
	os.WriteFile(filepath.Join(repo, ".hg", "hgrc"), []byte("[x]\nlevel = repo\n"), 0o644)
	t.Setenv("HGRCPATH", user)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "x.level"}, "user\n"},
		{[]string{"-R", repo, "config", "x.level"}, "repo\n"},
		{[]string{"--cwd", repo, "config", "x.level"}, "repo\n"},
		{[]string{"-R", repo, "--config", "x.level=cli", "config", "x.level"}, "cli\n"},
		{[]string{"-R", repo, "config", "x.onlyuser"}, "1\n"},
		{[]string{"config", "x.frominclude"}, "yes\n"},
		{[]string{"--debug", "-R", repo, "config", "x.level"}, filepath.Join(repo, ".hg", "hgrc") + ":2: repo\n"},
	} {
		out, errOut, code := dispatchRun(t, tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("hgfs %q = %d %q %q, want %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if _, _, code := dispatchRun(t, "config", "x.gone"); code != 1 {
		t.Errorf("%%unset item still set (exit %d)", code)
	}
	out, _, _ := dispatchRun(t, "-R", repo, "config", "x")
	if out != "x.level=repo\nx.onlyuser=1\nx.frominclude=yes\n" {
		t.Errorf("section listing = %q", out)
	}
}

var timeRE = regexp.MustCompile(`(?m)^time: real \d+\.\d{3} secs \(user \d+\.\d{3}\+\d+\.\d{3} sys \d+\.\d{3}\+\d+\.\d{3}\)$`)

func TestTime(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	_, stderr, code := dispatchRun(t, "--time", "config", "--config", "a.b=1", "a.b")
	if code != 0 || !timeRE.MatchString(stderr) {
		t.Errorf("--time: %d %q", code, stderr)
	}
	// Printed also when the command aborts.
	_, stderr, code = dispatchRun(t, "--time", "-R", t.TempDir(), "config", "--known", "--config", "profiling.freq=notanumber", "--profile")
	if code != 255 || !strings.Contains(stderr, "abort: profiling.freq is not a valid integer") {
		t.Errorf("abort with --time: %d %q", code, stderr)
	}
}

func TestProfileFormats(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	dir := t.TempDir()

	// text goes to stderr by default.
	_, stderr, code := dispatchRun(t, "--profile", "config", "--known")
	if code != 0 || !strings.Contains(stderr, "flat%") || !strings.Contains(stderr, "cum%") {
		t.Errorf("text profile: %d %q", code, stderr)
	}

	// pprof to a file opens with the pprof parser.
	pp := filepath.Join(dir, "cpu.pprof")
	_, stderr, code = dispatchRun(t, "--profile", "--config", "profiling.format=pprof", "--config", "profiling.output="+pp, "config")
	if code != 0 || !strings.Contains(stderr, "cpu profile written to "+pp) {
		t.Fatalf("pprof profile: %d %q", code, stderr)
	}
	b, err := os.ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("pprof output does not parse: %v", err)
	}
	if p.SampleType[len(p.SampleType)-1].Unit != "nanoseconds" {
		t.Errorf("sample type %v", p.SampleType)
	}
	if p.Period != 1e9/1000 {
		t.Errorf("sampling period %d ns, want 1000 Hz", p.Period)
	}

	// kcachegrind starts with the callgrind header.
	cg := filepath.Join(dir, "out.callgrind")
	_, _, code = dispatchRun(t, "--profile", "--config", "profiling.format=kcachegrind", "--config", "profiling.output="+cg, "config")
	b, _ = os.ReadFile(cg)
	if code != 0 || !bytes.Contains(b, []byte("\nevents: cpu\n")) {
		t.Errorf("callgrind: %d %q", code, b)
	}

	// heap profile and trace.
	hp := filepath.Join(dir, "heap")
	_, _, code = dispatchRun(t, "--profile", "--config", "profiling.type=heap", "--config", "profiling.format=pprof", "--config", "profiling.output="+hp, "config")
	b, _ = os.ReadFile(hp)
	if _, err := profile.Parse(bytes.NewReader(b)); code != 0 || err != nil {
		t.Errorf("heap profile: %d %v", code, err)
	}
	tr := filepath.Join(dir, "trace")
	_, _, code = dispatchRun(t, "--profile", "--config", "profiling.type=trace", "--config", "profiling.output="+tr, "config")
	b, _ = os.ReadFile(tr)
	if code != 0 || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("trace: %d %q", code, b[:min(len(b), 16)])
	}

	_, stderr, code = dispatchRun(t, "--profile", "--config", "profiling.format=bogus", "config")
	if code != 255 || !strings.Contains(stderr, `invalid profiling format "bogus"`) {
		t.Errorf("bad format: %d %q", code, stderr)
	}
}

func TestTraceback(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	_, stderr, code := dispatchRun(t, "--traceback", "-R", t.TempDir(), "log")
	if code != 255 || !strings.HasPrefix(stderr, "abort: repository ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// The stack names the function that aborted, with file and line.
	if !strings.Contains(stderr, "Traceback (most recent call first):\n") ||
		!regexp.MustCompile(`github\.com/hgfs/hgfs/cmd/hgfs\.\(\*cmdContext\)\.repoRoot\(\)\n\t\S+/repo\.go:\d+\n`).MatchString(stderr) {
		t.Errorf("--traceback did not show where the abort came from:\n%s", stderr)
	}
	_, stderr, _ = dispatchRun(t, "-R", t.TempDir(), "log")
	if strings.Contains(stderr, "most recent call first") {
		t.Errorf("traceback without --traceback:\n%s", stderr)
	}
}
