//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

func hgfsCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Hgfs(t), args...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hgfs %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

func fsckClean(t *testing.T, cache string) {
	t.Helper()
	if out, code := hgfsCmd(t, "fsck", cache); code != 0 {
		t.Fatalf("hgfs fsck %s: exit %d\n%s", cache, code, out)
	}
}

// TestMountCommand mounts a new cache in the background with the real
// binary, uses it with hg, reads stats, unmounts, fscks and remounts.
func TestMountCommand(t *testing.T) {
	testenv.HgPath(t)
	cache := filepath.Join(t.TempDir(), "cache") // created by mount
	mp := testenv.MountCache(t, cache)
	testenv.Hg(t, mp, "init", "r")
	r := filepath.Join(mp, "r")
	if err := os.WriteFile(filepath.Join(r, "f"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, r, "commit", "-Am", "one", "-d", "0 0")
	log := testenv.Hg(t, r, "log", "--debug")

	out, code := hgfsCmd(t, "stats", mp)
	if code != 0 || !strings.Contains(out, "source: "+cache+" (cache)") || !strings.Contains(out, "\ncommit queue capacity (inodes): ") || !strings.Contains(out, "\nindex commits: ") || strings.Contains(out, "e+") {
		t.Fatalf("hgfs stats: exit %d\n%s", code, out)
	}
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	if out, code := hgfsCmd(t, "mount", cache, mp); code != 255 || !strings.Contains(out, "already an hgfs mount") {
		t.Fatalf("mounting twice: exit %d\n%s", code, out)
	}
	// An open file keeps the mount busy: unmount refuses, and says so.
	busy, err := os.Open(filepath.Join(r, "f"))
	if err != nil {
		t.Fatal(err)
	}
	out, code = hgfsCmd(t, "unmount", mp)
	busy.Close()
	if code != 255 || !strings.Contains(out, "busy") {
		t.Fatalf("hgfs unmount with a file open: exit %d\n%s", code, out)
	}
	if out, code := hgfsCmd(t, "unmount", mp); code != 0 {
		t.Fatalf("hgfs unmount: exit %d\n%s", code, out)
	}
	if testenv.IsMounted(mp) {
		t.Fatalf("still mounted after hgfs unmount")
	}
	if !mount.ProcessExited(info.Pid) {
		t.Fatalf("daemon %d still running after hgfs unmount", info.Pid)
	}
	fsckClean(t, cache)

	logFile := filepath.Join(t.TempDir(), "mount.log")
	mp = testenv.MountCache(t, cache, "--log", logFile)
	if _, err := os.Stat(logFile); err != nil {
		t.Errorf("--log: %v", err)
	}
	r = filepath.Join(mp, "r")
	if got := testenv.Hg(t, r, "log", "--debug"); !bytes.Equal(got, log) {
		t.Fatalf("log after remount:\n%s\nwant\n%s", got, log)
	}
	testenv.Hg(t, r, "verify", "-q")

	if out, code := hgfsCmd(t, "stats", t.TempDir()); code != 255 || !strings.Contains(out, "is not an hgfs mount") {
		t.Errorf("stats of a plain directory: exit %d %q", code, out)
	}
	if out, code := hgfsCmd(t, "unmount", t.TempDir()); code != 255 || !strings.Contains(out, "is not an hgfs mount") {
		t.Errorf("unmount of a plain directory: exit %d %q", code, out)
	}
}

// TestMountForegroundSIGTERM: a foreground mount drains and unmounts on
// SIGTERM and exits 0; the data is there on the next mount.
func TestMountForegroundSIGTERM(t *testing.T) {
	testenv.RequireFUSE(t)
	cache, mp := filepath.Join(t.TempDir(), "cache"), t.TempDir()
	cmd, out, exited := startMount(t, "--foreground", cache, mp)
	waitMounted(t, mp, exited)
	want := map[string]string{}
	for i := 0; i < 50; i++ {
		name := fmt.Sprintf("f%02d", i)
		want[name] = strings.Repeat(name, i*100)
		if err := os.WriteFile(filepath.Join(mp, name), []byte(want[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatalf("hgfs mount --foreground after SIGTERM: %v\n%s", err, out.Bytes())
	}
	if testenv.IsMounted(mp) {
		t.Fatalf("still mounted after SIGTERM")
	}
	fsckClean(t, cache)
	mp = testenv.MountCache(t, cache)
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(mp, name))
		if err != nil || string(got) != data {
			t.Fatalf("%s after remount: %d bytes, %v", name, len(got), err)
		}
	}
}

// TestMountInterruptedWhileWaiting: SIGINT to "hgfs mount" while it waits
// for its daemon to report makes it stop the daemon (which unmounts if it
// got that far) and exit, instead of waiting for as long as the daemon
// serves. The wait lasts a few tens of ms, so the signal goes at several
// delays; each run must end with the command exited and nothing mounted.
func TestMountInterruptedWhileWaiting(t *testing.T) {
	testenv.RequireFUSE(t)
	for i, delay := range []time.Duration{0, 10, 20, 30, 40, 60, 80} {
		cache, mp := filepath.Join(t.TempDir(), "cache"), t.TempDir()
		cmd, out, exited := startMount(t, cache, mp)
		time.Sleep(delay * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		var err error
		select {
		case err = <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d (SIGINT after %d ms): hgfs mount still running 30 s later\n%s", i, delay, out.Bytes())
		}
		// Either it was interrupted (nothing may stay mounted) or it had
		// already returned 0 with the daemon serving (unmount that).
		if testenv.IsMounted(mp) {
			if err != nil {
				t.Errorf("run %d (SIGINT after %d ms): interrupted (%v), yet %s is mounted\n%s", i, delay, err, mp, out.Bytes())
			}
			testenv.UnmountCache(t, mp)
		}
	}
}

// startMount starts "hgfs mount ARGS..." (the real binary; the last
// argument is the mountpoint) with its output in out; exited delivers the
// command's exit. Whatever is still mounted there is unmounted when the
// test ends.
func startMount(t *testing.T, args ...string) (cmd *exec.Cmd, out *bytes.Buffer, exited <-chan error) {
	t.Helper()
	mp := args[len(args)-1]
	cmd = exec.Command(testenv.Hgfs(t), append([]string{"mount", "--create"}, args...)...)
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- cmd.Wait() }()
	t.Cleanup(func() {
		if testenv.IsMounted(mp) {
			testenv.UnmountCache(t, mp)
		}
	})
	return cmd, out, ch
}

// waitMounted polls until the daemon answers on mp (its stats file reads).
func waitMounted(t *testing.T, mp string, exited <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("mount daemon exited: %v", err)
		default:
		}
		if _, err := mount.ReadInfo(mp); err == nil {
			return
		}
	}
	t.Fatalf("%s was not mounted within 30s", mp)
}

// removeDeadMount waits for the killed mount daemon pid to exit, then
// removes its dead mount at mp lazily.
func removeDeadMount(t *testing.T, pid int, mp string) {
	t.Helper()
	for !mount.ProcessExited(pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if out, err := exec.Command("fusermount3", "-u", "-z", mp).CombinedOutput(); err != nil {
		t.Fatalf("fusermount3 -u -z: %v\n%s", err, out)
	}
}

// TestMountCrash kills the daemon with SIGKILL while a writer runs: the
// dead mount is removed lazily, fsck finds the cache clean, everything
// fsynced before the crash is there, and no file is torn.
func TestMountCrash(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	mp := testenv.MountCache(t, cache)
	info, err := mount.ReadInfo(mp)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mp, "synced"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("durable\n")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The writer is another process, so this one holds nothing open on
	// the mount when it dies; it stops at the first failed write.
	writer := exec.Command("sh", "-c", `i=0; while [ $i -lt 1000000 ]; do printf 'data%d\n' $i > f$i || exit 0; i=$((i+1)); done`)
	writer.Dir = mp
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(mp, "f20")); err == nil || i > 3000 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let the writer get going
	syscall.Kill(info.Pid, syscall.SIGKILL)
	writer.Wait()
	removeDeadMount(t, info.Pid, mp)
	fsckClean(t, cache)

	mp = testenv.MountCache(t, cache)
	if got, err := os.ReadFile(filepath.Join(mp, "synced")); err != nil || string(got) != "durable\n" {
		t.Fatalf("fsynced file after crash: %q %v", got, err)
	}
	ents, err := os.ReadDir(mp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "f%d", &n); err != nil {
			continue
		}
		got, err := os.ReadFile(filepath.Join(mp, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(got); s != "" && s != fmt.Sprintf("data%d\n", n) {
			t.Errorf("%s torn after crash: %q", e.Name(), s)
		}
	}
	t.Logf("%d files survived the crash", len(ents))
}

// TestMountRepoCommand mounts an ordinary repository read-only.
func TestMountRepoCommand(t *testing.T) {
	testenv.HgPath(t)
	repo := t.TempDir()
	testenv.Hg(t, repo, "init")
	os.WriteFile(filepath.Join(repo, "a"), []byte("a\n"), 0o644)
	testenv.Hg(t, repo, "commit", "-Am", "a", "-d", "0 0")
	mp := testenv.MountCache(t, repo)
	if got, want := testenv.Hg(t, mp, "log", "--debug"), testenv.Hg(t, repo, "log", "--debug"); !bytes.Equal(got, want) {
		t.Fatalf("log through the view:\n%s\nwant\n%s", got, want)
	}
	out, code := hgfsCmd(t, "stats", mp)
	if code != 0 || !strings.Contains(out, "source: "+repo+" (repo)") {
		t.Fatalf("stats: %d\n%s", code, out)
	}
}

func TestMountErrors(t *testing.T) {
	_, stderr, code := dispatchRun(t, "mount", t.TempDir())
	if code != 255 || !strings.Contains(stderr, "invalid arguments") {
		t.Errorf("one argument: %d %q", code, stderr)
	}
	_, stderr, code = dispatchRun(t, "mount", "--foreground", t.TempDir(), filepath.Join(t.TempDir(), "missing"))
	if code != 255 || !strings.Contains(stderr, "abort: mount point") {
		t.Errorf("missing mount point: %d %q", code, stderr)
	}
}

// TestMountDamagedIndexSIGTERM: a mount whose index has a damaged page
// (the readdir-order bucket's root page, zeroed after a clean unmount):
// the tree reads (nothing reads that page until a commit), a change's
// commit meets the page, panics inside bbolt and takes the index out of
// service, and SIGTERM still unmounts and ends the daemon.
func TestMountDamagedIndexSIGTERM(t *testing.T) {
	testenv.RequireFUSE(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fsys, err := fsnode.Create(cache, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		p := fmt.Sprintf("d%d/f%02d", i%5, i)
		if _, err := fsys.MkdirAll(context.Background(), filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(context.Background(), p, []byte(strings.Repeat(p, i*20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cache, "index.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var page uint64
	db.View(func(tx *bolt.Tx) error {
		page = uint64(tx.Bucket([]byte("dirseq")).RootPage())
		return nil
	})
	db.Close()
	if page == 0 {
		t.Fatal("the dirseq bucket is inline")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(b[page*4096 : (page+1)*4096])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	mp := t.TempDir()
	cmd, out, exited := startMount(t, "--foreground", cache, mp)
	waitMounted(t, mp, exited)
	find := exec.Command("timeout", "60", "find", mp)
	if findOut, err := find.CombinedOutput(); err != nil {
		t.Errorf("find on the mount: %v\n%s", err, findOut)
	}
	if err := os.WriteFile(filepath.Join(mp, "d0", "new"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(mp, "d0", "new"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err == nil {
		t.Error("fsync of a change whose commit meets the damaged page succeeded")
	}
	f.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if testenv.IsMounted(mp) {
			t.Errorf("still mounted after SIGTERM (exit %v)", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("hgfs mount still running 30 s after SIGTERM\n%s", out.Bytes())
	}
	if !strings.Contains(out.String(), "recovered panic") || !strings.Contains(out.String(), "taken out of service") {
		t.Errorf("the daemon logged no recovered panic or no index taken out of service:\n%s", out.Bytes())
	}
}
