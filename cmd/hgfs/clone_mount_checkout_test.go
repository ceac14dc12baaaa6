//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// checkoutFixture is a repository made with real hg whose revisions
// differ in what a checkout must get right: exec bits set and cleared,
// symlinks (to a file, to a directory, retargeted), empty files, a
// directory removed; bookmark "book" on revision 0.
func checkoutFixture(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "fixture")
	testenv.Hg(t, "", "init", src)
	p := func(name string) string { return filepath.Join(src, filepath.FromSlash(name)) }
	for name, content := range map[string]string{
		"run.sh": "#!/bin/sh\necho run\n", "empty": "", "d/e/f.txt": strings.Repeat("f\n", 3000),
		"d/keep": "keep\n", "plain.txt": "plain\n", "dir with space/x": "x\n",
	} {
		os.MkdirAll(filepath.Dir(p(name)), 0o755)
		writeFile(t, p(name), content)
	}
	os.Chmod(p("run.sh"), 0o755)
	os.Symlink("run.sh", p("link"))
	os.Symlink("d/e", p("dirlink"))
	testenv.Hg(t, src, "commit", "-qAm", "zero", "-u", "t", "-d", "0 0")
	testenv.Hg(t, src, "bookmark", "book")
	os.Chmod(p("run.sh"), 0o644)
	os.Chmod(p("plain.txt"), 0o755)
	os.RemoveAll(p("d/e"))
	os.Remove(p("link"))
	os.Symlink("plain.txt", p("link"))
	os.MkdirAll(p("new"), 0o755)
	writeFile(t, p("new/empty2"), "")
	testenv.Hg(t, src, "commit", "-qAm", "one", "-u", "t", "-d", "1 0")
	testenv.Hg(t, src, "bookmark", "-i")
	return src
}

// TestCloneMountCheckout clones into a mount, with a checkout, from a
// stream bundle and from hg 6.3's and hg 7's hg serve, of Mercurial's
// own history and of checkoutFixture: the clone prints hg's lines; the
// working copy through the mount is the one hg clone checks out
// (contents, modes, symlinks); both hg versions find hg status and hg
// diff empty and the same hg debugstate as hg's clone has, with every
// file's mtime recorded (so status reads no file: the dirstate is not
// rewritten); after an unmount and a remount the same holds.
func TestCloneMountCheckout(t *testing.T) {
	testenv.RequireFUSE(t)
	hgs := testenv.Mercurials(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	sources := []struct{ name, dir string }{
		{"fixture", checkoutFixture(t, dir)},
		{"corpus", testenv.CorpusRepo(t, testenv.CorpusHistory)},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			dir := t.TempDir()
			bundle := filepath.Join(dir, "stream.hg")
			hgs[0].Run(t, "", "-R", src.dir, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", bundle)
			type tcase struct {
				name, source string
				args         []string
			}
			cases := []tcase{{"bundle", bundle, nil}}
			for _, hg := range hgs {
				cases = append(cases, tcase{"serve-" + hg.Name, hg.Serve(t, src.dir), nil})
			}
			if src.name == "fixture" {
				cases = append(cases, tcase{"serve-u", cases[1].source, []string{"-u", "book"}})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					// hg's clone, from the repository itself (hg clones
					// no stream bundle file).
					ref := filepath.Join(dir, "ref-"+c.name)
					want := hgs[0].Run(t, "", append(append([]string{"clone"}, c.args...), src.dir, ref)...)
					mp, cache := filepath.Join(dir, "mnt-"+c.name), filepath.Join(dir, "cache-"+c.name)
					cmd := exec.Command(bin, append(append([]string{"clone", "--mount", "--cache", cache}, c.args...), c.source, mp)...)
					cmd.Env = testenv.HgEnv()
					out, err := cmd.CombinedOutput()
					t.Cleanup(func() { testenv.UnmountCache(t, mp) })
					if err != nil {
						t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
					}
					// hg's last two lines: where it updates to, what it wrote.
					lines := strings.SplitAfter(strings.TrimSuffix(string(want), "\n"), "\n")
					for _, l := range lines[len(lines)-2:] {
						if !strings.Contains(string(out), strings.TrimSuffix(l, "\n")+"\n") {
							t.Errorf("clone output lacks hg's %q:\n%s", l, out)
						}
					}
					sameCheckout(t, hgs, mp, ref)
					if c.name == "serve-u" {
						if b, err := os.ReadFile(filepath.Join(mp, ".hg", "bookmarks.current")); err != nil || string(b) != "book" {
							t.Errorf("active bookmark: %q %v", b, err)
						}
					}
					testenv.UnmountCache(t, mp)
					fsckClean(t, cache)
					sameCheckout(t, hgs, testenv.MountCache(t, cache), ref)
				})
			}
		})
	}
}

// sameCheckout checks the working copy at mp against hg's at ref with
// every Mercurial: files, status, diff, debugstate; and that status
// found every file clean by its attributes (hg rewrites the dirstate
// when it had to read one).
func sameCheckout(t *testing.T, hgs []testenv.Mercurial, mp, ref string) {
	t.Helper()
	if g, w := testenv.WorkingCopy(t, mp), testenv.WorkingCopy(t, ref); g != w {
		t.Fatalf("working copy differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
	}
	before, err := os.ReadFile(filepath.Join(mp, ".hg", "dirstate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, hg := range hgs {
		raw := string(hg.Run(t, mp, "debugstate", "--no-dates"))
		if strings.Contains(raw, " unset ") {
			t.Errorf("%s debugstate: files recorded without mtime:\n%s", hg.Name, raw)
		}
		if g, w := testenv.WithoutDates(raw), hg.Debugstate(t, ref); g != w {
			t.Errorf("%s debugstate differs:\n%s", hg.Name, testenv.Diff("hg", w, "hgfs", g))
		}
		for _, cmd := range []string{"status", "diff"} {
			if out := hg.Run(t, mp, cmd); len(out) > 0 {
				t.Errorf("%s %s on the mount:\n%s", hg.Name, cmd, out)
			}
		}
		if g, w := hg.Run(t, mp, "id", "-i", "-b"), hg.Run(t, ref, "id", "-i", "-b"); !bytes.Equal(g, w) {
			t.Errorf("%s id: %s, hg's clone %s", hg.Name, g, w)
		}
	}
	if after, err := os.ReadFile(filepath.Join(mp, ".hg", "dirstate")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("hg status rewrote the dirstate (it read files back): %v", err)
	}
}

// TestCloneMountCheckoutUpdate: hgfs update on a mounted clone (run in
// the mount, through its files) moves it as hg update moves hg's clone,
// and a mount daemon killed with SIGKILL after the clone loses nothing:
// after a remount the working copy is there and clean.
func TestCloneMountCheckoutUpdate(t *testing.T) {
	testenv.RequireFUSE(t)
	hgs := testenv.Mercurials(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	src := checkoutFixture(t, dir)
	ref := filepath.Join(dir, "ref")
	hgs[0].Run(t, "", "clone", "-q", src, ref)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	cmd := exec.Command(bin, "clone", "-q", "--mount", "--cache", cache, src, mp)
	cmd.Env = testenv.HgEnv()
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	if err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}

	// Killed right after the clone: the clone made everything durable.
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(info.Pid, syscall.SIGKILL)
	removeDeadMount(t, info.Pid, mp)
	fsckClean(t, cache)
	mp = testenv.MountCache(t, cache)
	sameCheckout(t, hgs, mp, ref)

	for _, rev := range []string{"0", "null", "tip", "book"} {
		want := hgs[0].Run(t, ref, "update", rev)
		o, e, code := hgfsRun(mp, "update", rev)
		if code != 0 {
			t.Fatalf("hgfs update %s: %d\n%s%s", rev, code, o, e)
		}
		if o != string(want) {
			t.Errorf("update %s output:\n%s", rev, testenv.Diff("hg", string(want), "hgfs", o))
		}
		if g, w := testenv.WorkingCopy(t, mp), testenv.WorkingCopy(t, ref); g != w {
			t.Fatalf("update %s: working copy differs:\n%s", rev, testenv.Diff("hg", w, "hgfs", g))
		}
		// Each hg in turn: hg status fixes up the entries it had to
		// compare (in both working copies alike).
		for _, hg := range hgs {
			if g, w := hg.Debugstate(t, mp), hg.Debugstate(t, ref); g != w {
				t.Errorf("update %s: %s debugstate differs:\n%s", rev, hg.Name, testenv.Diff("hg", w, "hgfs", g))
			}
			if st := hg.Run(t, mp, "status"); len(st) > 0 {
				t.Errorf("update %s: %s status:\n%s", rev, hg.Name, st)
			}
			hg.Run(t, ref, "status")
		}
	}
}

// TestCloneMountNoUpdate: -U leaves the mounted clone without a working
// copy, as hg clone -U: no files, no dirstate, null parent.
func TestCloneMountNoUpdate(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	src := checkoutFixture(t, dir)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	cmd := exec.Command(testenv.Hgfs(t), "clone", "-U", "--mount", "--cache", cache, src, mp)
	cmd.Env = testenv.HgEnv()
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	if err != nil {
		t.Fatalf("hgfs clone -U --mount: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "updating") || strings.Contains(string(out), "files updated") {
		t.Errorf("-U output:\n%s", out)
	}
	ents, err := os.ReadDir(mp)
	if err != nil || len(ents) != 1 || ents[0].Name() != ".hg" {
		t.Errorf("-U: the mount holds %v %v", ents, err)
	}
	if id := testenv.Hg(t, mp, "id", "-i"); string(id) != "000000000000\n" {
		t.Errorf("-U: parent %s", id)
	}
	if _, err := os.Stat(filepath.Join(mp, ".hg", "dirstate")); err == nil {
		t.Error("-U wrote a dirstate")
	}
}
