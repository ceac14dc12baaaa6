package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/hgfs/hgfs/testenv"
)

// TestProfileVerify profiles a real command, as test-profile.t does for
// hg: hgfs verify of a generated repository, in each format. The pprof
// output must open in go tool pprof and name hgfs's own functions; the
// kcachegrind output must parse as callgrind.
func TestProfileVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 2,000-file repository")
	}
	t.Setenv("HGRCPATH", "")
	repo := testenv.Generate(t, testenv.Large(2000))
	dir := t.TempDir()

	pp := filepath.Join(dir, "verify.pprof")
	_, stderr, code := dispatchRun(t, "-R", repo, "--profile", "--config", "profiling.format=pprof",
		"--config", "profiling.output="+pp, "--config", "profiling.freq=2000", "verify", "-q")
	if code != 0 {
		t.Fatalf("hgfs verify --profile: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("profile does not parse: %v", err)
	}
	own := false
	for _, f := range p.Function {
		if strings.HasPrefix(f.Name, "github.com/hgfs/hgfs/") {
			own = true
			break
		}
	}
	if !own {
		t.Errorf("the profile of verify names no hgfs function (%d samples)", len(p.Sample))
	}
	if gobin, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(gobin, "tool", "pprof", "-top", pp).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("flat%")) {
			t.Errorf("go tool pprof -top: %v\n%s", err, out)
		}
	}

	cg := filepath.Join(dir, "verify.callgrind")
	_, stderr, code = dispatchRun(t, "-R", repo, "--profile", "--config", "profiling.format=kcachegrind",
		"--config", "profiling.output="+cg, "--config", "profiling.freq=2000", "verify", "-q")
	if code != 0 {
		t.Fatalf("kcachegrind profile: exit %d\n%s", code, stderr)
	}
	checkCallgrind(t, cg)
}

// checkCallgrind parses the file as callgrind's format requires: a header
// naming the events, then fl=/fn= blocks whose cost lines have one
// position and one cost, and calls= lines followed by a cost line.
func checkCallgrind(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 6 || lines[0] != "# callgrind format" || !strings.HasPrefix(lines[4], "events: ") {
		t.Fatalf("callgrind header: %q", lines[:min(len(lines), 6)])
	}
	fns, own := 0, false
	body := lines[5:]
	for i := 0; i < len(body); i++ {
		l := body[i]
		switch {
		case l == "":
		case strings.HasPrefix(l, "fn="):
			fns++
			own = own || strings.Contains(l, "github.com/hgfs/hgfs/")
		case strings.HasPrefix(l, "fl="), strings.HasPrefix(l, "cfl="), strings.HasPrefix(l, "cfn="):
		case strings.HasPrefix(l, "calls="):
			if len(strings.Fields(strings.TrimPrefix(l, "calls="))) != 2 {
				t.Fatalf("line %d: bad calls line %q", i+6, l)
			}
			if i+1 >= len(body) || len(strings.Fields(body[i+1])) != 2 || strings.Contains(body[i+1], "=") {
				t.Fatalf("line %d: calls= not followed by a cost line", i+6)
			}
		default:
			if f := strings.Fields(l); len(f) != 2 || strings.Contains(l, "=") {
				t.Fatalf("line %d: cost line %q is not 'position cost'", i+6, l)
			}
		}
	}
	if fns == 0 || !own {
		t.Errorf("callgrind output has %d functions, hgfs's own among them: %v", fns, own)
	}
}
