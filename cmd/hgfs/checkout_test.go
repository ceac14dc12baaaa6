package main

import (
	"os"
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
	t.Parallel()
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
			// Each source in its own directories; the oracles take one
			// command at a time, so hgfs's work overlaps hg's.
			t.Parallel()
			dir := t.TempDir()
			mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
			// A copy of its own: a clone copies only when it gets the
			// source's lock at once (copySource).
			src := copySource(t, s, dir)
			stdout, stderr, code := hgfsClone(t, dir, append(append([]string{}, hgConfig...), src, mine)...)
			if code != 0 {
				t.Fatalf("hgfs clone: %d\n%s%s", code, stdout, stderr)
			}
			want := s.maker.run(t, dir, "clone", src, theirs)
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
	t.Parallel()
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

// TestCheckoutRefused: subrepositories and largefiles are refused by
// name; the clone itself is complete and says so.
func TestCheckoutRefused(t *testing.T) {
	t.Parallel()
	hg := testenv.Default(t)
	for _, name := range []string{".hgsub", ".hglf/big.bin"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			hg.Run(t, dir, "init", src)
			os.MkdirAll(filepath.Dir(filepath.Join(src, filepath.FromSlash(name))), 0o755)
			writeFile(t, filepath.Join(src, filepath.FromSlash(name)), "")
			writeFile(t, filepath.Join(src, "a"), "a\n")
			hg.Run(t, src, "commit", "-qAm", "c", "-u", "t")
			o, e, code := hgfsClone(t, dir, src, filepath.Join(dir, "wc"))
			if code != 255 || !strings.Contains(e, name) || !strings.Contains(e, "not supported by hgfs") || !strings.Contains(e, "the clone is complete") {
				t.Errorf("clone: %d %q %q", code, o, e)
			}
			hg.Run(t, filepath.Join(dir, "wc"), "verify", "-q")
			if _, err := os.Stat(filepath.Join(dir, "wc", "a")); err == nil {
				t.Error("files checked out despite the refusal")
			}
		})
	}
}

// TestUpdateDirstateV2: in a repository requiring dirstate-v2, hgfs
// update writes a docket and data file both hg versions read clean.
func TestUpdateDirstateV2(t *testing.T) {
	t.Parallel()
	src := testenv.Generate(t, testenv.Spec{Files: 4, Revisions: 2, History: true})
	hgs := testenv.Mercurials(t)
	dir := t.TempDir()
	mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
	for _, d := range []string{mine, theirs} {
		hgs[0].Run(t, dir, append([]string{"clone", "-q", "-U", "--config", "format.use-dirstate-v2=1"}, append(testenv.DirstateV2Allow, src, d)...)...)
	}
	hgs[0].Run(t, theirs, append([]string{"update", "-q", "tip"}, testenv.DirstateV2Allow...)...)
	if o, e, code := hgfsRun(mine, "update", "-q", "tip"); code != 0 {
		t.Fatalf("hgfs update: %d %s%s", code, o, e)
	}
	if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
		t.Fatalf("working copy differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
	for _, hg := range hgs {
		if g, w := hg.Debugstate(t, mine), hg.Debugstate(t, theirs); g != w {
			t.Errorf("%s debugstate differs:\n%s", hg.Name, testenv.Diff("hg", w, "hgfs", g))
		}
		if st := hg.Run(t, mine, append([]string{"status"}, testenv.DirstateV2Allow...)...); len(st) != 0 {
			t.Errorf("%s status: %s", hg.Name, st)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(mine, ".hg", "dirstate.*")); len(m) != 1 {
		t.Errorf("dirstate data files: %v", m)
	}
}

// TestCloneRev: clone -r pulls only the ancestors of the revisions and
// checks out the first, as hg clone -r; with --stream it is refused.
func TestCloneRev(t *testing.T) {
	t.Parallel()
	src := testenv.Generate(t, testenv.Spec{Files: 4, Revisions: 4, History: true, NoSecret: true})
	url := testenv.Serve(t, src)
	hg := testenv.Default(t)
	dir := t.TempDir()
	for _, rev := range []string{"2", "stable"} {
		mine, theirs := filepath.Join(dir, "hgfs-"+rev), filepath.Join(dir, "hg-"+rev)
		o, e, code := hgfsClone(t, dir, "-r", rev, url, mine)
		if code != 0 {
			t.Fatalf("clone -r %s: %d %s%s", rev, code, o, e)
		}
		want := string(hg.Run(t, dir, "clone", "-r", rev, url, theirs))
		if o != want {
			t.Errorf("clone -r %s output:\n%s", rev, testenv.Diff("hg", want, "hgfs", o))
		}
		log := func(d string) string {
			return string(hg.Run(t, d, "log", "-T", "{node} {phase}\n")) + string(hg.Run(t, d, "id"))
		}
		if g, w := log(mine), log(theirs); g != w {
			t.Errorf("clone -r %s history:\n%s", rev, testenv.Diff("hg", w, "hgfs", g))
		}
		if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
			t.Errorf("clone -r %s working copy:\n%s", rev, testenv.Diff("hg", w, "hgfs", g))
		}
		if st := hg.Run(t, mine, "status"); len(st) != 0 {
			t.Errorf("status: %s", st)
		}
	}
	_, e, code := hgfsClone(t, dir, "--stream", "-r", "2", url, filepath.Join(dir, "streamed"))
	if code != 255 || !strings.HasPrefix(e, "abort: cannot clone only --rev ancestors with --stream\n") {
		t.Errorf("--stream -r: %d %q", code, e)
	}
}

// TestUpdateBookmarks: a clone checks out and activates "@"; update to
// another revision leaves it, to its name activates it, as hg's.
func TestUpdateBookmarks(t *testing.T) {
	t.Parallel()
	hg := testenv.Default(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	hg.Run(t, dir, "init", src)
	writeFile(t, filepath.Join(src, "a"), "a\n")
	hg.Run(t, src, "commit", "-qAm", "a", "-u", "t")
	hg.Run(t, src, "bookmark", "@")
	writeFile(t, filepath.Join(src, "a"), "b\n")
	hg.Run(t, src, "commit", "-qm", "b", "-u", "t")
	hg.Run(t, src, "update", "-q", "0")
	writeFile(t, filepath.Join(src, "b"), "c\n")
	hg.Run(t, src, "commit", "-qAm", "c", "-u", "t")
	mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
	o, e, code := hgfsClone(t, dir, src, mine)
	if want := string(hg.Run(t, dir, "clone", src, theirs)); code != 0 || o != want {
		t.Fatalf("clone: %d %q %q, want %q", code, o, e, want)
	}
	for _, args := range [][]string{{"update", "0"}, {"update", "@"}, {"update"}, {"update", "tip"}, {"update", "@"}} {
		want := string(hg.Run(t, theirs, args...))
		o, e, code := hgfsRun(mine, args...)
		if code != 0 || o != want {
			t.Errorf("%v: %d %q %q, want %q", args, code, o, e, want)
		}
		if g, w := string(hg.Run(t, mine, "id", "-B", "-i")), string(hg.Run(t, theirs, "id", "-B", "-i")); g != w {
			t.Errorf("%v: at %q, want %q", args, g, w)
		}
	}
}

// TestUpdateNoRev: without a revision, update goes to the highest open
// head of the branch descending from the parent, naming it when other
// heads exist, as hg's destupdate and statusotherdests.
func TestUpdateNoRev(t *testing.T) {
	t.Parallel()
	hg := testenv.Default(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	hg.Run(t, dir, "init", src)
	for i, f := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(src, f), f+"\n")
		hg.Run(t, src, "commit", "-qAm", "commit "+f, "-u", "t")
		if i == 1 {
			hg.Run(t, src, "update", "-q", "0")
		}
	}
	mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
	hg.Run(t, dir, "clone", "-q", "-U", src, theirs)
	hg.Run(t, dir, "clone", "-q", "-U", src, mine)
	for _, args := range [][]string{{"update"}, {"update", "-r", "0"}, {"update"}, {"update", "1"}, {"update"}} {
		want := string(hg.Run(t, theirs, args...))
		o, e, code := hgfsRun(mine, args...)
		if code != 0 || o != want {
			t.Errorf("%v: %d %q %q, want %q", args, code, o, e, want)
		}
		if g, w := string(hg.Run(t, mine, "id", "-n")), string(hg.Run(t, theirs, "id", "-n")); g != w {
			t.Errorf("%v: at %q, want %q", args, g, w)
		}
	}
}

// TestUpdateUntracked: an untracked file where the update writes a
// different one is refused in hg's words, before anything changes; an
// equal one is taken; -C overwrites.
func TestUpdateUntracked(t *testing.T) {
	t.Parallel()
	hg := testenv.Default(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	hg.Run(t, dir, "init", src)
	writeFile(t, filepath.Join(src, "a"), "a\n")
	hg.Run(t, src, "commit", "-qAm", "a", "-u", "t")
	writeFile(t, filepath.Join(src, "b"), "b\n")
	writeFile(t, filepath.Join(src, "c"), "c\n")
	hg.Run(t, src, "commit", "-qAm", "bc", "-u", "t")
	mine, theirs := filepath.Join(dir, "hgfs"), filepath.Join(dir, "hg")
	for _, d := range []string{mine, theirs} {
		hg.Run(t, dir, "clone", "-q", "-r", "0", src, d)
		hg.Run(t, d, "pull", "-q", src)
		writeFile(t, filepath.Join(d, "b"), "untracked\n")
		writeFile(t, filepath.Join(d, "c"), "c\n")
	}
	_, want, _ := hg.Result(t, theirs, "update", "tip")
	o, e, code := hgfsRun(mine, "update", "tip")
	if code != 255 || e != string(want) || o != "" {
		t.Errorf("update over an untracked file: %d %q %q, want %q", code, o, e, want)
	}
	if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
		t.Errorf("the refused update changed the working copy:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
	if o, e, code := hgfsRun(mine, "update", "-C", "tip"); code != 0 {
		t.Fatalf("update -C: %d %s%s", code, o, e)
	}
	if st := hg.Run(t, mine, "status"); len(st) != 0 {
		t.Errorf("status after update -C: %s", st)
	}
}
