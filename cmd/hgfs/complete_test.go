package main

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestManPageCurrent: contrib/hgfs.1 is what the command table makes of
// it now ("go generate ./cmd/hgfs" after changing a command's help or
// options), and it has a section for every command.
func TestManPageCurrent(t *testing.T) {
	want := manPage()
	got, err := os.ReadFile("../../contrib/hgfs.1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("contrib/hgfs.1 is stale: run go generate ./cmd/hgfs\n%s", testenv.Diff("contrib/hgfs.1", string(got), "generated", want))
	}
	for n, c := range commands {
		if n == c.name && !strings.Contains(want, "\n.SS "+roff(n)) {
			t.Errorf("no section for %s", n)
		}
	}
}

// tableCommands are the commands "hgfs help" lists, and each one's
// options (long names, without deprecated ones).
func tableCommands() map[string][]string {
	out := map[string][]string{}
	for n, c := range commands {
		if n != c.name {
			continue
		}
		var opts []string
		for _, o := range append(append([]option{}, globalOptions...), c.options...) {
			if !strings.Contains(o.help, "(DEPRECATED)") {
				opts = append(opts, "--"+o.long)
			}
		}
		out[n] = opts
	}
	return out
}

// TestBashCompletion runs contrib/completion/hgfs.bash in bash against
// the real binary: every command of the table completes from its first
// two letters, every option of every command from "--".
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "bash")
	}
	bin := testenv.Hgfs(t)
	var script strings.Builder
	script.WriteString(`source ../../contrib/completion/hgfs.bash
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _hgfs; echo "${COMPREPLY[*]}"; }
`)
	cmds := tableCommands()
	var names []string
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		script.WriteString("t " + bin + " " + n[:2] + "\n")
		script.WriteString("t " + bin + " -q " + n + " --\n")
	}
	script.WriteString("t " + bin + " cache pr\n")
	cmd := exec.Command(bash, "--norc", "-c", script.String())
	cmd.Env = append(testenv.HgEnv(), "HGRCPATH=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2*len(names)+1 {
		t.Fatalf("%d lines for %d commands:\n%s", len(lines), len(names), out)
	}
	for i, n := range names {
		// The command, or the alias its first letters spell (up: update).
		got := strings.Fields(lines[2*i])
		ok := contains(got, n) || strings.HasPrefix(n, "debug") && len(got) > 0
		for _, a := range commands[n].aliases {
			ok = ok || contains(got, a)
		}
		if !ok {
			t.Errorf("hgfs %s<TAB>: %q, want %s among them", n[:2], got, n)
		}
		got = strings.Fields(lines[2*i+1])
		for _, o := range cmds[n] {
			if !contains(got, o) {
				t.Errorf("hgfs %s --<TAB>: %q lacks %s", n, got, o)
			}
		}
	}
	if got := lines[len(lines)-1]; got != "prune" {
		t.Errorf("hgfs cache pr<TAB>: %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestZshCompletion runs contrib/completion/_hgfs in zsh with the
// completion system's builtins replaced by ones that print what they are
// given: commands from a prefix, options from "-", files otherwise.
func TestZshCompletion(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		testenv.Missing(t, "zsh")
	}
	bin := testenv.Hgfs(t)
	stubs := `compadd() { if [[ $1 == -a ]]; then print -l -- ${(P)2}; else print -l -- "$@"; fi }
_call_program() { shift; "$@" }
_files() { print FILES }
`
	for _, c := range []struct {
		words  string
		prefix string
		want   []string
	}{
		{bin + " cl", "cl", []string{"clone"}},
		{bin + " clone --mo", "--mo", []string{"--mount", "--cache", "--repository"}},
		{bin + " -R x verify ", "", []string{"FILES"}},
		{bin + " cache pr", "pr", []string{"prune"}},
	} {
		script := stubs + "words=(" + c.words + "); CURRENT=${#words}; PREFIX=" + c.prefix + "\n"
		if strings.HasSuffix(c.words, " ") {
			script = stubs + "words=(" + c.words + "''); CURRENT=${#words}; PREFIX=\n"
		}
		script += "source ../../contrib/completion/_hgfs\n"
		cmd := exec.Command(zsh, "-f", "-c", script)
		cmd.Env = append(testenv.HgEnv(), "HGRCPATH=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh (%s): %v\n%s", c.words, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("zsh completion of %q: %q lacks %s", c.words, got, w)
			}
		}
	}
}
