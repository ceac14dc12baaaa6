package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// TestCloneMount clones from a real hg serve straight into a cache with
// the real binary, then uses the mounted repository with real hg:
// verify, log, bookmarks, update, commit; then unmounts, checks the cache
// and mounts it again.
func TestCloneMount(t *testing.T) {
	testenv.RequireFUSE(t)
	src := filepath.Join(t.TempDir(), "src")
	testenv.Hg(t, "", "init", src)
	for i, name := range []string{"README", "Upper_Case.txt", "dir/sub/file.c", ".hidden"} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755)
		os.WriteFile(filepath.Join(src, name), bytes.Repeat([]byte(name+"\n"), 10*(i+1)), 0o644)
	}
	testenv.Hg(t, src, "commit", "-qAm", "one")
	testenv.Hg(t, src, "bookmark", "book")
	os.WriteFile(filepath.Join(src, "README"), []byte("changed\n"), 0o644)
	testenv.Hg(t, src, "commit", "-qm", "two")
	url := testenv.Serve(t, src)

	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	cmd := exec.Command(bin, "clone", "--mount", "--cache", cache, url, mp)
	cmd.Env = testenv.HgEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	for _, want := range []string{"streaming all changes\n", "files to transfer", "mounting " + mp} {
		if !strings.Contains(string(out), want) {
			t.Errorf("clone output lacks %q:\n%s", want, out)
		}
	}
	if !testenv.IsMounted(mp) {
		t.Fatalf("%s is not mounted after clone --mount", mp)
	}

	// The oracle: real hg's own stream clone of the same server.
	ref := filepath.Join(dir, "ref")
	testenv.Hg(t, "", "clone", "-q", "--stream", "-U", url, ref)
	testenv.Hg(t, mp, "verify", "-q")
	for _, args := range [][]string{{"log", "--debug"}, {"bookmarks"}, {"phase", "-r", "all()"}} {
		if got, want := testenv.Hg(t, mp, args...), testenv.Hg(t, ref, args...); !bytes.Equal(got, want) {
			t.Errorf("hg %s differs:\nmount:\n%s\nhg's clone:\n%s", strings.Join(args, " "), got, want)
		}
	}
	testenv.Hg(t, mp, "update", "-q", "book")
	if b, err := os.ReadFile(filepath.Join(mp, "dir/sub/file.c")); err != nil || !bytes.HasPrefix(b, []byte("dir/sub/file.c\n")) {
		t.Fatalf("working copy through the mount: %q %v", b, err)
	}
	os.WriteFile(filepath.Join(mp, "new.txt"), []byte("new\n"), 0o644)
	testenv.Hg(t, mp, "commit", "-qAm", "three")
	testenv.Hg(t, mp, "verify", "-q")

	testenv.UnmountCache(t, mp)
	if rep, err := fsnode.Fsck(cache, false); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("fsck after unmount: %v %+v", err, rep)
	}
	mp2 := testenv.MountCache(t, cache)
	if got := testenv.Hg(t, mp2, "log", "-r", "tip", "-T", "{desc}"); string(got) != "three" {
		t.Errorf("after remount tip is %q", got)
	}
}

// TestCloneMountFailure: a clone that fails leaves no cache and no mount.
func TestCloneMountFailure(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bad.hg")
	os.WriteFile(bundle, []byte("HGS1UN\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x10\x00"), 0o644)
	mp, cache := filepath.Join(dir, "mnt"), filepath.Join(dir, "cache")
	var out, errb bytes.Buffer
	code := run([]string{"clone", "--mount", "--cache", cache, bundle, mp}, strings.NewReader(""), &out, &errb)
	if code != 255 || !strings.HasPrefix(errb.String(), "abort: ") {
		t.Fatalf("bad bundle: exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("failed clone left the cache behind: %v", err)
	}
	if testenv.IsMounted(mp) {
		t.Errorf("failed clone mounted %s", mp)
	}
}

// TestCloneMountFailureGatedDaemon: the real binary starts its mount daemon
// while the clone runs (gated, see startDaemon); a clone that fails must
// leave no daemon behind, no cache and no mount.
func TestCloneMountFailureGatedDaemon(t *testing.T) {
	testenv.RequireFUSE(t)
	bin := testenv.Hgfs(t)
	for _, existing := range []bool{false, true} {
		dir := t.TempDir()
		bundle := filepath.Join(dir, "bad.hg")
		// A packed1 bundle announcing five files and 4 KiB, then nothing.
		os.WriteFile(bundle, []byte("HGS1UN\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x10\x00"), 0o644)
		// A mountpoint whose parents the clone must create, or an
		// existing empty one.
		mp, cache := filepath.Join(dir, "new", "deep", "mnt"), filepath.Join(dir, "cache")
		if existing {
			mp = filepath.Join(dir, "mnt")
			os.Mkdir(mp, 0o755)
		}
		cmd := exec.Command(bin, "clone", "--mount", "--cache", cache, bundle, mp)
		cmd.Env = testenv.HgEnv()
		out, err := cmd.CombinedOutput()
		if code, _ := exitCode(err); code != 255 || !strings.Contains(string(out), "abort: ") {
			t.Fatalf("bad bundle: %v, output %q", err, out)
		}
		if _, err := os.Stat(cache); !os.IsNotExist(err) {
			t.Errorf("failed clone left the cache behind: %v", err)
		}
		if testenv.IsMounted(mp) {
			t.Errorf("failed clone mounted %s", mp)
		}
		if pids := daemonsFor(t, cache); len(pids) > 0 {
			t.Errorf("failed clone left mount daemons for %s running: pids %v", cache, pids)
		}
		if existing {
			if ents, err := os.ReadDir(mp); err != nil || len(ents) != 0 {
				t.Errorf("existing mountpoint not left empty: %v %v", ents, err)
			}
		} else if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
			t.Errorf("failed clone left the directories it made for the mountpoint: %v", err)
		}
	}
}

// daemonsFor lists the processes running "mount --foreground ... CACHE".
func daemonsFor(t *testing.T, cache string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 3 && args[1] == "mount" && args[2] == "--foreground" && slices.Contains(args, cache) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}
