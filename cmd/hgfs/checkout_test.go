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
// working copies, hg status and hg debugstate (states, modes, sizes)
// agree; after the clone and at the end, hg diff is empty and both hg 6.3
// and 7 agree too.
func TestCloneCheckoutCorpus(t *testing.T) {
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	for _, s := range srcs {
		if s.name == "hg7.2-delta-info" {
			continue // a format hgfs does not read (delta-info-revlog)
		}
		// hg 7's formats are beyond hg 6.3.
		var hgs []*oracle
		for _, o := range ors {
			if o.Major() >= s.maker.Major() {
				hgs = append(hgs, o)
			}
		}
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
			stdout, stderr, code := hgfsClone(t, dir, append(append([]string{}, hgConfig...), s.dir, mine)...)
			if code != 0 {
				t.Fatalf("hgfs clone: %d\n%s%s", code, stdout, stderr)
			}
			want := s.maker.run(t, dir, "clone", s.dir, theirs)
			if stdout != want {
				t.Errorf("clone output:\n%s", testenv.Diff(s.maker.Name, want, "hgfs", stdout))
			}
			same := func(what string, hgs []*oracle, diff bool) {
				t.Helper()
				if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
					t.Fatalf("%s: working copy differs:\n%s", what, testenv.Diff("hg", w, "hgfs", g))
				}
				for _, hg := range hgs {
					ds := func(dir string) string { return testenv.WithoutDates(hg.run(t, dir, "debugstate", "--no-dates")) }
					if g, w := ds(mine), ds(theirs); g != w {
						t.Errorf("%s: %s debugstate differs:\n%s", what, hg.Name, testenv.Diff("hg", w, "hgfs", g))
					}
				}
				cmds := []string{"status"}
				if diff {
					cmds = append(cmds, "diff")
				}
				for _, hg := range hgs {
					for _, cmd := range cmds {
						if out := hg.run(t, mine, cmd); out != "" {
							t.Errorf("%s: %s %s:\n%s", what, hg.Name, cmd, out)
						}
					}
				}
			}
			same("clone", hgs, true)
			revs := strings.Fields(s.maker.run(t, theirs, "log", "-T", "{rev} "))
			for _, i := range []int{len(revs) / 3, 0, len(revs) * 2 / 3} {
				rev := revs[i]
				want := s.maker.run(t, theirs, "update", "-r", rev)
				o, e, code := hgfsRun(mine, "update", "-r", rev)
				if code != 0 {
					t.Fatalf("hgfs update -r %s: %d\n%s%s", rev, code, o, e)
				}
				if o != want {
					t.Errorf("update -r %s output:\n%s", rev, testenv.Diff("hg", want, "hgfs", o))
				}
				same("update -r "+rev, []*oracle{s.maker}, false)
			}
			// null empties the working copy, tip fills it again.
			for _, rev := range []string{"null", "tip"} {
				s.maker.run(t, theirs, "update", "-q", rev)
				if o, e, code := hgfsRun(mine, "update", "-q", rev); code != 0 {
					t.Fatalf("hgfs update %s: %d\n%s%s", rev, code, o, e)
				}
			}
			same("update null, tip", hgs, true)
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
	// hg would merge the change into revision 0; hgfs refuses as hg
	// refuses a change it cannot carry over.
	o, e, code := hgfsRun(wc, "update", "-r", "0")
	if code != 255 || o != "" || e != "abort: uncommitted changes\n(commit or update --clean to discard changes)\n" {
		t.Errorf("update: %d %q %q", code, o, e)
	}
	_, herr, _ := hg.Result(t, wc, "update", "--check", "-r", "0")
	o, e, code = hgfsRun(wc, "update", "--check", "-r", "0")
	if code != 255 || e != string(herr) || o != "" {
		t.Errorf("update --check: %d %q %q, want hg's %q", code, o, e, herr)
	}
	o, e, code = hgfsRun(wc, "update", "-C", "-r", "0")
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
