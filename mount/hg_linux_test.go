//go:build linux

package mount

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// hgScript makes the same history in any directory: adds, an executable,
// a symlink, edits, a rename, a removal, updates back and forth. Dates are
// fixed, so the same script gives the same node hashes everywhere. It
// returns an error rather than failing the test, so that it can run on a
// goroutine.
func hgScript(dir string) error {
	r := filepath.Join(dir, "repo")
	steps := []func() error{
		func() error { return hgRun(dir, "init", "repo") },
		func() error { return os.MkdirAll(filepath.Join(r, "dir", "sub"), 0o755) },
		func() error { return os.WriteFile(filepath.Join(r, "a.txt"), []byte("alpha\n"), 0o644) },
		func() error {
			return os.WriteFile(filepath.Join(r, "dir", "b.txt"), bytes.Repeat([]byte("beta line\n"), 2000), 0o644)
		},
		func() error {
			return os.WriteFile(filepath.Join(r, "dir", "sub", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
		},
		func() error { return os.Symlink("a.txt", filepath.Join(r, "link")) },
		func() error { return hgRun(r, "commit", "-qAm", "first", "-d", "0 0") },
		func() error { return os.WriteFile(filepath.Join(r, "a.txt"), []byte("alpha\nmore\n"), 0o644) },
		func() error { return hgRun(r, "mv", "dir/b.txt", "dir/c.txt") },
		func() error { return hgRun(r, "commit", "-m", "second", "-d", "1 0") },
		func() error { return hgRun(r, "rm", "link") },
		func() error { return hgRun(r, "commit", "-m", "third", "-d", "2 0") },
		func() error { return hgRun(r, "update", "-q", "0") },
		func() error { return hgRun(r, "update", "-q", "tip") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// hgRun runs hg in dir, for at most five minutes (as testenv.Hg).
func hgRun(dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "hg", testenv.HgArgs(dir, args...)...)
	cmd.Env = testenv.HgEnv()
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no result in 5m, killed (%v)", err)
		}
		return fmt.Errorf("hg %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

const logTemplate = "{rev}:{node} {p1node} {p2node} {manifest} {branch} {date|hgdate} {author} {files} {file_adds} {file_dels} {desc}\n"

// hgScriptOn runs hgScript in m and on the native file system at once,
// and checks that hg log --debug, status --all and verify agree. It
// returns the native repository, the mount's, the native log and the
// comparison it used, for the caller's further checks.
func hgScriptOn(t *testing.T, m *testMount) (nr, mr string, nativeLog []byte, same func(dir string, args []string, want []byte)) {
	t.Helper()
	testenv.HgPath(t)
	native := t.TempDir()
	nativeDone := make(chan error, 1)
	go func() { nativeDone <- hgScript(native) }()
	// The native run is waited for either way: it must not outlive the
	// test and write into its removed temporary directory.
	mountErr, nativeErr := hgScript(m.mp), <-nativeDone
	if mountErr != nil {
		t.Fatal(mountErr)
	}
	if nativeErr != nil {
		t.Fatal(nativeErr)
	}
	nr, mr = filepath.Join(native, "repo"), m.path("repo")
	same = func(dir string, args []string, want []byte) {
		t.Helper()
		if got := testenv.Hg(t, dir, args...); !bytes.Equal(got, want) {
			t.Errorf("hg %s in %s differs:\n--- native\n%s--- mount\n%s", strings.Join(args, " "), dir, want, got)
		}
	}
	nativeLog = testenv.Hg(t, nr, "log", "--debug")
	same(mr, []string{"log", "--debug"}, nativeLog)
	same(mr, []string{"status", "--all"}, testenv.Hg(t, nr, "status", "--all"))
	testenv.Hg(t, mr, "verify", "-q")
	return nr, mr, nativeLog, same
}

// TestHg runs real hg inside the mount and compares its view with the same
// history made on the native filesystem.
func TestHg(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: about 30 hg runs")
	}
	m := newMount(t)
	nr, mr, nativeLog, sameLog := hgScriptOn(t, m)
	nativeLogT := testenv.Hg(t, nr, "log", "-T", logTemplate)

	// Clones into the mount: by pull (changegroup application), by hg's
	// local copy of the store files, and streamed.
	testenv.Hg(t, m.mp, "clone", "-q", "--pull", nr, "pulled")
	testenv.Hg(t, m.mp, "clone", "-q", "--noupdate", nr, "copied")
	testenv.Hg(t, m.mp, "clone", "-q", "--stream", "--noupdate", testenv.Serve(t, nr), "streamed")
	for _, c := range []string{"pulled", "copied", "streamed"} {
		cr := m.path(c)
		testenv.Hg(t, cr, "verify", "-q")
		// Not --debug: a clone from a publishing repository is public.
		sameLog(cr, []string{"log", "-T", logTemplate}, nativeLogT)
	}
	if got, want := readFile(t, m.path("pulled", "dir", "c.txt")), readFile(t, filepath.Join(nr, "dir", "c.txt")); got != want {
		t.Errorf("checked-out file differs")
	}

	// Everything survives an unmount, a close of the cache and a remount.
	m.remount(t)
	sameLog(mr, []string{"log", "--debug"}, nativeLog)
	testenv.Hg(t, m.path("pulled"), "verify", "-q")

	// And a read-only view of the native repository agrees too.
	view := t.TempDir()
	srv, err := MountRepo(nr, view, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	})
	sameLog(view, []string{"log", "--debug"}, nativeLog)
	// (hg verify needs the store lock, which a read-only view refuses.)
	if got, want := testenv.Hg(t, view, "cat", "-r", "1", "dir/c.txt"), testenv.Hg(t, nr, "cat", "-r", "1", "dir/c.txt"); !bytes.Equal(got, want) {
		t.Errorf("hg cat through the repository view differs")
	}
	if err := os.WriteFile(filepath.Join(view, ".hg", "x"), nil, 0o644); err == nil {
		t.Errorf("writing into the read-only view succeeded")
	}
	if info, err := ReadInfo(view); err != nil || info.Kind != "repo" || info.Source != nr {
		t.Errorf("view info %+v, %v", info, err)
	}
	if ents, _ := os.ReadDir(view); len(ents) != 1 || ents[0].Name() != ".hg" {
		t.Errorf("view root lists %v, want only .hg", ents)
	}
}

// TestTools copies a tree in with cp -a and checks that cat, cmp, find,
// du, stat and tar see the same names, sizes, modes and times as on the
// native filesystem, before and after a remount.
func TestTools(t *testing.T) {
	m := newMount(t)
	src := t.TempDir()
	makeTree(t, src)
	run(t, "cp", "-a", src, m.path("tree"))
	check := func() {
		t.Helper()
		dst := m.path("tree")
		run(t, "diff", "-r", "--no-dereference", src, dst)
		for _, args := range [][]string{
			{"sh", "-c", `find . -printf '%P %y %m %n %T@ %l\n' | sort`},
			{"sh", "-c", `find . ! -type d -printf '%P %s\n' | sort`},
			{"tar", "--sort=name", "--numeric-owner", "-cvvf", "/dev/null", "."},
			{"sh", "-c", "find . ! -type d -print0 | sort -z | du -b --files0-from=-"},
			{"sh", "-c", "find . -type f | sort | xargs stat -c '%n %s %a %h %Y %F'"},
			{"sh", "-c", "find . -type f | sort | xargs cat | md5sum"},
			{"sh", "-c", "ls -laR --time-style=+%s . | awk '$1 !~ /^(d|total)/ {print $1, $2, $5, $6, $7}'"},
		} {
			want, got := runIn(t, src, args...), runIn(t, dst, args...)
			if want != got {
				t.Errorf("%s differs:\n--- native\n%s--- mount\n%s", strings.Join(args, " "), want, got)
			}
		}
		filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				rel, _ := filepath.Rel(src, p)
				run(t, "cmp", p, filepath.Join(dst, rel))
			}
			return nil
		})
	}
	check()
	m.remount(t)
	check()
}

// makeTree writes a small tree with the shapes a repository store has:
// nested directories, empty and large files, modes, a symlink.
func makeTree(t *testing.T, dir string) {
	t.Helper()
	for i := 0; i < 40; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%d", i%5), fmt.Sprintf("e%d", i%3))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{byte('a' + i%26)}, i*i*37)
		mode := os.FileMode(0o644)
		if i%7 == 0 {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.i", i)), data, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d0/e0/f0.i", filepath.Join(dir, "sym")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// runIn runs a command in dir, which may be on a mount this process
// serves (see testenv.Command), and returns its combined output.
func runIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := testenv.Command(dir, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}
