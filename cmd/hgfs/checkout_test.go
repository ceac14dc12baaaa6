package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestCloneCheckoutCorpus clones every repository of the differential
// corpus with hgfs and with hg, then moves both through the same
// revisions (hgfs update, hg update): hgfs prints hg's lines, and the
// working copies, hg status, hg diff and hg debugstate (states, modes,
// sizes) agree, for hg 6.3 and 7.
func TestCloneCheckoutCorpus(t *testing.T) {
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	for _, s := range srcs {
		// hg 7's formats (delta-info) are beyond hg 6.3.
		var hgs []testenv.Mercurial
		for _, hg := range testenv.Mercurials(t) {
			if hg.Major() >= s.maker.Major() {
				hgs = append(hgs, hg)
			}
		}
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
			stdout, stderr, code := hgfsClone(t, dir, s.dir, mine)
			if code != 0 {
				t.Fatalf("hgfs clone: %d\n%s%s", code, stdout, stderr)
			}
			want := string(s.maker.Run(t, dir, "clone", s.dir, theirs))
			if stdout != want {
				t.Errorf("clone output:\n%s", testenv.Diff(s.maker.Name, want, "hgfs", stdout))
			}
			same := func(what string) {
				t.Helper()
				if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
					t.Fatalf("%s: working copy differs:\n%s", what, testenv.Diff("hg", w, "hgfs", g))
				}
				for _, hg := range hgs {
					if g, w := hg.Debugstate(t, mine), hg.Debugstate(t, theirs); g != w {
						t.Errorf("%s: %s debugstate differs:\n%s", what, hg.Name, testenv.Diff("hg", w, "hgfs", g))
					}
				}
				for _, hg := range hgs {
					for _, cmd := range []string{"status", "diff"} {
						if out := hg.Run(t, mine, cmd); len(out) != 0 {
							t.Errorf("%s: %s %s:\n%s", what, hg.Name, cmd, out)
						}
					}
				}
			}
			same("clone")
			revs := strings.Fields(string(s.maker.Run(t, theirs, "log", "-T", "{rev} ")))
			for _, i := range []int{len(revs) - 1, len(revs) / 3, 0, len(revs) * 2 / 3} {
				rev := revs[i]
				want := string(s.maker.Run(t, theirs, "update", "-r", rev))
				o, e, code := hgfsRun(mine, "update", "-r", rev)
				if code != 0 {
					t.Fatalf("hgfs update -r %s: %d\n%s%s", rev, code, o, e)
				}
				if o != want {
					t.Errorf("update -r %s output:\n%s", rev, testenv.Diff("hg", want, "hgfs", o))
				}
				same("update -r " + rev)
			}
			// null empties the working copy, tip fills it again.
			for _, rev := range []string{"null", "tip"} {
				s.maker.Run(t, theirs, "update", "-q", rev)
				if o, e, code := hgfsRun(mine, "update", "-q", rev); code != 0 {
					t.Fatalf("hgfs update %s: %d\n%s%s", rev, code, o, e)
				}
				same("update " + rev)
			}
		})
	}
}

// TestUpdateDirty: uncommitted changes are refused with hg's messages
// (with and without --check), -C discards them.
func TestUpdateDirty(t *testing.T) {
	src := testenv.Generate(t, testenv.Spec{Files: 2, Revisions: 2})
	dir := t.TempDir()
	wc := filepath.Join(dir, "wc")
	if o, e, code := hgfsClone(t, dir, src, wc); code != 0 {
		t.Fatalf("clone: %d %s%s", code, o, e)
	}
	f := filepath.Join(wc, "f", "000", "file0000.txt")
	writeFile(t, f, "changed\n")
	hg := testenv.Default(t)
	for _, args := range [][]string{{"update", "-r", "0"}, {"update", "--check", "-r", "0"}} {
		_, herr, _ := hg.Result(t, wc, args...)
		o, e, code := hgfsRun(wc, args...)
		if code != 255 || e != string(herr) || o != "" {
			t.Errorf("%v: %d %q %q, want hg's %q", args, code, o, e, herr)
		}
	}
	o, e, code := hgfsRun(wc, "update", "-C", "-r", "0")
	if code != 0 || !strings.HasSuffix(o, " files updated, 0 files merged, 0 files removed, 0 files unresolved\n") {
		t.Fatalf("update -C: %d %q %q", code, o, e)
	}
	if st := hg.Run(t, wc, "status"); len(st) != 0 {
		t.Errorf("status after update -C: %s", st)
	}
	if id := strings.TrimSpace(string(hg.Run(t, wc, "id", "-n"))); id != strconv.Itoa(0) {
		t.Errorf("parent after update -C -r 0: %s", id)
	}
}
