package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestCLIMessagesAsHg compares what hgfs and real hg print for mistakes
// on the command line: unknown and mistyped commands, [alias] entries
// (good, bad, short of arguments, shadowing a command), invalid
// arguments and options. hg's "hg" becomes "hgfs"; stderr and the exit
// status must be identical, and stdout (the short help) must agree on
// its synopsis and summary lines and its last line.
func TestCLIMessagesAsHg(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	t.Setenv("HGPLAINEXCEPT", "alias")
	dir := t.TempDir()
	repo := filepath.Join(dir, "r")
	testenv.Hg(t, dir, "init", "r")
	hgrc := "[alias]\nbad = nosuchcmd\nlg = log -l $1\nempty =\nroots = verify --bogus\nvrfy = verify\n"
	if err := os.WriteFile(filepath.Join(repo, ".hg", "hgrc"), []byte(hgrc), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"lgo"},
		{"nosuchcommandatall"},
		{"vrf"},
		{"bd"},
		{"bad"},
		{"empty"},
		{"lg"},
		{"roots"},
		{"vrfy", "extra"},
		{"verify", "extra"},
		{"clone"},
		{"--bogus"},
		{"--repo", ".", "verify", "-q"},
		{"-R", ".", "vrfy", "-q"},
	}
	for _, m := range testenv.Mercurials(t) {
		for _, args := range cases {
			cmd := exec.Command(m.Path, append([]string{"--cwd", repo}, args...)...)
			cmd.Env = append(testenv.HgEnv(), "HGPLAINEXCEPT=alias")
			var hgOut, hgErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &hgOut, &hgErr
			err := cmd.Run()
			hgCode := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				hgCode = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out, errOut, code := hgfsIn(repo, args...)
			want := strings.ReplaceAll(hgErr.String(), "hg ", "hgfs ")
			want = strings.ReplaceAll(want, "hg: ", "hgfs: ")
			want = strings.ReplaceAll(want, "'hg help", "'hgfs help")
			if errOut != want || code != hgCode {
				t.Errorf("%s: hgfs %q: exit %d, stderr\n%s\nwant exit %d, stderr\n%s", m.Name, args, code, errOut, hgCode, want)
			}
			hl := strings.Split(strings.TrimRight(hgOut.String(), "\n"), "\n")
			gl := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(hl) >= 4 && strings.HasPrefix(hl[0], "hg ") {
				for _, i := range []int{0, 1, 2, 3} {
					if w := strings.Replace(hl[i], "hg ", "hgfs ", 1); i >= len(gl) || gl[i] != w {
						t.Errorf("%s: hgfs %q: stdout line %d = %q, want %q\n%s", m.Name, args, i, gl[min(i, len(gl)-1)], w, out)
					}
				}
				if w := strings.ReplaceAll(hl[len(hl)-1], "'hg ", "'hgfs "); gl[len(gl)-1] != w {
					t.Errorf("%s: hgfs %q: last stdout line %q, want %q", m.Name, args, gl[len(gl)-1], w)
				}
			} else if hgOut := hgOut.String(); (hgOut == "") != (out == "") {
				t.Errorf("%s: hgfs %q: stdout %q, hg's %q", m.Name, args, out, hgOut)
			}
		}
	}
}

// TestCLIShellAliasRefused: hgfs runs no shell from its configuration; a
// "!" alias is refused by name, and runs nothing.
func TestCLIShellAliasRefused(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	rc := filepath.Join(dir, "hgrc")
	os.WriteFile(rc, []byte("[alias]\nsh = !touch "+marker+"\n"), 0o644)
	t.Setenv("HGRCPATH", rc)
	_, errOut, code := hgfsIn(dir, "sh")
	if code != 255 || !strings.HasPrefix(errOut, "config error: shell alias 'sh' is not supported\n") {
		t.Errorf("shell alias: %d %q", code, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the shell alias ran")
	}
}

// TestCLIAliasRuns: an alias expands to its command with $N taken from
// the arguments, and "hgfs help ALIAS" says what it stands for.
func TestCLIAliasRuns(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "hgrc")
	os.WriteFile(rc, []byte("[alias]\nget = config $1\n[x]\ny = z\n"), 0o644)
	t.Setenv("HGRCPATH", rc)
	out, errOut, code := hgfsIn(dir, "get", "x.y")
	if code != 0 || out != "z\n" {
		t.Errorf("get x.y: %d %q %q", code, out, errOut)
	}
	out, _, _ = hgfsIn(dir, "help", "get")
	if !strings.HasPrefix(out, "hgfs get [NAME]...\n\nalias for: hgfs config $1\n\nshow combined config") {
		t.Errorf("help get:\n%s", out)
	}
}

func TestCLIVersion(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	for _, args := range [][]string{{"version"}, {"--version"}, {"vers"}} {
		out, _, code := dispatchRun(t, args...)
		if code != 0 || !strings.HasPrefix(out, "hgfs (version "+version()+")\n(built with go") {
			t.Errorf("%q: %d %q", args, code, out)
		}
	}
	if out, _, _ := dispatchRun(t, "version", "-q"); out != "hgfs (version "+version()+")\n" {
		t.Errorf("version -q: %q", out)
	}
}

// TestCLIHelpSynopsisNoTrailingBlank: a command without arguments has no
// blank after its name ("hg verify").
func TestCLIHelpSynopsisNoTrailingBlank(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	for name, c := range commands {
		if name != c.name {
			continue
		}
		out, _, _ := dispatchRun(t, "help", name)
		first, _, _ := strings.Cut(out, "\n")
		if strings.HasSuffix(first, " ") {
			t.Errorf("hgfs help %s: %q", name, first)
		}
	}
}

// TestCLIBundleAsRepository: -R BUNDLE (hg's overlay) is refused by name,
// with the way out.
func TestCLIBundleAsRepository(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	bundle := testenv.Corpus(t, "mercurial-history-2971.hg")
	_, errOut, code := dispatchRun(t, "-R", bundle, "verify")
	want := "abort: " + bundle + " is a bundle file: hgfs cannot use a bundle as a repository overlay (hg's -R BUNDLE)\n(clone it into a repository instead: hgfs clone " + bundle + " DEST)\n"
	if code != 255 || errOut != want {
		t.Errorf("-R bundle: %d %q", code, errOut)
	}
}

// TestCLIAliasPlain: HGPLAIN turns [alias] off, as in hg.
func TestCLIAliasPlain(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "hgrc")
	os.WriteFile(rc, []byte("[alias]\nget = config $1\n"), 0o644)
	t.Setenv("HGRCPATH", rc)
	t.Setenv("HGPLAIN", "1")
	if _, errOut, code := hgfsIn(dir, "get", "x.y"); code != 255 || !strings.HasPrefix(errOut, "hgfs: unknown command 'get'\n") {
		t.Errorf("plain: %d %q", code, errOut)
	}
	t.Setenv("HGPLAINEXCEPT", "alias")
	if _, errOut, code := hgfsIn(dir, "get", "x.y"); code != 1 {
		t.Errorf("plain except alias: %d %q", code, errOut)
	}
}
