//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestVirtualWorkingCopy runs a scripted sequence of working copy
// operations on a mounted clone, whose working copy is virtual (files
// name their revisions until written), and on hg's own clone of the
// same repository, with hg 6.3 and with hg 7, on checkoutFixture and on
// Mercurial's history: hgfs update between distant revisions (hg update
// natively), an edit, an add, a remove, a rename, chmod +x, a commit,
// hg update -C, hg revert, hg rebase. After each step both agree on hg
// status -A, hg log --debug of the new changesets and every working
// file (content and mode); after the clone and after hgfs update hg
// status reads no file (the dirstate is not rewritten). The mount
// daemon is killed with SIGKILL in the middle of the sequence and the
// mount unmounted and remounted at its end, each followed by a clean
// hgfs fsck and the same comparison.
func TestVirtualWorkingCopy(t *testing.T) {
	t.Parallel()
	testenv.RequireFUSE(t)
	hgs := testenv.Mercurials(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	sources := []struct{ name, dir string }{
		{"fixture", checkoutFixture(t, dir)},
		{"corpus", testenv.CorpusRepo(t, testenv.CorpusHistory)},
	}
	for _, src := range sources {
		for _, hg := range hgs {
			t.Run(src.name+"-"+hg.Name, func(t *testing.T) {
				virtualSequence(t, hg, bin, src.dir)
			})
		}
	}
}

// virtualSequence is TestVirtualWorkingCopy's sequence with one hg.
func virtualSequence(t *testing.T, hg testenv.Mercurial, bin, src string) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	hg.Run(t, "", "clone", "-q", src, ref)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	cmd := exec.Command(bin, "clone", "-q", "--mount", "--cache", cache, src, mp)
	cmd.Env = testenv.HgEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	if n := virtualFiles(t, mp); n == 0 {
		t.Fatal("the mounted clone's working copy has no virtual file")
	}
	same := func(step string) {
		t.Helper()
		for _, args := range [][]string{{"status", "-A"}, {"log", "--debug", "-r", "draft() or . or tip"}, {"id", "-i", "-b"}} {
			// hg --debug may report its branch cache stale on either
			// side: not the working copy's business.
			if g, w := withoutCacheNotes(hg.Run(t, mp, args...)), withoutCacheNotes(hg.Run(t, ref, args...)); !bytes.Equal(g, w) {
				t.Fatalf("%s: hg %s differs:\n%s", step, strings.Join(args, " "), testenv.Diff("native", string(w), "mount", string(g)))
			}
		}
		if g, w := testenv.WorkingCopy(t, mp), testenv.WorkingCopy(t, ref); g != w {
			t.Fatalf("%s: working copy differs:\n%s", step, testenv.Diff("native", w, "mount", g))
		}
	}
	// statusReadsNothing: hg status finds the working copy clean from
	// the dirstate's attributes alone (it rewrites the dirstate when it
	// had to read a file).
	statusReadsNothing := func(step string) {
		t.Helper()
		before, _ := os.ReadFile(filepath.Join(mp, ".hg", "dirstate"))
		if out := hg.Run(t, mp, "status"); len(out) > 0 {
			t.Fatalf("%s: hg status on the mount:\n%s", step, out)
		}
		if after, _ := os.ReadFile(filepath.Join(mp, ".hg", "dirstate")); !bytes.Equal(before, after) {
			t.Errorf("%s: hg status rewrote the dirstate (it read files)", step)
		}
	}
	statusReadsNothing("clone")
	same("clone")

	files := strings.Split(strings.TrimSuffix(string(hg.Run(t, ref, "files", "-r", "tip", "-T", "{path}\\0")), "\x00"), "\x00")
	regular := regularFiles(t, ref, files)
	if len(regular) < 4 {
		t.Fatalf("need 4 regular files at tip, have %q", regular)
	}
	edit, rm, mv, x := regular[0], regular[1], regular[2], regular[3]

	// Distant revisions: hgfs update on the mount, hg update natively.
	for _, rev := range []string{"0", "tip"} {
		if o, e, code := hgfsRun(mp, "update", "-q", rev); code != 0 {
			t.Fatalf("hgfs update %s: %d\n%s%s", rev, code, o, e)
		}
		hg.Run(t, ref, "update", "-q", rev)
		// Files whose flags alone changed are recorded unsure, as hg
		// records them (both read those back).
		if out := hg.Run(t, mp, "status"); len(out) > 0 {
			t.Fatalf("hgfs update %s: hg status on the mount:\n%s", rev, out)
		}
		same("update " + rev)
	}
	both := func(step string, do func(root string)) {
		t.Helper()
		do(mp)
		do(ref)
		same(step)
	}
	both("edit", func(r string) { appendFile(t, filepath.Join(r, edit), "an edit\n") })
	both("add", func(r string) {
		writeFile(t, filepath.Join(r, "added.txt"), "added\n")
		hg.Run(t, r, "add", "-q", "added.txt")
	})
	both("remove", func(r string) { hg.Run(t, r, "rm", "-q", rm) })
	both("rename", func(r string) { hg.Run(t, r, "mv", "-q", mv, mv+".renamed") })
	both("chmod", func(r string) {
		if err := os.Chmod(filepath.Join(r, x), 0o755); err != nil {
			t.Fatal(err)
		}
	})

	// The daemon killed: the changes so far survive.
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(info.Pid, syscall.SIGKILL)
	removeDeadMount(t, info.Pid, mp)
	fsckClean(t, cache)
	mp = testenv.MountCache(t, cache)
	same("after kill -9")

	both("commit", func(r string) { hg.Run(t, r, "commit", "-q", "-m", "virtual", "-u", "t", "-d", "1 0") })
	c1 := strings.TrimSpace(string(hg.Run(t, ref, "id", "-i", "--debug")))
	both("update -C 0", func(r string) { hg.Run(t, r, "update", "-q", "-C", "0") })
	both("side commit", func(r string) {
		writeFile(t, filepath.Join(r, "side.txt"), "side\n")
		hg.Run(t, r, "add", "-q", "side.txt")
		hg.Run(t, r, "commit", "-q", "-m", "side", "-u", "t", "-d", "2 0")
	})
	at0 := strings.Split(strings.TrimSuffix(string(hg.Run(t, ref, "files", "-r", "0", "-T", "{path}\\0")), "\x00"), "\x00")
	revert := regularFiles(t, ref, at0)[0]
	both("revert", func(r string) {
		appendFile(t, filepath.Join(r, revert), "to be reverted\n")
		hg.Run(t, r, "revert", "-q", "--no-backup", revert)
	})
	both("rebase", func(r string) {
		hg.Run(t, r, "--config", "extensions.rebase=", "rebase", "-q", "-d", c1)
	})

	// Unmounted and mounted again.
	testenv.UnmountCache(t, mp)
	fsckClean(t, cache)
	mp = testenv.MountCache(t, cache)
	same("remount")
}

// withoutCacheNotes drops hg's "invalid branch cache" debug lines.
func withoutCacheNotes(out []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("invalid branch cache")) {
			b.Write(l)
		}
	}
	return b.Bytes()
}

// virtualFiles is the mount's count of virtual files (hgfs stats).
func virtualFiles(t *testing.T, mp string) int64 {
	t.Helper()
	return mountStats(t, mp).VirtualFiles
}

// regularFiles keeps the paths of files that are regular files in the
// working copy at root (no symlinks, no directories in the way).
func regularFiles(t *testing.T, root string, paths []string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		if fi, err := os.Lstat(filepath.Join(root, p)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 == 0 {
			out = append(out, p)
		}
	}
	return out
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVirtualFsck: hgfs fsck checks each virtual file's reference
// against the repository in the cache, those of files still deferred to
// their directories' first look (the clone's, before anything looked)
// too: a size that is not the revision's, and a revision the filelog
// lacks, are problems (exit 1).
func TestVirtualFsck(t *testing.T) {
	testenv.RequireFUSE(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	src := checkoutFixture(t, dir)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	cmd := exec.Command(bin, "clone", "-q", "--mount", "--cache", cache, src, mp)
	cmd.Env = testenv.HgEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}
	testenv.UnmountCache(t, mp)
	if r, err := fsnode.Fsck(cache, false); err != nil || r.Deferred == 0 || r.Deferred != len(r.Virtual) {
		t.Errorf("the clone's working copy is not deferred: %v %+v", err, r)
	}
	fsckClean(t, cache)
	fsys, err := fsnode.Open(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for path, size := range map[string]uint64{"d/keep": 99, "plain.txt": 6} {
		a, err := fsys.LookupPath(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		ref, ok, err := fsys.Virtual(ctx, a.Ino)
		if err != nil || !ok {
			t.Fatalf("%s: virtual %v, %v", path, ok, err)
		}
		if path == "plain.txt" {
			ref.Node[0] ^= 0xff // no such revision
		}
		if _, err := fsys.SetVirtual(ctx, a.Ino, ref, size, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	out, code := hgfsCmd(t, "fsck", cache)
	if code != 1 || !strings.Contains(out, "d/keep: virtual file of 99 bytes names d/keep@") || !strings.Contains(out, "plain.txt: virtual file names plain.txt@") {
		t.Errorf("hgfs fsck: exit %d\n%s", code, out)
	}
}
