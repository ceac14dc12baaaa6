//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestVirtualDaemonUpdate: hgfs update on a mounted virtual working
// copy is done by the mount's daemon (mount.UpdateXattr) when the
// working copy lets it (files becoming symlinks, symlinks files, exec
// bits, directories made and emptied included), and otherwise, as with HGFS_TUNE=-daemonupdate,
// through the mount's files: both end as hg update natively does (the
// working files, hg status, hg debugstate), and refuse uncommitted
// changes with the same message. What the kernel had cached of the
// files, names and directories the daemon changed is gone: reads after
// the update see the target's files.
func TestVirtualDaemonUpdate(t *testing.T) {
	t.Parallel()
	testenv.RequireFUSE(t)
	hgs := testenv.Mercurials(t)
	hg := hgs[0]
	bin := testenv.Hgfs(t)
	dir := t.TempDir()

	// Two changesets: 1 edits a (and same, keeping its size), makes d/b executable, removes d/e/c
	// (its directories with it) and adds n/m/new (with new ones).
	src := filepath.Join(dir, "src")
	hg.Run(t, "", "init", src)
	write := func(root, name, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, name string) {
		t.Helper()
		p := filepath.Join(src, filepath.FromSlash(name))
		os.Remove(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "a", "a at 0\n")
	write(src, "same", "same size at 0\n")
	write(src, "d/b", "b\n")
	write(src, "d/e/c", "c\n")
	write(src, "empty", "")
	write(src, "f2l", "a file, then a link\n")
	symlink("a", "l1")
	symlink("b", "d/l2")
	hg.Run(t, src, "commit", "-q", "-A", "-m", "zero", "-u", "t", "-d", "0 0")
	write(src, "a", "a at 1, longer\n")
	write(src, "same", "same size at 1\n")
	if err := os.Chmod(filepath.Join(src, "d", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	hg.Run(t, src, "rm", "-q", "d/e/c")
	write(src, "n/m/new", "new\n")
	symlink("d/b", "l1")
	os.Remove(filepath.Join(src, "d", "l2"))
	write(src, "d/l2", "a link, then a file\n")
	symlink("a", "f2l")
	symlink("../../a", "n/m/link")
	hg.Run(t, src, "commit", "-q", "-A", "-m", "one", "-u", "t", "-d", "1 0")

	ref := filepath.Join(dir, "ref")
	hg.Run(t, "", "clone", "-q", src, ref)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	hgfs := func(env string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-R", mp}, args...)...)
		cmd.Env = testenv.HgEnv()
		if env != "" {
			cmd.Env = append(cmd.Env, env)
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	cmd := exec.Command(bin, "clone", "-q", "--mount", "--cache", cache, src, mp)
	cmd.Env = testenv.HgEnv()
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	if err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}
	updates := func() int64 {
		t.Helper()
		info, err := mount.ReadInfo(mp)
		if err != nil {
			t.Fatal(err)
		}
		return info.Updates
	}
	same := func(step string) {
		t.Helper()
		if g, w := testenv.WorkingCopy(t, mp), testenv.WorkingCopy(t, ref); g != w {
			t.Fatalf("%s: working copy differs:\n%s", step, testenv.Diff("hg", w, "hgfs", g))
		}
		for _, hg := range hgs {
			if g, w := string(hg.Run(t, mp, "status", "-A")), string(hg.Run(t, ref, "status", "-A")); g != w {
				t.Fatalf("%s: %s status differs:\n%s", step, hg.Name, testenv.Diff("hg", w, "hgfs", g))
			}
			if g, w := hg.Debugstate(t, mp), hg.Debugstate(t, ref); g != w {
				t.Errorf("%s: %s debugstate differs:\n%s", step, hg.Name, testenv.Diff("hg", w, "hgfs", g))
			}
		}
	}
	// update runs hgfs update on the mount and hg update natively, and
	// checks that the daemon did it (or not). Had it stopped midway, the
	// dirstate before it would have been left: no file may then be
	// claimed clean (its size and mtime those its old entry records)
	// with other bytes than it had.
	update := func(byDaemon bool, env string, args ...string) {
		t.Helper()
		before := updates()
		old, contents := trackedContents(t, mp)
		hg.Run(t, ref, append([]string{"update", "-q"}, args...)...)
		if out, code := hgfs(env, append([]string{"update", "-q"}, args...)...); code != 0 {
			t.Fatalf("hgfs update %v: exit %d\n%s", args, code, out)
		}
		claimedClean(t, mp, old, contents)
		if got := updates() - before; got != map[bool]int64{true: 1}[byDaemon] {
			t.Errorf("hgfs update %v: the daemon did %d updates, want it to do it: %t", args, got, byDaemon)
		}
		same(strings.Join(args, " "))
	}
	readAll := func() {
		t.Helper()
		// Fill the kernel's caches: names (and missing names), attributes
		// and pages.
		for _, p := range []string{"a", "d/b", "d/e/c", "n/m/new", "empty", "f2l", "l1", "d/l2", "n/m/link"} {
			os.ReadFile(filepath.Join(mp, p))
			os.Readlink(filepath.Join(mp, p))
		}
		os.ReadDir(filepath.Join(mp, "d"))
	}

	same("clone")
	readAll()
	update(true, "", "0")
	if out, code := hgfs("", "stats", mp); code != 0 || !strings.Contains(out, "\nhgfs updates done by the daemon: 1\n") {
		t.Errorf("hgfs stats: exit %d\n%s", code, out)
	}
	readAll()
	update(true, "", "1")
	readAll()
	update(true, "", "0")
	update(false, "HGFS_TUNE=-daemonupdate", "1")
	update(true, "", "1") // at the target already: nothing moves

	// A materialized file with the revision's content is clean; one
	// with other content refuses the update, with the message of the
	// update through the files, and changes nothing.
	write(mp, "d/b", "b\n")
	write(ref, "d/b", "b\n")
	os.Chmod(filepath.Join(mp, "d", "b"), 0o755)
	os.Chmod(filepath.Join(ref, "d", "b"), 0o755)
	update(true, "", "0")
	write(mp, "a", "changed\n")
	write(ref, "a", "changed\n")
	before := updates()
	viaDaemon, code1 := hgfs("", "update", "1")
	viaFiles, code2 := hgfs("HGFS_TUNE=-daemonupdate", "update", "1")
	if code1 == 0 || code1 != code2 || viaDaemon != viaFiles || !strings.Contains(viaDaemon, "uncommitted changes") {
		t.Errorf("update of a changed working copy: through the daemon exit %d:\n%s\nthrough the files exit %d:\n%s", code1, viaDaemon, code2, viaFiles)
	}
	if updates() != before {
		t.Errorf("the daemon counted a refused update")
	}
	same("refused update")
	update(true, "", "-C", "1")

	// Added files: the daemon declines, the update goes through the
	// files.
	write(mp, "added", "x\n")
	write(ref, "added", "x\n")
	hg.Run(t, mp, "add", "-q", "added")
	hg.Run(t, ref, "add", "-q", "added")
	update(false, "", "-C", "0")

	if err := os.Remove(filepath.Join(mp, "added")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ref, "added")); err != nil {
		t.Fatal(err)
	}
	update(true, "", "1")
	// Updates in quick succession, where an old entry records the second
	// the next update gives its files.
	for i := range 6 {
		rev := []string{"0", "1"}[i%2]
		old, contents := trackedContents(t, mp)
		if out, code := hgfs("", "update", "-q", rev); code != 0 {
			t.Fatalf("hgfs update %s: exit %d\n%s", rev, code, out)
		}
		claimedClean(t, mp, old, contents)
	}
	same("updates in quick succession")
	testenv.UnmountCache(t, mp)
	fsckClean(t, cache)
	mp = testenv.MountCache(t, cache)
	same("remount")
}

// trackedContents reads the dirstate of the working copy at wc and the
// content (a symlink's target) of every file it records an mtime for.
func trackedContents(t *testing.T, wc string) (*dirstate.Dirstate, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(wc, ".hg", "dirstate"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dirstate.ParseV1(data)
	if err != nil {
		t.Fatal(err)
	}
	contents := map[string]string{}
	for _, e := range d.Entries {
		if !e.HasMtime {
			continue
		}
		p := filepath.Join(wc, filepath.FromSlash(e.Path))
		if target, err := os.Readlink(p); err == nil {
			contents[e.Path] = target
		} else if b, err := os.ReadFile(p); err == nil {
			contents[e.Path] = string(b)
		}
	}
	return d, contents
}

// claimedClean fails for each file of wc whose size and mtime match
// its entry in old, the dirstate before an update, while its content
// differs from contents, what it was then: left with old, hg status
// would call it clean.
func claimedClean(t *testing.T, wc string, old *dirstate.Dirstate, contents map[string]string) {
	t.Helper()
	for _, e := range old.Entries {
		was, ok := contents[e.Path]
		if !ok {
			continue
		}
		p := filepath.Join(wc, filepath.FromSlash(e.Path))
		fi, err := os.Lstat(p)
		if err != nil || int32(fi.Size()) != e.Size || dirstate.TimestampOf(fi.ModTime().UnixNano()).Sec != e.Mtime.Sec {
			continue
		}
		now, err := os.Readlink(p)
		if err != nil {
			b, _ := os.ReadFile(p)
			now = string(b)
		}
		if now != was {
			t.Errorf("%s: rewritten with the size and mtime its old entry records (%d bytes, second %d): an update stopped midway would leave it claimed clean", e.Path, e.Size, e.Mtime.Sec)
		}
	}
}
