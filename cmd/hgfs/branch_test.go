package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// branchFixture is a non-publishing repository made with hg whose named
// branches exercise the branchmap: default, "stable" with two heads (one
// of them closed), "old" whose only head is closed, "st able" (a name
// the branchmap must quote), and a secret changeset on stable that no
// clone or pull may bring. Its working directory is on stable.
func branchFixture(t *testing.T, dir string) (src, rev0 string) {
	t.Helper()
	src = filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", "src")
	os.WriteFile(filepath.Join(src, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644)
	n := 0
	commit := func(args ...string) {
		n++
		os.WriteFile(filepath.Join(src, "f"), []byte(strings.Repeat("x\n", n)), 0o644)
		testenv.Hg(t, src, append([]string{"commit", "-q", "-A", "-u", "t", "-d", "0 0", "-m", "c"}, args...)...)
	}
	hg := func(args ...string) { testenv.Hg(t, src, args...) }
	commit()
	hg("branch", "-q", "stable")
	commit()
	commit()
	hg("update", "-q", "1")
	commit()
	commit("--close-branch")
	hg("update", "-q", "0")
	hg("branch", "-q", "old")
	commit()
	commit("--close-branch")
	hg("update", "-q", "0")
	hg("branch", "-q", "st able")
	commit()
	hg("update", "-q", "0")
	commit()
	hg("bookmark", "-r", "2", "book")
	hg("update", "-q", "2")
	commit("--secret")
	rev0 = strings.TrimSpace(string(testenv.Hg(t, src, "log", "-r", "0", "-T", "{node|short}")))
	return src, rev0
}

// TestBranchSourcesLikeHg clones and pulls named branches as hg does:
// -b BRANCH (repeated, with -r), SOURCE#BRANCH, a #REV that is no
// branch, unknown branches and "-b ." from each kind of source (hg 6.3
// and 7 serving HTTP, hgfs serving HTTP and ssh, a local path). Each
// clone or pull by hgfs and by every Mercurial must print the same, exit
// the same, and leave the same changesets, phases, bookmarks, working
// directory parent and default path.
func TestBranchSourcesLikeHg(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, rev0 := branchFixture(t, dir)
	ors := startOracles(t)
	ssh := fakeSSHScript(t, dir, "")
	hgfsURL, _, _ := startServeBinary(t, src)
	type source struct {
		name string
		opts []string // before the source
		loc  string
	}
	sources := []source{
		{"hgfs-http", nil, hgfsURL},
		{"hgfs-ssh", []string{"-e", ssh, "--remotecmd", testenv.Hgfs(t)}, "ssh://user@host/" + src},
		{"local", nil, src},
	}
	for _, o := range ors {
		sources = append(sources, source{o.Name + "-http", nil, o.Serve(t, src)})
	}
	// How a repository ended: its changesets with their branch, phase and
	// bookmarks, the working directory's parent and the default path.
	state := func(o *oracle, repo string) string {
		if _, err := os.Stat(filepath.Join(repo, ".hg")); err != nil {
			return "no repository\n"
		}
		return o.run(t, repo, "log", "-r", "all()", "-T", "{rev}:{node|short} {branch} {phase} {bookmarks}\n") +
			"parent: " + o.run(t, repo, "log", "-r", ".", "-T", "{rev}:{node|short}\n") +
			"default: " + o.run(t, repo, "paths", "default")
	}
	compare := func(t *testing.T, o *oracle, what string, hgRepo, fsRepo string, hgRes, fsRes [3]string) {
		t.Helper()
		if hgRes != fsRes {
			t.Errorf("%s: %s printed\n%s%s(exit %s)\nhgfs printed\n%s%s(exit %s)", what, o.Name, hgRes[0], hgRes[1], hgRes[2], fsRes[0], fsRes[1], fsRes[2])
		}
		if h, f := state(o, hgRepo), state(o, fsRepo); h != f {
			t.Errorf("%s: the repositories differ:\n%s", what, testenv.Diff(o.Name, h, "hgfs", f))
		}
	}
	res := func(out, errOut string, code int) [3]string {
		return [3]string{out, errOut, fmt.Sprint(code)}
	}
	cloneCases := [][]string{
		{"#stable"}, {"#st%20able"}, {"-b", "stable"}, {"-b", "old", "-b", "default"}, {"-r", "0", "-b", "old"},
		{"#" + rev0}, {"#nope"}, {"-b", "nope"}, {"-u", "0", "#stable"},
	}
	pullCases := [][]string{{"#stable"}, {"-b", "stable"}, {"-b", "."}, {"-b", "old", "#default"}, {"-b", "nope"}, {"#nope"}}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			for i, c := range cloneCases {
				args := caseArgs("clone", s.opts, s.loc, c)
				for _, o := range ors {
					hgDest := filepath.Join(dir, s.name, o.Name, "clone", string(rune('a'+i)))
					fsDest := filepath.Join(dir, s.name, o.Name, "hgfs-clone", string(rune('a'+i)))
					os.MkdirAll(filepath.Dir(hgDest), 0o755)
					os.MkdirAll(filepath.Dir(fsDest), 0o755)
					ho, he, hc := o.result(t, dir, append(args, hgDest)...)
					fo, fe, fc := hgfsRun(dir, append(args, fsDest)...)
					compare(t, o, strings.Join(args, " "), hgDest, fsDest, res(ho, he, hc), res(fo, fe, fc))
				}
			}
			for i, c := range pullCases {
				args := caseArgs("pull", s.opts, s.loc, c)
				for _, o := range ors {
					base := filepath.Join(dir, s.name, o.Name, "pull-base", string(rune('a'+i)))
					os.MkdirAll(filepath.Dir(base), 0o755)
					o.run(t, dir, "clone", "-q", "-r", "0", src, base)
					// "-b ." is the working directory's branch.
					o.run(t, base, "branch", "-q", "-f", "stable")
					hgRepo, fsRepo := testenv.CopyRepo(t, base), testenv.CopyRepo(t, base)
					ho, he, hc := o.result(t, hgRepo, args...)
					fo, fe, fc := hgfsRun(fsRepo, args...)
					compare(t, o, strings.Join(args, " "), hgRepo, fsRepo, res(ho, he, hc), res(fo, fe, fc))
				}
			}
		})
	}

	// Where hg has no working directory to take "." from, a clone says
	// so (hg 6.3 fails with a Python traceback there).
	_, fe, fc := hgfsRun(dir, "clone", "-b", ".", hgfsURL, filepath.Join(dir, "dot"))
	if fc != 255 || fe != "abort: dirstate branch not accessible\n" {
		t.Errorf("clone -b .: exit %d\n%s", fc, fe)
	}
	// A stream or a mount copies the whole store.
	for _, extra := range [][]string{{"--stream"}, {"--mount"}} {
		_, fe, fc := hgfsRun(dir, append(append([]string{"clone"}, extra...), src+"#stable", filepath.Join(dir, "whole"))...)
		if fc != 255 || !strings.HasPrefix(fe, "abort: cannot clone only a branch's changesets ") {
			t.Errorf("clone %s SOURCE#stable: exit %d\n%s", extra[0], fc, fe)
		}
	}
}

// caseArgs is cmd's command line for a case of TestBranchSourcesLikeHg:
// opts, the case's flags, then loc with the case's "#..." appended.
func caseArgs(cmd string, opts []string, loc string, c []string) []string {
	args := append([]string{cmd}, opts...)
	frag := ""
	for _, a := range c {
		if strings.HasPrefix(a, "#") {
			frag = a
		} else {
			args = append(args, a)
		}
	}
	return append(args, loc+frag)
}
