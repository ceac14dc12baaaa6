package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// zlibEncodings is a generated repository with zlib revlogs, a split
// (.i + .d) revlog and file names exercising every store encoding rule.
var zlibEncodings = testenv.Spec{Files: 3, Revisions: 2, Compression: "zlib", BigFile: true, Encodings: true}

func TestCloneZlibEncodings(t *testing.T) {
	src := testenv.Generate(t, zlibEncodings)
	dir := t.TempDir()
	url := testenv.Serve(t, src)
	dest := filepath.Join(dir, "hgfs")
	stdout, stderr, code := hgfsClone(t, dir, "-U", "--stream", url, dest)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	testenv.Hg(t, dir, "clone", "-q", "-U", "--stream", url, filepath.Join(dir, "hg"))
	got, want := repoState(t, dest, true), repoState(t, filepath.Join(dir, "hg"), false)
	if got != want {
		t.Errorf("clone differs from hg's:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
}

// fakeServer serves a stream clone the way hg serve does (capabilities,
// heads, getbundle with a stream bundle) but delivers only the first part
// of the bundle, then either ends the response (truncated) or holds it
// open until released (a stalled transfer to interrupt).
type fakeServer struct {
	caps, heads string
	bundle      []byte
	cut         int
	hold        bool
	started     chan struct{} // closed once the partial body is sent
	release     chan struct{}
	once        sync.Once
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Query().Get("cmd") {
	case "capabilities":
		w.Header().Set("Content-Type", "application/mercurial-0.1")
		io.WriteString(w, f.caps)
	case "heads":
		w.Header().Set("Content-Type", "application/mercurial-0.1")
		io.WriteString(w, f.heads+"\n")
	case "getbundle":
		w.Header().Set("Content-Type", "application/mercurial-0.2")
		w.Write([]byte("\x04none"))
		w.Write(f.bundle[:f.cut])
		w.(http.Flusher).Flush()
		f.once.Do(func() { close(f.started) })
		if f.hold {
			select {
			case <-f.release:
			case <-r.Context().Done():
			case <-time.After(60 * time.Second):
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// newFakeServer prepares a fake server for the stream of src.
func newFakeServer(t *testing.T, src string, cut float64, hold bool) *httptest.Server {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "v2.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", bundle)
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	heads := strings.TrimSpace(string(testenv.Hg(t, src, "heads", "-T", "{node} ")))
	// hg serve advertises the stream's requirements wherever it streams.
	reqs, err := store.ReadRequirements(src)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{
		caps: "batch bundle2=HG20%0Abookmarks%0Alistkeys%0Aphases%3Dheads%0Astream%3Dv2 getbundle httpheader=1024 httpmediatype=0.1rx,0.1tx,0.2tx known lookup pushkey streamreqs=" +
			strings.Join(reqs.Streamed().List(), ","),
		heads:   heads,
		bundle:  data,
		cut:     int(float64(len(data)) * cut),
		hold:    hold,
		started: make(chan struct{}),
		release: make(chan struct{}),
	}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		close(f.release)
		srv.Close()
	})
	return srv
}

func TestCloneTruncatedStream(t *testing.T) {
	src := testenv.Generate(t, zlibEncodings)
	srv := newFakeServer(t, src, 0.6, false)
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	stdout, stderr, code := hgfsClone(t, dir, "--stream", srv.URL+"/", dest)
	if code != 255 || !strings.Contains(stderr, "stream ended unexpectedly") || !strings.HasPrefix(stderr, "abort: ") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "streaming all changes\n") || strings.Contains(stdout, "transferred") {
		t.Errorf("stdout %q", stdout)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
}

// TestCloneInterrupt sends SIGINT (Ctrl-C), SIGTERM or SIGHUP (the
// terminal closing) to a real hgfs process while the stream stalls
// halfway: it must stop, say "interrupted!" (SIGINT) or "killed!", exit
// 255 and remove what it created, leaving an existing empty destination
// empty.
func TestCloneInterrupt(t *testing.T) {
	src := testenv.Generate(t, zlibEncodings)
	bin := testenv.Hgfs(t)
	for _, tc := range []struct {
		sig      os.Signal
		existing bool
	}{{os.Interrupt, false}, {os.Interrupt, true}, {syscall.SIGTERM, false}, {syscall.SIGHUP, false}, {syscall.SIGHUP, true}} {
		existing := tc.existing
		t.Run(fmt.Sprintf("%v/existing=%v", tc.sig, existing), func(t *testing.T) {
			srv := newFakeServer(t, src, 0.5, true)
			dir := t.TempDir()
			dest := filepath.Join(dir, "dest")
			if existing {
				os.Mkdir(dest, 0o755)
			}
			cmd := exec.Command(bin, "clone", "--stream", "-U", srv.URL+"/", dest)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			f := srv.Config.Handler.(*fakeServer)
			select {
			case <-f.started:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("no getbundle request; %s%s", out.String(), errb.String())
			}
			// The client is now reading the stalled body (or about to):
			// wait until it has staged something, then interrupt.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(dest, ".hg.partial")); err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 255 {
				t.Errorf("exit: %v\n%s%s", err, out.String(), errb.String())
			}
			// hg's words: SIGINT interrupts, the others kill.
			want := "killed!\n"
			if tc.sig == os.Interrupt {
				want = "interrupted!\n"
			}
			if !strings.HasSuffix(errb.String(), want) {
				t.Errorf("stderr %q", errb.String())
			}
			entries, err := os.ReadDir(dest)
			switch {
			case existing && (err != nil || len(entries) != 0):
				t.Errorf("existing destination not left empty: %v %v", entries, err)
			case !existing && !os.IsNotExist(err):
				t.Errorf("destination left behind: %v %v", entries, err)
			}
		})
	}
}

func TestCloneProgress(t *testing.T) {
	t.Setenv("COLUMNS", "") // the bar's width is progress.width alone
	src := testenv.Generate(t, zlibEncodings)
	dir := t.TempDir()
	var o, e bytes.Buffer
	code := run([]string{"--cwd", dir, "--config", "progress.assume-tty=true", "--config", "progress.delay=0", "--config", "progress.width=60", "clone", src, "d"}, strings.NewReader(""), &o, &e)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, o.String(), e.String())
	}
	s := e.String()
	if !strings.HasPrefix(s, "\rclone ") || !strings.HasSuffix(s, "\r"+strings.Repeat(" ", 59)+"\r") {
		t.Errorf("progress output %q", s)
	}
	// -q: no bar, no status.
	o.Reset()
	e.Reset()
	code = run([]string{"--cwd", dir, "-q", "--config", "progress.assume-tty=true", "clone", src, "d2"}, strings.NewReader(""), &o, &e)
	if code != 0 || o.Len() != 0 || e.Len() != 0 {
		t.Errorf("-q: exit %d, %q %q", code, o.String(), e.String())
	}
	// Not a terminal: no bar.
	o.Reset()
	e.Reset()
	code = run([]string{"--cwd", dir, "clone", src, "d3"}, strings.NewReader(""), &o, &e)
	if code != 0 || e.Len() != 0 {
		t.Errorf("no tty: exit %d, %q", code, e.String())
	}
}

func TestFormatBytes(t *testing.T) {
	// Values from Mercurial's util.bytecount.
	for n, want := range map[float64]string{
		0: "0 bytes", 1: "1 bytes", 999: "999 bytes", 1023: "1023 bytes", 1024: "1.00 KB",
		1536: "1.50 KB", 10239: "10.00 KB", 10240: "10.0 KB", 102400: "100 KB", 1048575: "1024 KB",
		1048576: "1.00 MB", 5255225: "5.01 MB", 123456789: "118 MB", 1 << 30: "1.00 GB",
		150 << 30: "150 GB", 344164: "336 KB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%v) = %q, want %q", n, got, want)
		}
	}
}

// TestCloneLocalLock: a local clone takes the source's store lock as hg
// does, without waiting: it breaks a stale one, and pulls instead of
// copying when a live process holds it. A clone into a mount waits for
// a live one and gives up after ui.timeout.
func TestCloneLocalLock(t *testing.T) {
	dir := t.TempDir()
	src := testenv.CopyRepo(t, testenv.Generate(t, zlibEncodings))
	lock := filepath.Join(src, ".hg", "store", "lock")

	// Stale: this host, a pid that does not exist.
	if err := os.Symlink(store.LockPrefix()+":999999999", lock); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := hgfsClone(t, dir, "-U", src, "stale")
	if code != 0 {
		t.Fatalf("stale lock: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("lock left behind after the clone: %v", err)
	}

	// Live: held by this test process. hg does not wait: it pulls, which
	// reads without the lock.
	held := store.LockPrefix() + ":" + fmt.Sprint(os.Getpid())
	if err := os.Symlink(held, lock); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code = run([]string{"--cwd", dir, "--config", "ui.timeout=1", "clone", "-U", src, "live"}, strings.NewReader(""), &o, &e)
	if code != 0 || e.Len() != 0 || !strings.HasPrefix(o.String(), "requesting all changes\nadding changesets\n") {
		t.Errorf("live lock: exit %d\n%s%s", code, o.String(), e.String())
	}
	if cur, _ := os.Readlink(lock); cur != held {
		t.Errorf("someone else's lock was touched: %q", cur)
	}
	testenv.Hg(t, filepath.Join(dir, "live"), "verify", "-q")
	if got, want := testenv.Hg(t, filepath.Join(dir, "live"), "log", "-T", "{node} {phase}\n"), testenv.Hg(t, filepath.Join(dir, "stale"), "log", "-T", "{node} {phase}\n"); !bytes.Equal(got, want) {
		t.Errorf("pulled clone differs from the copied one:\n%s", testenv.Diff("copy", string(want), "pull", string(got)))
	}

	// A mount can only be filled by copying: it waits for the lock and
	// gives up after ui.timeout.
	o.Reset()
	e.Reset()
	code = run([]string{"--cwd", dir, "--config", "ui.timeout=1", "clone", "--mount", "--cache", filepath.Join(dir, "cache"), "-U", src, "mnt"}, strings.NewReader(""), &o, &e)
	host, pid, _ := strings.Cut(held, ":")
	want := fmt.Sprintf("waiting for lock on repository %s held by process '%s' on host '%s'\nabort: repository %s: timed out waiting for lock held by '%s'\n", src, pid, host, src, held)
	if code != 255 || e.String() != want {
		t.Errorf("live lock, --mount: exit %d\n%q\nwant\n%q", code, e.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "mnt", ".hg")); !os.IsNotExist(err) {
		t.Errorf("destination created: %v", err)
	}
}

// serveGetbundle starts a fake server whose getbundle reply is the bundle2
// that parts writes, and returns its URL.
func serveGetbundle(t *testing.T, parts func(*bundle2.Writer) error) string {
	t.Helper()
	srv := newFakeServer(t, testenv.Generate(t, zlibEncodings), 1, false)
	var b bytes.Buffer
	bw, err := bundle2.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := parts(bw); err != nil {
		t.Fatal(err)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	f := srv.Config.Handler.(*fakeServer)
	f.bundle, f.cut = b.Bytes(), b.Len()
	return srv.URL + "/"
}

// TestCloneServerAbort: a getbundle reply holding an error:abort part (a
// server refusing mid-request) reads as hg's pull failure.
func TestCloneServerAbort(t *testing.T) {
	url := serveGetbundle(t, func(bw *bundle2.Writer) error {
		return bw.WritePart("error:abort", true, []bundle2.Param{{Name: "message", Value: "stream data requested but server does not allow this feature"}},
			[]bundle2.Param{{Name: "hint", Value: "the client may be buggy"}}, nil)
	})
	dir := t.TempDir()
	_, stderr, code := hgfsClone(t, dir, "--stream", url, filepath.Join(dir, "d"))
	want := "remote: abort: stream data requested but server does not allow this feature\nabort: pull failed on remote\n(the client may be buggy)\n"
	if code != 255 || stderr != want {
		t.Errorf("exit %d\n%q\nwant\n%q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
}

func TestCloneNames(t *testing.T) {
	// hg.defaultdest's doctests, and ssh paths.
	for src, want := range map[string]string{
		"foo": "foo", "/foo/bar": "bar", "/": "", "": "", "http://example.org/": "",
		"http://example.org/foo/": "foo", "https://h:8000/a/b": "b", "ssh://h//abs/repo": "repo",
		"ssh://u@h:22/rel/r/": "r", "ssh://h": "", "file:///tmp/x": "x",
	} {
		if got := defaultDest(src); got != want {
			t.Errorf("defaultDest(%q) = %q, want %q", src, got, want)
		}
	}
	books, err := formatBookmarks(map[string]string{"b": strings.Repeat("a", 40), "a": strings.Repeat("b", 40)})
	if err != nil || books != strings.Repeat("b", 40)+" a\n"+strings.Repeat("a", 40)+" b\n" {
		t.Errorf("formatBookmarks: %q %v", books, err)
	}
	for _, bad := range []map[string]string{{"x\ny": strings.Repeat("a", 40)}, {"x": "nothex"}, {"": strings.Repeat("a", 40)}} {
		if _, err := formatBookmarks(bad); err == nil {
			t.Errorf("formatBookmarks(%q) accepted", bad)
		}
	}
}
