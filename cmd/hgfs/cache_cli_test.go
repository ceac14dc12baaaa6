//go:build linux

package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/testenv"
)

// TestDefaultCacheDir: the default name depends on the source and the
// mountpoint, and moves on to a free name when an earlier clone's cache
// is still there.
func TestDefaultCacheDir(t *testing.T) {
	base := t.TempDir()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Set("hgfs", "cache", base, "test")
	a, _ := defaultCacheDir(cfg, "http://a/repo", "/src/repo")
	b, _ := defaultCacheDir(cfg, "http://b/repo", "/src/repo")
	c, _ := defaultCacheDir(cfg, "http://a/repo", "/other/repo")
	if a == b || a == c || filepath.Dir(a) != base || !strings.HasPrefix(filepath.Base(a), "repo-") {
		t.Errorf("names %q %q %q", a, b, c)
	}
	if again, _ := defaultCacheDir(cfg, "http://a/repo", "/src/repo"); again != a {
		t.Errorf("not stable: %q then %q", a, again)
	}
	os.MkdirAll(a, 0o755)
	if same, _ := defaultCacheDir(cfg, "http://a/repo", "/src/repo"); same != a {
		t.Errorf("an empty directory is free: got %q", same)
	}
	os.WriteFile(filepath.Join(a, "index.db"), nil, 0o644)
	if next, _ := defaultCacheDir(cfg, "http://a/repo", "/src/repo"); next != a+"-2" {
		t.Errorf("after a used one: %q, want %q", next, a+"-2")
	}
}

// hgfsEnv runs the real binary with env added to hg's test environment.
func hgfsEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Hgfs(t), args...)
	cmd.Env = append(testenv.HgEnv(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hgfs %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// TestMountGuards: a missing cache needs --create, a non-empty
// mountpoint --allow-non-empty; stats prints words with units and -T
// json; a mount whose daemon was killed is cleared by hgfs unmount.
func TestMountGuards(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	cache, mp := filepath.Join(dir, "cache"), filepath.Join(dir, "mp")
	os.Mkdir(mp, 0o755)
	if out, code := hgfsCmd(t, "mount", cache, mp); code != 255 || !strings.Contains(out, "abort: cache "+cache+" does not exist\n(use --create") {
		t.Fatalf("missing cache: %d %s", code, out)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Fatal("a refused mount created the cache")
	}
	os.WriteFile(filepath.Join(mp, "hidden"), nil, 0o644)
	if out, code := hgfsCmd(t, "mount", "--create", cache, mp); code != 255 || !strings.Contains(out, "is not empty") || !strings.Contains(out, "--allow-non-empty") {
		t.Fatalf("non-empty mountpoint: %d %s", code, out)
	}
	if out, code := hgfsCmd(t, "mount", "--create", "--allow-non-empty", cache, mp); code != 0 {
		t.Fatalf("mount --create --allow-non-empty: %d %s", code, out)
	}
	t.Cleanup(func() {
		if testenv.IsMounted(mp) {
			testenv.UnmountCache(t, mp)
		}
	})
	out, code := hgfsCmd(t, "stats", mp)
	if code != 0 || !strings.Contains(out, "\nlive data: 0 bytes\n") || !strings.Contains(out, "\ninodes waiting to commit: ") {
		t.Errorf("stats: %d\n%s", code, out)
	}
	out, code = hgfsCmd(t, "stats", "-T", "json", mp)
	var info struct {
		Pid   int                        `json:"pid"`
		Stats map[string]json.RawMessage `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.Pid <= 0 || info.Stats["LiveBytes"] == nil {
		t.Fatalf("stats -T json: %d %v\n%s", code, err, out)
	}
	if out, code := hgfsCmd(t, "stats", "-T", "xml", mp); code != 255 || !strings.Contains(out, `template "xml" is not supported`) {
		t.Errorf("stats -T xml: %d %s", code, out)
	}

	// The daemon dies: the mount answers "transport endpoint is not
	// connected" until hgfs unmount clears it.
	if err := syscall.Kill(info.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(mp, ".hgfs", "stats")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mount still answers after its daemon was killed")
		}
	}
	if out, code := hgfsCmd(t, "unmount", mp); code != 0 || out != "unmounted "+mp+": its daemon had exited\n" {
		t.Fatalf("unmount of a dead mount: %d %q", code, out)
	}
	if testenv.IsMounted(mp) {
		t.Fatal("still mounted")
	}
	if _, err := os.Stat(filepath.Join(mp, "hidden")); err != nil {
		t.Errorf("the mountpoint's own file: %v", err)
	}
}

// TestCacheCommands: clone --mount into the default cache directory,
// list it (source, sizes, mountpoint), refuse to remove it while
// mounted, clone again to the same place after unmounting, then prune.
func TestCacheCommands(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, "", "init", src)
	// Incompressible, so that its revlog lands in a data file (live
	// data), not inline in the index.
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	os.WriteFile(filepath.Join(src, "f"), noise, 0o644)
	testenv.Hg(t, src, "commit", "-qAm", "one")
	base := filepath.Join(dir, "caches")
	rc := filepath.Join(dir, "hgrc")
	os.WriteFile(rc, []byte("[hgfs]\ncache = "+base+"\n"), 0o644)
	env := []string{"HGRCPATH=" + rc}
	mp := filepath.Join(dir, "mnt")
	t.Cleanup(func() {
		if testenv.IsMounted(mp) {
			testenv.UnmountCache(t, mp)
		}
	})

	list := func() []cacheEntry {
		t.Helper()
		out, code := hgfsEnv(t, env, "cache", "list", "-T", "json")
		var es []cacheEntry
		if err := json.Unmarshal([]byte(out), &es); code != 0 || err != nil {
			t.Fatalf("cache list -T json: %d %v\n%s", code, err, out)
		}
		return es
	}
	if es := list(); len(es) != 0 {
		t.Fatalf("caches before any clone: %+v", es)
	}
	for i := 1; i <= 2; i++ {
		if out, code := hgfsEnv(t, env, "clone", "--mount", src, mp); code != 0 {
			t.Fatalf("clone --mount #%d: %d\n%s", i, code, out)
		}
		es := list()
		if len(es) != i {
			t.Fatalf("after clone #%d: %d caches %+v", i, len(es), es)
		}
		var mounted *cacheEntry
		for j := range es {
			if len(es[j].MountedAt) > 0 {
				mounted = &es[j]
			}
		}
		if mounted == nil || mounted.MountedAt[0] != mp || mounted.Source != src || mounted.DiskBytes == 0 || mounted.LiveBytes == nil || *mounted.LiveBytes == 0 {
			t.Fatalf("after clone #%d: %+v", i, es)
		}
		if i == 1 {
			out, code := hgfsEnv(t, env, "cache", "list")
			if code != 0 || !strings.Contains(out, "  source:       "+src+"\n") || !strings.Contains(out, "  mounted at:   "+mp+"\n") || !strings.Contains(out, "  live data:    ") {
				t.Errorf("cache list: %d\n%s", code, out)
			}
			if out, code := hgfsEnv(t, env, "cache", "rm", mounted.Path); code != 255 || !strings.Contains(out, "is mounted at "+mp) {
				t.Errorf("cache rm of a mounted cache: %d %s", code, out)
			}
		}
		testenv.UnmountCache(t, mp)
	}
	es := list()
	if len(es) != 2 || es[0].Path == es[1].Path || len(es[0].MountedAt)+len(es[1].MountedAt) != 0 {
		t.Fatalf("two unmounted caches: %+v", es)
	}
	// A bare name is the cache of that name in the cache directory.
	name := filepath.Base(es[0].Path)
	if out, code := hgfsEnv(t, env, "cache", "list", name); code != 0 || !strings.HasPrefix(out, es[0].Path+"\n") {
		t.Errorf("cache list %s: %d\n%s", name, code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "gc", name); code != 0 || !strings.Contains(out, "live") {
		t.Errorf("cache gc %s: %d\n%s", name, code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "rm", "no-such-cache"); code != 255 || !strings.Contains(out, "no-such-cache is not an hgfs cache") {
		t.Errorf("cache rm of a name that is no cache: %d %s", code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "rm", dir); code != 255 || !strings.Contains(out, "is not an hgfs cache") {
		t.Errorf("cache rm of a directory that is no cache: %d %s", code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "prune"); code != 255 || !strings.Contains(out, "--unused-for") {
		t.Errorf("prune without --unused-for: %d %s", code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "prune", "--unused-for", "1d"); code != 0 || out != "" || len(list()) != 2 {
		t.Errorf("prune --unused-for 1d removed something: %d %s", code, out)
	}
	// Both were last used a moment ago.
	time.Sleep(10 * time.Millisecond)
	if out, code := hgfsEnv(t, env, "cache", "prune", "--unused-for", "1ms", "-n"); code != 0 || strings.Count(out, "would remove ") != 2 || len(list()) != 2 {
		t.Errorf("prune -n: %d %s", code, out)
	}
	if out, code := hgfsEnv(t, env, "cache", "prune", "--unused-for", "1ms"); code != 0 || strings.Count(out, "removed ") != 2 {
		t.Errorf("prune: %d %s", code, out)
	}
	if es := list(); len(es) != 0 {
		t.Errorf("after prune: %+v", es)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("left in the cache directory: %d entries", len(ents))
	}
}

// TestCacheMetaUntrusted: a damaged or oversized record is an error
// (listed as the cache's problem), and a later use replaces it.
func TestCacheMetaUntrusted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, cacheMetaName)
	for _, data := range [][]byte{[]byte("{not json"), []byte(`{"source": 5}`), make([]byte, maxCacheMeta+1)} {
		os.WriteFile(p, data, 0o644)
		if _, err := readCacheMeta(dir); err == nil {
			t.Errorf("record %.20q read without error", data)
		}
	}
	if err := updateCacheMeta(dir, func(m *cacheMeta) { m.Source = "s" }); err != nil {
		t.Fatal(err)
	}
	if m, err := readCacheMeta(dir); err != nil || m.Source != "s" {
		t.Errorf("after update: %+v %v", m, err)
	}
}
