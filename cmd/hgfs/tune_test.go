package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/testenv"
)

// hgfsTuned runs the hgfs binary in hg's test environment with
// HGFS_TUNE set to value (which testenv.HgEnv drops, as every HG*
// variable).
func hgfsTuned(t *testing.T, value, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testenv.Hgfs(t), args...)
	cmd.Env = append(testenv.HgEnv(), tune.EnvVar+"="+value)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hgfs %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), 0
}

// TestTuneWarning: a malformed or unknown HGFS_TUNE entry is a warning
// at start-up naming it and the known tricks; the command still runs.
// Every trick's name alone is accepted silently.
func TestTuneWarning(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := hgfsTuned(t, "-uring,-bogus,yield=2", dir, "--version")
	if code != 0 {
		t.Fatalf("hgfs --version with a bad HGFS_TUNE: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"hgfs: warning: HGFS_TUNE: ignoring", `"-bogus" (unknown trick)`, `"yield=2" (the value must be 0 or 1)`, strings.Join(tune.Names(), ", ")} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	all := "-" + strings.Join(tune.Names(), ",-")
	if _, stderr, code := hgfsTuned(t, all, dir, "--version"); code != 0 || stderr != "" {
		t.Errorf("HGFS_TUNE=%s: exit %d, stderr %q", all, code, stderr)
	}
}

// TestTuneHelp: hgfs help lists HGFS_TUNE and every trick's name.
func TestTuneHelp(t *testing.T) {
	stdout, stderr, code := hgfsIn(t.TempDir(), "help")
	if code != 0 {
		t.Fatalf("hgfs help: exit %d\n%s", code, stderr)
	}
	_, env, ok := strings.Cut(stdout, "\nenvironment:\n")
	if !ok || !strings.Contains(env, tune.EnvVar) {
		t.Fatalf("hgfs help has no environment section naming %s:\n%s", tune.EnvVar, stdout)
	}
	for _, name := range tune.Names() {
		if !strings.Contains(env, name) {
			t.Errorf("hgfs help's environment section does not name %s:\n%s", name, env)
		}
	}
}

// TestTuneBundleWalkFork: hgfs bundle -t v2 (a stream of the store,
// walked under the lock) writes the same bytes with every trick on and
// with the walk serial and without io_uring (-walkfork,-uring).
func TestTuneBundleWalkFork(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 1,000-file repository")
	}
	repo := testenv.Generate(t, testenv.Large(1000)) // 8 fncache chunks: the walk forks
	dir := t.TempDir()
	var bundles [][]byte
	for i, value := range []string{"", "-walkfork,-uring"} {
		out := filepath.Join(dir, []string{"default.hg", "tuned.hg"}[i])
		if _, stderr, code := hgfsTuned(t, value, dir, "-R", repo, "bundle", "-t", "v2", out); code != 0 {
			t.Fatalf("HGFS_TUNE=%s hgfs bundle: exit %d\n%s", value, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, b)
	}
	if !bytes.Equal(bundles[0], bundles[1]) {
		t.Errorf("the bundle with -walkfork,-uring (%d bytes) differs from the default (%d bytes)", len(bundles[1]), len(bundles[0]))
	}
}

// TestTuneServeWalkFork: hgfs serve sends the same stream_out with
// every trick on and with the walk serial and without io_uring.
func TestTuneServeWalkFork(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 1,000-file repository")
	}
	repo := testenv.Generate(t, testenv.Large(1000))
	var streams [][]byte
	for _, value := range []string{"", "-walkfork,-uring"} {
		cmd := exec.Command(testenv.Hgfs(t), "serve", "-R", repo, "-p", "0")
		cmd.Env = append(testenv.HgEnv(), tune.EnvVar+"="+value)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
		line, err := bufio.NewReader(stdout).ReadString('\n')
		m := listeningRe.FindStringSubmatch(line)
		if err != nil || m == nil {
			t.Fatalf("HGFS_TUNE=%s hgfs serve printed %q (%v)", value, line, err)
		}
		go io.Copy(io.Discard, stdout)
		resp, err := http.Get("http://127.0.0.1:" + m[1] + "/?cmd=stream_out")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.HasPrefix(b, []byte("0\n")) {
			t.Fatalf("HGFS_TUNE=%s stream_out: %s, %d bytes starting %q, %v", value, resp.Status, len(b), b[:min(len(b), 20)], err)
		}
		streams = append(streams, b)
	}
	if !bytes.Equal(streams[0], streams[1]) {
		t.Errorf("stream_out with -walkfork,-uring (%d bytes) differs from the default (%d bytes)", len(streams[1]), len(streams[0]))
	}
}

// TestTuneUnbundleApplyFork: hgfs unbundle of the real-history corpus
// bundle writes the same store with the file groups on workers (the
// default) and on the command's goroutine (-applyfork), and hg verify
// accepts it.
func TestTuneUnbundleApplyFork(t *testing.T) {
	bundle := testenv.Corpus(t, testenv.CorpusHistory)
	dir := t.TempDir()
	var stores []map[string]string
	for i, value := range []string{"", "-applyfork"} {
		repo := filepath.Join(dir, []string{"default", "tuned"}[i])
		testenv.Hg(t, dir, "init", repo)
		if _, stderr, code := hgfsTuned(t, value, dir, "-R", repo, "unbundle", "-q", bundle); code != 0 {
			t.Fatalf("HGFS_TUNE=%s hgfs unbundle: exit %d\n%s", value, code, stderr)
		}
		testenv.Hg(t, repo, "verify", "-q")
		stores = append(stores, storeFiles(t, repo, notUndo))
	}
	sameStores(t, stores[0], stores[1], "-applyfork")
}

// TestTuneCloneHTTP: hgfs clone --stream from hg serve writes the same
// store with every trick on, with the response read by the applier
// itself (-readahead), with its bound at its most from the start
// (-readaheadgrow), and with the kernel's delayed acknowledgements
// (-quickack), and hg verify accepts each.
func TestTuneCloneHTTP(t *testing.T) {
	url := testenv.Serve(t, testenv.CorpusRepo(t, testenv.CorpusHistory))
	dir := t.TempDir()
	values := []string{"", "-readahead", "-readaheadgrow", "-quickack"}
	var stores []map[string]string
	for i, value := range values {
		repo := filepath.Join(dir, fmt.Sprint("clone", i))
		if _, stderr, code := hgfsTuned(t, value, dir, "clone", "-q", "--stream", "-U", url, repo); code != 0 {
			t.Fatalf("HGFS_TUNE=%s hgfs clone --stream: exit %d\n%s", value, code, stderr)
		}
		testenv.Hg(t, repo, "verify", "-q")
		stores = append(stores, storeFiles(t, repo, notUndo))
	}
	if len(stores[0]) < 100 {
		t.Fatalf("the clone's store holds %d files", len(stores[0]))
	}
	for i := 1; i < len(values); i++ {
		sameStores(t, stores[0], stores[i], values[i])
	}
}

// notUndo leaves out the undo files of a transaction.
func notUndo(rel string) bool { return !strings.HasPrefix(path.Base(rel), "undo") }

// sameStores reports every difference between the store written with
// the default tricks and the one written with tuned (HGFS_TUNE's value).
func sameStores(t *testing.T, def, tunedStore map[string]string, tuned string) {
	t.Helper()
	if len(def) != len(tunedStore) {
		t.Errorf("%d store files with the default tricks, %d with %s", len(def), len(tunedStore), tuned)
	}
	for name, data := range def {
		if tunedStore[name] != data {
			t.Errorf("%s differs with %s", name, tuned)
		}
	}
}

// TestTuneCheckout: a clone's checkout and updates between revisions
// give hg's working copy with every trick on and with the recycled
// buffers and the checkout's GC setting off (-bufpool,-checkoutgc): a
// history of edits to one file (a delta chain rebuilt per revision)
// beside files of their own.
func TestTuneCheckout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	testenv.Hg(t, dir, "init", src)
	text := strings.Repeat("a line of the edited file\n", 400)
	for i := range 40 {
		p := (i * 7919) % (len(text) - 8)
		text = text[:p] + fmt.Sprintf("%08d", i) + text[p+8:]
		if err := os.WriteFile(filepath.Join(src, "edited.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(src, fmt.Sprintf("d%d", i%3)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("d%d/f%d.txt", i%3, i)), []byte(strings.Repeat(fmt.Sprintf("file %d\n", i), i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Hg(t, src, "commit", "-q", "-A", "-u", "test", "-d", fmt.Sprintf("%d 0", i), "-m", fmt.Sprint(i))
	}
	theirs := filepath.Join(dir, "hg")
	testenv.Hg(t, dir, "clone", "-q", src, theirs)
	for i, value := range []string{"", "-bufpool,-checkoutgc"} {
		mine := filepath.Join(dir, fmt.Sprintf("hgfs%d", i))
		if _, stderr, code := hgfsTuned(t, value, dir, "clone", "-q", src, mine); code != 0 {
			t.Fatalf("HGFS_TUNE=%s hgfs clone: exit %d\n%s", value, code, stderr)
		}
		for step, rev := range []string{"tip", "7", "null", "23", "tip"} {
			if step > 0 { // the clone checked out tip
				if _, stderr, code := hgfsTuned(t, value, dir, "-R", mine, "update", "-q", rev); code != 0 {
					t.Fatalf("HGFS_TUNE=%s hgfs update %s: exit %d\n%s", value, rev, code, stderr)
				}
			}
			testenv.Hg(t, theirs, "update", "-q", rev)
			if g, w := testenv.WorkingCopy(t, mine), testenv.WorkingCopy(t, theirs); g != w {
				t.Fatalf("HGFS_TUNE=%s, update %s: working copy differs:\n%s", value, rev, testenv.Diff("hg", w, "hgfs", g))
			}
			if out := testenv.Hg(t, mine, "status"); len(out) != 0 {
				t.Errorf("HGFS_TUNE=%s, update %s: hg status:\n%s", value, rev, out)
			}
		}
	}
}

// TestTuneCloneMountIngestGC: hgfs clone --mount of real history gives
// the same store and working copy with the collector paced (ingestgc,
// the default) and at GOGC as set (-ingestgc), and the paced clone
// collects fewer times (the runtime's gctrace lines on its stderr; the
// mount daemon's go to its log).
func TestTuneCloneMountIngestGC(t *testing.T) {
	testenv.RequireFUSE(t)
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	dir := t.TempDir()
	var stores []map[string]string
	var trees []string
	var gcs []int
	for i, value := range []string{"", "-ingestgc"} {
		mp, cache := filepath.Join(dir, fmt.Sprint("mnt", i)), filepath.Join(dir, fmt.Sprint("cache", i))
		cmd := exec.Command(testenv.Hgfs(t), "clone", "-q", "--mount", "--cache", cache, src, mp)
		cmd.Env = append(testenv.HgEnv(), tune.EnvVar+"="+value, "GODEBUG=gctrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		t.Cleanup(func() { testenv.UnmountCache(t, mp) })
		if err != nil {
			t.Fatalf("HGFS_TUNE=%s hgfs clone --mount: %v\n%s", value, err, stderr.Bytes())
		}
		n := 0
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "gc ") {
				n++
			}
		}
		gcs = append(gcs, n)
		testenv.Hg(t, mp, "verify", "-q")
		if st := testenv.Hg(t, mp, "status"); len(st) > 0 {
			t.Errorf("HGFS_TUNE=%s: hg status:\n%s", value, st)
		}
		stores = append(stores, storeFiles(t, mp, notUndo))
		trees = append(trees, testenv.WorkingCopy(t, mp))
	}
	if len(stores[0]) < 100 {
		t.Fatalf("the clone's store holds %d files", len(stores[0]))
	}
	sameStores(t, stores[0], stores[1], "-ingestgc")
	if trees[0] != trees[1] {
		t.Errorf("working copies differ:\n%s", testenv.Diff("default", trees[0], "-ingestgc", trees[1]))
	}
	if gcs[1] == 0 || gcs[0] >= gcs[1] {
		t.Errorf("garbage collections: %d paced, %d at GOGC as set; want fewer paced", gcs[0], gcs[1])
	}
}

// TestTuneCloneMountIngestSizes clones into a cache with and without
// the sizes learnt from the stream (worktree.Sizes), without the files
// deferred to their directories' first look (fsnode's vdir.go), and
// without inodes evicted during the ingest (fsnode.Options.IngestEvict,
// which the small queue-size makes evict here), from real history and
// from a generated repository with copies, renames, empty files, a file
// starting with the metadata marker, a symlink and an exec bit: each
// trick did its work where it was on, and the four virtual working
// copies, their dirstates (hg debugstate, without dates) and hg status
// agree.
func TestTuneCloneMountIngestSizes(t *testing.T) {
	testenv.RequireFUSE(t)
	rich := testenv.Rich
	rich.Obsolete, rich.History, rich.NoSecret = false, true, true
	for name, src := range map[string]string{
		"corpus": testenv.CorpusRepo(t, testenv.CorpusHistory),
		"rich":   testenv.Generate(t, rich),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var states, trees []string
			for i, value := range []string{"", "-ingestsizes", "-deferdirs", "-ingestevict"} {
				mp, cache := filepath.Join(dir, fmt.Sprint("mnt", i)), filepath.Join(dir, fmt.Sprint("cache", i))
				cmd := exec.Command(testenv.Hgfs(t), "clone", "--debug", "--config", "hgfs.queue-size=64", "--mount", "--cache", cache, src, mp)
				cmd.Env = append(testenv.HgEnv(), tune.EnvVar+"="+value)
				out, err := cmd.CombinedOutput()
				t.Cleanup(func() { testenv.UnmountCache(t, mp) })
				if err != nil {
					t.Fatalf("HGFS_TUNE=%s hgfs clone --mount: %v\n%s", value, err, out)
				}
				var learnt, deferred int
				for _, l := range strings.Split(string(out), "\n") {
					if n, ok := strings.CutSuffix(l, " working file sizes learnt from the stream"); ok {
						learnt, _ = strconv.Atoi(n)
					}
					if n, ok := strings.CutSuffix(l, " working files deferred to their directories' first look"); ok {
						deferred, _ = strconv.Atoi(n)
					}
				}
				if (learnt == 0) != (value == "-ingestsizes") {
					t.Errorf("HGFS_TUNE=%s: %d sizes learnt from the stream:\n%s", value, learnt, out)
				}
				if (deferred == 0) != (value == "-deferdirs") {
					t.Errorf("HGFS_TUNE=%s: %d working files deferred:\n%s", value, deferred, out)
				}
				if st := testenv.Hg(t, mp, "status"); len(st) > 0 {
					t.Errorf("HGFS_TUNE=%s: hg status:\n%s", value, st)
				}
				states = append(states, string(testenv.Hg(t, mp, "debugstate", "--no-dates")))
				trees = append(trees, testenv.WorkingCopy(t, mp))
			}
			for i, off := range []string{"-ingestsizes", "-deferdirs", "-ingestevict"} {
				if states[0] != states[i+1] {
					t.Errorf("dirstates differ:\n%s", testenv.Diff("default", states[0], off, states[i+1]))
				}
				if trees[0] != trees[i+1] {
					t.Errorf("working copies differ:\n%s", testenv.Diff("default", trees[0], off, trees[i+1]))
				}
			}
		})
	}
}

// TestTuneCloneDirIngestGC: a stream clone of real history into a
// directory gives the same store with the collector paced (ingestgc,
// dirApplyHeap) and at GOGC as set. (At this size the live heap stays
// under the pacer's floor, so both aim at about the runtime's 4 MB
// start: gcpace's own tests check the pace.)
func TestTuneCloneDirIngestGC(t *testing.T) {
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	bundle := filepath.Join(t.TempDir(), "stream.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", bundle)
	dir := t.TempDir()
	var stores []map[string]string
	for i, value := range []string{"", "-ingestgc"} {
		dest := filepath.Join(dir, fmt.Sprint("clone", i))
		cmd := exec.Command(testenv.Hgfs(t), "clone", "-q", "-U", bundle, dest)
		cmd.Env = append(testenv.HgEnv(), tune.EnvVar+"="+value)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("HGFS_TUNE=%s hgfs clone: %v\n%s", value, err, out)
		}
		testenv.Hg(t, dest, "verify", "-q")
		stores = append(stores, storeFiles(t, dest, notUndo))
	}
	if len(stores[0]) < 100 {
		t.Fatalf("the clone's store holds %d files", len(stores[0]))
	}
	sameStores(t, stores[0], stores[1], "-ingestgc")
}
