//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// watchRig is a repository of two changesets, 0 and 1, each writing
// content(rev, f) to every file of files, and a cache mount of it; env
// ("NAME=value" or "") is in the environment of every hgfs it runs, the
// mount's daemon included.
type watchRig struct {
	t       *testing.T
	hg      testenv.Mercurial
	bin     string
	env     string
	src, mp string
	cache   string
}

func newWatchRig(t *testing.T, files []string, content func(rev int, f string) string) *watchRig {
	t.Helper()
	return newWatchRigEnv(t, "", files, content)
}

func newWatchRigEnv(t *testing.T, env string, files []string, content func(rev int, f string) string) *watchRig {
	t.Helper()
	testenv.RequireFUSE(t)
	g := &watchRig{t: t, hg: testenv.Mercurials(t)[0], bin: testenv.Hgfs(t), env: env}
	dir := t.TempDir()
	g.src, g.mp, g.cache = filepath.Join(dir, "src"), filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	g.hg.Run(t, "", "init", g.src)
	for rev := range 2 {
		for _, f := range files {
			g.write(g.src, f, content(rev, f))
		}
		g.hg.Run(t, g.src, "commit", "-q", "-A", "-m", fmt.Sprint("r", rev), "-u", "t", "-d", fmt.Sprint(rev, " 0"))
	}
	if out, code := g.run("clone", "-q", "--mount", "--cache", g.cache, g.src, g.mp); code != 0 {
		t.Fatalf("hgfs clone --mount: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { testenv.UnmountCache(t, g.mp) })
	return g
}

// write writes content to name under root, making its directories.
func (g *watchRig) write(root, name, content string) {
	g.t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.t.Fatal(err)
	}
	writeFile(g.t, p, content)
}

// run runs hgfs and returns its output and exit code.
func (g *watchRig) run(args ...string) (string, int) {
	g.t.Helper()
	return runHgfs(g.t, g.bin, g.env, args...)
}

// update runs hgfs update on the mount, which must succeed.
func (g *watchRig) update(args ...string) {
	g.t.Helper()
	if out, code := g.run(append([]string{"-R", g.mp, "update", "-q"}, args...)...); code != 0 {
		g.t.Fatalf("hgfs update %v: exit %d\n%s", args, code, out)
	}
}

// path is working file name in the mount.
func (g *watchRig) path(name string) string { return filepath.Join(g.mp, filepath.FromSlash(name)) }

// TestDaemonUpdateWatch: between its updates the daemon watches the
// working copy (mount/update_watch_linux.go), and an update after one of
// its own looks only at what changed. Every kind of change to a tracked
// file made through the mount after such an update is found by the next
// one, which refuses as the update through the files does, without
// looking at every file (hgfs stats counts the updates that did); a
// change that touches no tracked file (in .hg, in an untracked
// directory, an extended attribute) lets it go ahead; a dirstate hg
// wrote, and a new daemon, have it look at every file again.
func TestDaemonUpdateWatch(t *testing.T) {
	t.Parallel()
	g := newWatchRig(t, []string{"a", "top", "d/b", "d/e/c", "d/e/f/g"}, func(rev int, f string) string {
		if rev == 1 && f != "top" {
			return f + " at 1, longer\n"
		}
		return f + " at 0\n"
	})
	hg, mp, cache, run, update, write, p := g.hg, g.mp, g.cache, g.run, g.update, g.write, g.path
	counts := func() (updates, full int64) {
		t.Helper()
		info, err := mount.ReadInfo(mp)
		if err != nil {
			t.Fatal(err)
		}
		return info.Updates, info.UpdateFullChecks
	}
	// clean brings the working copy to 0 and has the daemon watch it.
	clean := func() {
		t.Helper()
		update("-C", "0")
		update("1")
		update("0")
	}
	do := func(f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}

	// tidy removes what the cases leave that is not tracked.
	tidy := func() {
		for _, name := range []string{"d/moved", "d/e2", "hl", "d3"} {
			os.RemoveAll(p(name))
		}
		if fi, err := os.Lstat(p("d/e")); err == nil && !fi.IsDir() {
			os.Remove(p("d/e"))
		}
	}
	clean()
	if _, full := counts(); full != 1 {
		t.Fatalf("after the first update, %d updates looked at every file, want 1 (the first)", full)
	}
	for _, c := range []struct {
		name   string
		change func() error
		dirty  string // the file hg status names
		full   bool   // the root changed: every file is looked at
	}{
		{"write", func() error { return os.WriteFile(p("a"), []byte("changed\n"), 0o644) }, "a", false},
		{"append in a subdirectory", func() error {
			f, err := os.OpenFile(p("d/e/f/g"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString("more\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, "d/e/f/g", false},
		{"truncate", func() error { return os.Truncate(p("d/e/c"), 0) }, "d/e/c", false},
		{"chmod +x", func() error { return os.Chmod(p("d/b"), 0o755) }, "d/b", false},
		{"remove", func() error { return os.Remove(p("d/b")) }, "d/b", false},
		{"rename away", func() error { return os.Rename(p("d/e/c"), p("d/moved")) }, "d/e/c", false},
		{"rename over", func() error {
			if err := os.WriteFile(p("d/new"), []byte("other\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(p("d/new"), p("d/b"))
		}, "d/b", false},
		{"directory renamed and remade", func() error {
			if err := os.Rename(p("d/e"), p("d/e2")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(mp, "d", "e"), []byte("a file now\n"), 0o644)
		}, "d/e/c", false},
		{"write through a hard link", func() error {
			if err := os.Link(p("d/e/f/g"), p("hl")); err != nil {
				return err
			}
			return os.WriteFile(p("hl"), []byte("through the link\n"), 0o644)
		}, "d/e/f/g", true},
		{"directory renamed in the root", func() error { return os.Rename(p("d"), p("d3")) }, "d/b", true},
	} {
		tidy()
		clean()
		_, full := counts()
		do(c.change)
		if st := string(hg.Run(t, mp, "status")); !strings.Contains(st, c.dirty+"\n") {
			t.Fatalf("%s: hg status does not name %s:\n%s", c.name, c.dirty, st)
		}
		out, code := run("-R", mp, "update", "1")
		if code == 0 || !strings.Contains(out, "uncommitted changes") {
			t.Errorf("%s: the update after it did not refuse: exit %d\n%s", c.name, code, out)
		}
		if _, now := counts(); now-full != map[bool]int64{true: 1}[c.full] {
			t.Errorf("%s: %d updates looked at every file, want %t", c.name, now-full, c.full)
		}
	}

	// Changes to no tracked file: the update goes ahead, looking only at
	// what changed.
	// (A directory made in the root changes the root, which has the next
	// update look at every file: it is made before.)
	tidy()
	do(func() error { return os.MkdirAll(p("untracked/dir"), 0o755) })
	clean()
	updates, full := counts()
	write(mp, ".hg/unrelated", "x\n")
	write(mp, "untracked/dir/file", "x\n")
	do(func() error { return syscall.Setxattr(p("d/b"), "user.note", []byte("x"), 0) })
	update("1")
	if u, f := counts(); u != updates+1 || f != full {
		t.Errorf("after changes to no tracked file: %d updates by the daemon, %d looking at every file; want 1, 0", u-updates, f-full)
	}
	if st := string(hg.Run(t, mp, "status")); st != "? untracked/dir/file\n" {
		t.Errorf("hg status after the update:\n%s", st)
	}

	// A dirstate hg wrote: every file is looked at.
	hg.Run(t, mp, "debugrebuilddirstate")
	update("0")
	if _, f := counts(); f != full+1 {
		t.Errorf("after hg rewrote the dirstate: %d updates looked at every file, want 1", f-full)
	}
	// A new daemon: the same.
	testenv.UnmountCache(t, mp)
	mp = testenv.MountCache(t, cache)
	g.mp = mp
	update("1")
	if _, f := counts(); f != 1 {
		t.Errorf("the first update of a new daemon: %d looked at every file, want 1", f)
	}
}

// TestDaemonUpdateWatchRandom: after random changes through the mount
// to a working copy the daemon watches, its next update refuses exactly
// when hg status finds a tracked file modified or missing, and when it
// goes ahead, hg status and the files are the target's.
//
// Every file's first revision has a length of its own. hg status judges
// a file by its size and its mtime's second: one moved over another of
// the same size, both written by the same update (and so in the same
// second), is clean to it, natively too, and stays in place through
// update -C; the daemon judges as hg does. The seed
// 6597850930755595104 did that when two files had the same length.
func TestDaemonUpdateWatchRandom(t *testing.T) {
	t.Parallel()
	daemonUpdateWatchRandom(t, "")
}

// TestDaemonUpdateWatchRandomNoPools is TestDaemonUpdateWatchRandom with
// a daemon that reuses no buffer between updates (HGFS_TUNE=-bufpool).
func TestDaemonUpdateWatchRandomNoPools(t *testing.T) {
	t.Parallel()
	daemonUpdateWatchRandom(t, "HGFS_TUNE=-bufpool")
}

func daemonUpdateWatchRandom(t *testing.T, env string) {
	files := []string{"a", "b", "d/c", "d/e/f", "d/e/g", "x/y/z"}
	first := func(f string) string { return f + strings.Repeat("+", slices.Index(files, f)) + "\n" }
	g := newWatchRigEnv(t, env, files, func(rev int, f string) string {
		if rev == 1 && slices.Index(files, f)%2 == 0 {
			return f + " at 1\n"
		}
		return first(f)
	})
	hg, mp, run, update, p := g.hg, g.mp, g.run, g.update, g.path
	ref := filepath.Join(t.TempDir(), "ref")
	hg.Run(t, "", "clone", "-q", "-r", "1", g.src, ref)
	names := append(slices.Clone(files), "new", "d/new", "d/e/new")
	ops := []func(rng *rand.Rand) string{
		func(rng *rand.Rand) string { // rewrite, maybe with the same bytes
			f := files[rng.IntN(len(files))]
			content := first(f)
			if rng.IntN(2) == 0 {
				content = "changed " + f + "\n"
			}
			os.WriteFile(p(f), []byte(content), 0o644)
			return "write " + f
		},
		func(rng *rand.Rand) string {
			f := files[rng.IntN(len(files))]
			now := time.Now()
			os.Chtimes(p(f), now, now)
			return "touch " + f
		},
		func(rng *rand.Rand) string {
			f := files[rng.IntN(len(files))]
			os.Chmod(p(f), []os.FileMode{0o755, 0o644}[rng.IntN(2)])
			return "chmod " + f
		},
		func(rng *rand.Rand) string {
			f := files[rng.IntN(len(files))]
			os.Remove(p(f))
			return "rm " + f
		},
		func(rng *rand.Rand) string {
			a, b := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
			os.Rename(p(a), p(b))
			return "mv " + a + " " + b
		},
		func(rng *rand.Rand) string {
			d := []string{"d", "d/e", "x", "x/y"}[rng.IntN(4)]
			os.Rename(p(d), p(d+".moved"))
			return "mv " + d
		},
		func(rng *rand.Rand) string {
			f := names[rng.IntN(len(names))]
			os.WriteFile(p(f)+".tmp", []byte("other\n"), 0o644)
			os.Rename(p(f)+".tmp", p(f))
			return "replace " + f
		},
		func(rng *rand.Rand) string {
			f := files[rng.IntN(len(files))]
			os.Truncate(p(f), int64(rng.IntN(3)))
			return "truncate " + f
		},
		func(rng *rand.Rand) string {
			f := files[rng.IntN(len(files))]
			syscall.Setxattr(p(f), "user.x", []byte("1"), 0)
			return "setxattr " + f
		},
		func(rng *rand.Rand) string {
			os.WriteFile(p(".hg/scratch"), []byte("x"), 0o644)
			return "write .hg/scratch"
		},
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 7))
	for round := range 25 {
		// Back to a clean 0 the daemon watches, without leftovers.
		update("-C", "0")
		hg.Run(t, mp, "--config", "extensions.purge=", "purge", "-q", "--all")
		update("-C", "0")
		update("1")
		update("0")
		var did []string
		for range 1 + rng.IntN(3) {
			did = append(did, ops[rng.IntN(len(ops))](rng))
		}
		st := string(hg.Run(t, mp, "status", "-m", "-d"))
		out, code := run("-R", mp, "update", "-q", "1")
		if refused := code != 0; refused != (st != "") {
			t.Fatalf("round %d, after %q: hg status -m -d says\n%s\nhgfs update 1: exit %d\n%s", round, did, st, code, out)
		}
		if code == 0 {
			for _, f := range files {
				got, _ := os.ReadFile(p(f))
				want, _ := os.ReadFile(filepath.Join(ref, filepath.FromSlash(f)))
				if string(got) != string(want) {
					t.Fatalf("round %d, after %q: %s is %q after the update, want %q", round, did, f, got, want)
				}
			}
			if s := string(hg.Run(t, mp, "status", "-m", "-a", "-r", "-d")); s != "" {
				t.Fatalf("round %d, after %q: hg status after the update:\n%s", round, did, s)
			}
		}
	}
}
