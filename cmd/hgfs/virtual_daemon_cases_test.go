//go:build linux

package main

// Cases of the daemon's hgfs update (mount/update_linux.go) found by
// review, each against hg and the update through the files
// (HGFS_TUNE=-daemonupdate): modes under a umask, status fixups, the
// mount's reserved name, an update stopped midway, directories'
// attributes.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// daemonRig is a source repository, a native clone and two cache mounts
// cloned -U: dm (updated by the daemon) and fm (HGFS_TUNE=-daemonupdate).
type daemonRig struct {
	t              *testing.T
	hg             testenv.Mercurial
	bin, src, ref  string
	dm, fm, dc, fc string
}

type daemonBuild struct {
	write  func(name, content string, perm os.FileMode)
	commit func(msg string)
	hg     func(args ...string)
}

func newDaemonRig(t *testing.T, build func(b daemonBuild)) *daemonRig {
	t.Helper()
	testenv.RequireFUSE(t)
	g := &daemonRig{t: t, hg: testenv.Mercurials(t)[0], bin: testenv.Hgfs(t)}
	dir := t.TempDir()
	g.src = filepath.Join(dir, "src")
	g.hg.Run(t, "", "init", g.src)
	n := 0
	build(daemonBuild{write: func(name, content string, perm os.FileMode) {
		p := filepath.Join(g.src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}, commit: func(msg string) {
		g.hg.Run(t, g.src, "commit", "-q", "-A", "-m", msg, "-u", "t", "-d", strings.Repeat("1", n+1)+" 0")
		n++
	}, hg: func(args ...string) { g.hg.Run(t, g.src, args...) }})
	g.ref = filepath.Join(dir, "ref")
	g.hg.Run(t, "", "clone", "-q", "-U", g.src, g.ref)
	g.dm, g.dc = filepath.Join(dir, "dm"), filepath.Join(dir, "dc")
	g.fm, g.fc = filepath.Join(dir, "fm"), filepath.Join(dir, "fc")
	for _, m := range [][2]string{{g.dc, g.dm}, {g.fc, g.fm}} {
		out, code := g.run("", "clone", "-q", "-U", "--mount", "--cache", m[0], g.src, m[1])
		mp := m[1]
		t.Cleanup(func() { testenv.UnmountCache(t, mp) })
		if code != 0 {
			t.Fatalf("hgfs clone --mount: exit %d\n%s", code, out)
		}
	}
	return g
}

func (g *daemonRig) run(env string, args ...string) (string, int) {
	return runHgfs(g.t, g.bin, env, args...)
}

// runHgfs runs hgfs binary bin with args, and env added to hg's test
// environment unless empty, and returns its output and exit code.
func runHgfs(t testing.TB, bin, env string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = testenv.HgEnv()
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// update moves the native clone with hg and both mounts with hgfs.
func (g *daemonRig) update(args ...string) {
	g.t.Helper()
	g.hg.Run(g.t, g.ref, append([]string{"update", "-q"}, args...)...)
	for _, m := range []struct{ mp, env string }{{g.dm, ""}, {g.fm, "HGFS_TUNE=-daemonupdate"}} {
		if out, code := g.run(m.env, append([]string{"-R", m.mp, "update", "-q"}, args...)...); code != 0 {
			g.t.Fatalf("hgfs -R %s update %v: exit %d\n%s", m.mp, args, code, out)
		}
	}
}

// Exec files the daemon creates get hg's mode under the umask: util.setflags
// adds x only where r is (0o750 under umask 026), not 0o777 &^ umask (0o751).
func TestDaemonUpdateUmaskExec(t *testing.T) {
	g := newDaemonRig(t, func(b daemonBuild) {
		b.write("a", "a\n", 0o644)
		b.commit("zero")
		b.write("run", "#!/bin/sh\n", 0o755)
		b.commit("one")
		b.write("a", "a\n", 0o755)
		b.commit("two: a executable")
		b.write("a", "a\n", 0o644)
		b.commit("three: a not executable")
	})
	g.update("0")
	old := syscall.Umask(0o026)
	defer syscall.Umask(old)
	mode := func(root, name string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	// A new executable file: x where r is, less the umask.
	g.update("1")
	for _, root := range []string{g.ref, g.fm, g.dm} {
		if m := mode(root, "run"); m != 0o750 {
			t.Errorf("%s/run: mode %o, want 750 (hg's)", root, m)
		}
	}
	// The exec flag alone (util.setflags on the file there, 0644 from
	// the first update): x added where r is, less the umask, then every
	// x taken away.
	for _, step := range []struct {
		rev  string
		want os.FileMode
	}{{"2", 0o755}, {"3", 0o644}} {
		rev, want := step.rev, step.want
		g.update(rev)
		for _, root := range []string{g.ref, g.fm, g.dm} {
			if m := mode(root, "a"); m != want {
				t.Errorf("update %s: %s/a: mode %o, want %o (hg's)", rev, root, m, want)
			}
		}
	}
}

// The update through the files (and hg) records what the dirty check
// learned of files it found clean by content (status fixups); the daemon
// keeps the old entry: x stays "n 0 -1 unset" after its flags-only change.
func TestDaemonUpdateFixups(t *testing.T) {
	g := newDaemonRig(t, func(b daemonBuild) {
		b.write("a", "a\n", 0o644)
		b.write("x", "x\n", 0o644)
		b.commit("zero")
		b.write("x", "x\n", 0o755)
		b.commit("one: x executable")
		b.write("a", "a changed\n", 0o644)
		b.commit("two: a changed")
	})
	g.update("0")
	time.Sleep(1100 * time.Millisecond)
	g.update("1") // x: flags only, "n 0 -1 unset"
	time.Sleep(2100 * time.Millisecond)
	g.update("2") // x unchanged: found clean by content, fixed up
	want := g.hg.Debugstate(t, g.ref)
	for _, m := range []string{g.fm, g.dm} {
		if got := g.hg.Debugstate(t, m); got != want {
			t.Errorf("%s: debugstate differs:\n%s", m, testenv.Diff("hg", want, "hgfs", got))
		}
	}
}

// A root name the mount reserves (.hgfs, its control directory) is
// refused by the update through the files; the daemon creates it in the
// cache, where it shadows the control directory for good.
func TestDaemonUpdateReservedName(t *testing.T) {
	g := newDaemonRig(t, func(b daemonBuild) {
		b.write("a", "a\n", 0o644)
		b.commit("zero")
		b.write(".hgfs/x", "x\n", 0o644)
		b.commit("one")
	})
	if out, code := g.run("", "-R", g.dm, "update", "-q", "0"); code != 0 {
		t.Fatalf("update 0: %s", out)
	}
	out, code := g.run("", "-R", g.dm, "update", "1")
	t.Logf("update 1 through the daemon: exit %d\n%s", code, out)
	os.ReadDir(g.dm) // READDIRPLUS hands the kernel the cache's .hgfs
	if _, err := mount.ReadInfo(g.dm); err != nil {
		t.Errorf("after the update the mount's control directory is gone: %v", err)
	}
}

// An update that fails midway leaves the working copy as an interrupted
// hg update does; hg status must not call a rewritten file clean. The
// files the daemon rewrites get the mtime (start-1) the previous update
// recorded when both run in one second, so the touched entries' mtimes
// must be forgotten first, as the update through the files does. The
// failure is a corrupt filelog of zzz, which sorts after f. Every try
// checks the status; the tries go on until one ran both updates in one
// second (nearly always the first; on a machine too slow for that the
// status was still checked each time).
func TestDaemonUpdateFailureStatus(t *testing.T) {
	g := newDaemonRig(t, func(b daemonBuild) {
		b.write("f", "aaaa\n", 0o644)
		b.write("zzz", "zzzz\n", 0o644)
		b.commit("zero")
		b.write("f", "bbbb\n", 0o644)
		b.hg("rm", "-q", "zzz")
		b.commit("one")
	})
	for try := 0; try < 10; try++ {
		// Start just after a second begins: both updates in that second.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
		sec := time.Now().Unix()
		if out, code := g.run("", "-R", g.dm, "update", "-q", "-C", "1"); code != 0 {
			t.Fatalf("update 1: %s", out)
		}
		zi := filepath.Join(g.dm, ".hg", "store", "data", "zzz.i")
		data, err := os.ReadFile(zi)
		if err != nil {
			t.Fatal(err)
		}
		good := append([]byte(nil), data...)
		data[len(data)-3] ^= 0xff
		if err := os.WriteFile(zi, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := g.run("", "-R", g.dm, "update", "0")
		same := time.Now().Unix() == sec
		if err := os.WriteFile(zi, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if code == 0 {
			t.Fatalf("update 0 with a corrupt filelog succeeded:\n%s", out)
		}
		got, _ := os.ReadFile(filepath.Join(g.dm, "f"))
		st := string(g.hg.Run(t, g.dm, "status", "f"))
		t.Logf("try %d: update 0 exit %d: %s; f is %q; status %q", try, code, strings.TrimSpace(out), got, st)
		if string(got) != "bbbb\n" && st == "" {
			t.Fatalf("f holds revision 0's %q under parent 1 and hg status calls it clean", got)
		}
		if same {
			return
		}
	}
	t.Log("no try ran both updates in one second")
}

// The daemon creates and removes directories behind the kernel's back;
// EntryNotify refreshes a directory's attributes only when the kernel had
// a dentry for the name, so the root's link count (and mtime) stay what
// the kernel cached, for nodeTimeout (an hour).
func TestDaemonUpdateDirAttrs(t *testing.T) {
	g := newDaemonRig(t, func(b daemonBuild) {
		b.write("a", "a\n", 0o644)
		b.commit("zero")
		b.write("n/new", "new\n", 0o644)
		b.commit("one")
	})
	g.update("0")
	nlink := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return uint64(st.Nlink)
	}
	before := nlink(g.dm)
	g.update("1")
	if got, want := nlink(g.dm), nlink(g.fm); got != want || got == before {
		t.Errorf("root link count after the daemon's update %d (before %d), through the files %d", got, before, want)
	}
}
