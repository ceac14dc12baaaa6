package wireproto

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/testenv"
)

// startServer serves root on a loopback port until the test ends and
// returns the URL.
func startServer(t testing.TB, root string, cfg ServerConfig) string {
	t.Helper()
	srv, err := NewServer(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, srv)
}

// serveOn serves srv on a loopback port until the test ends and returns
// the URL.
func serveOn(t testing.TB, srv http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveListener(t, srv, ln)
}

// serveListener serves srv on ln until the test ends and returns the URL.
func serveListener(t testing.TB, srv http.Handler, ln net.Listener) string {
	t.Helper()
	hs := HTTPServer(srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		<-done
	})
	return "http://" + ln.Addr().String() + "/"
}

// testConfig is hg's default with a non-publishing repository (so phases
// travel) and secret changesets allowed (the generated History
// repositories have one).
func testConfig() ServerConfig {
	c := DefaultServerConfig()
	c.Publishing = false
	c.UncompressedAllowSecret = true
	c.LockTimeout = 5 * time.Second
	return c
}

var activeBookmark = regexp.MustCompile(`(?m)^ \* `)

// localTagLines matches "tag:" lines of hg log --debug; local tags
// (.hg/localtags) are not part of a clone.
var tagLine = regexp.MustCompile(`(?m)^tag: +(.*)\n`)

func dropLocalTags(t *testing.T, dir string, log []byte) []byte {
	local, _ := os.ReadFile(filepath.Join(dir, ".hg", "localtags"))
	names := map[string]bool{}
	for _, l := range strings.Split(string(local), "\n") {
		if _, name, ok := strings.Cut(l, " "); ok {
			names[strings.TrimSpace(name)] = true
		}
	}
	return tagLine.ReplaceAllFunc(log, func(m []byte) []byte {
		if names[string(tagLine.FindSubmatch(m)[1])] {
			return nil
		}
		return m
	})
}

// phaseLine matches hg log --debug's phase lines.
var phaseLine = regexp.MustCompile(`(?m)^phase: .*\n`)

// repoState is what a clone must reproduce: log with nodes, parents,
// manifests, files and extras; bookmarks; phases.
func repoState(t *testing.T, dir string) string {
	t.Helper()
	log := dropLocalTags(t, dir, testenv.Hg(t, dir, "log", "--debug", "--hidden"))
	books := activeBookmark.ReplaceAll(testenv.Hg(t, dir, "bookmarks"), []byte("   "))
	phases := testenv.Hg(t, dir, "phase", "--hidden", "-r", "all()")
	return fmt.Sprintf("%s\n--- bookmarks\n%s\n--- phases\n%s", log, books, phases)
}

// cloneFrom clones url into a new directory with real hg and checks it.
func cloneFrom(t *testing.T, url string, extra ...string) string {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "clone")
	args := append([]string{"clone", "--stream", "-U"}, extra...)
	args = append(args, url, dest)
	out := testenv.Hg(t, "", args...)
	if !bytes.Contains(out, []byte("streaming all changes")) {
		t.Fatalf("hg clone did not stream:\n%s", out)
	}
	testenv.Hg(t, dest, "verify", "-q")
	return dest
}

func TestCloneV2(t *testing.T) {
	specs := map[string]testenv.Spec{
		"small":     testenv.Small,
		"encodings": testenv.Encodings,
		"zlib":      testenv.Zlib,
		"obsolete":  testenv.Obsolete,
		"nostore":   testenv.OldLayouts()[len(testenv.OldLayouts())-1],
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			src := testenv.Generate(t, spec)
			url := startServer(t, src, testConfig())
			var extra []string
			if spec.Obsolete {
				// A client receives markers in a stream only with
				// obsolescence exchange enabled (else hg's server, and
				// hgfs's, abort).
				extra = []string{"--config", "experimental.evolution=all"}
			}
			if spec.Obsolete {
				// Without it, the markers cannot travel: hg's message.
				_, stderr, err := testenv.HgResult(t, "", "clone", "--stream", "-U", url, filepath.Join(t.TempDir(), "c"))
				if err == nil || !bytes.Contains(stderr, []byte(streamclone.ErrObsMarkersRefused.Msg)) {
					t.Errorf("clone without obsolescence exchange: %v\n%s", err, stderr)
				}
			}
			dest := cloneFrom(t, url, extra...)
			if want, got := repoState(t, src), repoState(t, dest); want != got {
				t.Fatalf("clone differs from source:\n%s", testenv.Diff("source", string(want), "clone", string(got)))
			}
			out := testenv.Hg(t, dest, "pull", url)
			if !bytes.Contains(out, []byte("no changes found")) {
				t.Errorf("pull after clone:\n%s", out)
			}
		})
	}
}

// TestCloneV1 clones with the legacy stream_out command. A v1 stream
// carries no phases (hg's own v1 clones come out all public too, which
// TestCompareWithHgServe checks), so only log and bookmarks are compared.
func TestCloneV1(t *testing.T) {
	for name, spec := range map[string]testenv.Spec{"small": testenv.Small, "encodings": testenv.Encodings} {
		t.Run(name, func(t *testing.T) {
			src := testenv.Generate(t, spec)
			url := startServer(t, src, testConfig())
			dest := cloneFrom(t, url, "--config", "devel.legacy.exchange=bundle1")
			for _, args := range [][]string{{"log", "--debug", "--hidden"}, {"bookmarks"}} {
				want := activeBookmark.ReplaceAll(testenv.Hg(t, src, args...), []byte("   "))
				want = phaseLine.ReplaceAll(dropLocalTags(t, src, want), nil)
				if got := phaseLine.ReplaceAll(testenv.Hg(t, dest, args...), nil); !bytes.Equal(want, got) {
					t.Errorf("hg %s differs:\n%s", args[0], testenv.Diff("source", string(want), "clone", string(got)))
				}
			}
			out := testenv.Hg(t, dest, "pull", "--config", "devel.legacy.exchange=bundle1", url)
			if !bytes.Contains(out, []byte("no changes found")) {
				t.Errorf("pull after clone:\n%s", out)
			}
		})
	}
}

func TestConcurrentClones(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	url := startServer(t, src, testConfig())
	want := string(testenv.Hg(t, src, "log", "--debug", "--hidden", "-T", "{rev}:{node} {p1node} {p2node} {manifest}\n"))
	var wg sync.WaitGroup
	dests := make([]string, 8)
	errs := make([]error, 8)
	base := t.TempDir()
	for i := range dests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dests[i] = filepath.Join(base, fmt.Sprint(i))
			args := []string{"clone", "--stream", "-U", url, dests[i]}
			if i%2 == 1 {
				args = append(args, "--config", "devel.legacy.exchange=bundle1")
			}
			_, stderr, err := testenv.HgResult(t, "", args...)
			if err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, stderr)
			}
		}()
	}
	wg.Wait()
	for i, d := range dests {
		if errs[i] != nil {
			t.Fatalf("clone %d: %v", i, errs[i])
		}
		testenv.Hg(t, d, "verify", "-q")
		if got := string(testenv.Hg(t, d, "log", "--debug", "--hidden", "-T", "{rev}:{node} {p1node} {p2node} {manifest}\n")); got != want {
			t.Errorf("clone %d differs:\n%s", i, testenv.Diff("source", want, "clone", got))
		}
	}
}

// rawGet sends a wire protocol request as hg's HTTP peer does.
func rawGet(t *testing.T, url, cmd string, args map[string]string, proto string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"?cmd="+cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) > 0 {
		for i, v := range splitHeaderValue(formEncode(args), "X-HgArg", 1024) {
			req.Header.Set(fmt.Sprintf("X-HgArg-%d", i+1), v)
		}
	}
	if proto != "" {
		req.Header.Set("X-HgProto-1", proto)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// payload returns a response's decoded body.
func payload(t *testing.T, resp *http.Response, compressible bool) []byte {
	t.Helper()
	major, minor, err := parseMediaVersion(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("%v (status %s)", err, resp.Status)
	}
	r, _, err := payloadReader(major, minor, resp.Body, compressible)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientBundle2Caps is what hg 6.3 sends as bundlecaps in a clone.
func clientBundle2Caps() string {
	caps := Bundle2Caps{"HG20": nil, "bookmarks": nil, "changegroup": {"01", "02"}, "digests": {"md5", "sha1", "sha512"},
		"error": {"abort", "unsupportedcontent", "pushraced", "pushkey"}, "hgtagsfnodes": nil, "listkeys": nil,
		"phases": {"heads"}, "pushkey": nil, "remote-changegroup": {"http", "https"}, "stream": {"v2"}, "obsmarkers": {"V0", "V1"}}
	return "HG20,bundle2=" + bundle2.Quote(caps.Encode())
}

// TestCompareWithHgServe compares hgfs serve's answers, byte for byte
// after decompression, with hg serve's on the same repository.
func TestCompareWithHgServe(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	os.WriteFile(filepath.Join(src, ".hg", "hgrc"), []byte("[phases]\npublish = false\n[server]\nuncompressedallowsecret = true\n"), 0o644)
	// Let hg write its caches first, so both serve the same files.
	testenv.Hg(t, src, "debugupdatecaches")
	hgURL := testenv.Serve(t, src)
	ours := startServer(t, src, testConfig())
	heads := strings.TrimSpace(string(payload(t, rawGet(t, hgURL, "heads", nil, ""), false)))
	tipNode := strings.TrimSpace(string(testenv.Hg(t, src, "log", "-r", "tip", "-T", "{node}")))
	cases := []struct {
		name, cmd    string
		args         map[string]string
		proto        string
		compressible bool
	}{
		{"heads", "heads", nil, "", false},
		{"known", "known", map[string]string{"nodes": heads + " " + strings.Repeat("1", 40)}, "", false},
		{"branchmap", "branchmap", nil, "", false},
		{"lookup", "lookup", map[string]string{"key": "tip"}, "", false},
		{"lookup-bad", "lookup", map[string]string{"key": "nosuchrev"}, "", false},
		{"bookmarks", "listkeys", map[string]string{"namespace": "bookmarks"}, "", false},
		{"phases", "listkeys", map[string]string{"namespace": "phases"}, "", false},
		{"namespaces", "listkeys", map[string]string{"namespace": "namespaces"}, "", false},
		{"batch", "batch", map[string]string{"cmds": "heads ;known nodes=" + tipNode + ";listkeys namespace=bookmarks"}, "", false},
		{"stream_out", "stream_out", nil, "", false},
		{"getbundle-stream-zlib", "getbundle", map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1",
			"common": NullHex, "heads": heads, "bookmarks": "1", "listkeys": "bookmarks"}, "", true},
		{"getbundle-stream-none", "getbundle", map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1",
			"common": NullHex, "heads": heads, "bookmarks": "1", "listkeys": "bookmarks"}, "0.1 0.2 comp=zstd,zlib,none", true},
		{"between", "between", map[string]string{"pairs": strings.Fields(heads)[0] + "-" + NullHex + " " + strings.Fields(heads)[0] + "-" + strings.Fields(heads)[0]}, "", false},
		{"branches", "branches", map[string]string{"nodes": heads}, "", false},
		{"batch-between", "batch", map[string]string{"cmds": "between pairs=" + strings.Fields(heads)[0] + "-" + NullHex + ";branches nodes="}, "", false},
		// (Without hgtagsfnodes, a cache part hgfs serve does not send;
		// without a listkeys part for phases, whose keys hg's
		// _getbundlelistkeysparts writes in set order, unsorted.)
		{"getbundle-pull-nothing-cg", "getbundle", map[string]string{"bundlecaps": strings.Replace(clientBundle2Caps(), "%0Ahgtagsfnodes", "", 1),
			"common": heads, "heads": heads, "bookmarks": "1", "phases": "1", "listkeys": "bookmarks"}, "0.1 0.2 comp=zstd,zlib,none", true},
		{"getbundle-pull-nothing", "getbundle", map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0",
			"common": heads, "heads": heads, "bookmarks": "1", "phases": "1"}, "0.1 0.2 comp=zstd,zlib,none", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := payload(t, rawGet(t, hgURL, c.cmd, c.args, c.proto), c.compressible)
			resp := rawGet(t, ours, c.cmd, c.args, c.proto)
			hgResp := rawGet(t, hgURL, c.cmd, c.args, c.proto)
			if a, b := resp.Header.Get("Content-Type"), hgResp.Header.Get("Content-Type"); a != b {
				t.Errorf("content type %q, hg serve's %q", a, b)
			}
			// The compression engine chosen must be hg's too (none for a
			// stream, which does not compress well).
			if c.proto != "" && c.compressible {
				var a, b [5]byte
				io.ReadFull(resp.Body, a[:])
				io.ReadFull(hgResp.Body, b[:])
				if a != b {
					t.Errorf("engine header %q, hg serve's %q", a, b)
				}
				resp = rawGet(t, ours, c.cmd, c.args, c.proto)
			}
			got := payload(t, resp, c.compressible)
			if !bytes.Equal(want, got) {
				t.Errorf("%s: hgfs serve differs from hg serve:\nhg:   %q\nhgfs: %q", c.name, truncate(string(want), 2000), truncate(string(got), 2000))
			}
		})
	}
	// hg's own v1 clone of a non-publishing repository comes out all
	// public, and so does one from hgfs serve.
	v1 := []string{"--config", "devel.legacy.exchange=bundle1"}
	a := testenv.Hg(t, cloneFrom(t, hgURL, v1...), "phase", "--hidden", "-r", "all()")
	b := testenv.Hg(t, cloneFrom(t, ours, v1...), "phase", "--hidden", "-r", "all()")
	if !bytes.Equal(a, b) {
		t.Errorf("v1 clone phases differ:\n%s", testenv.Diff("hg serve", string(a), "hgfs serve", string(b)))
	}
}

// firstPart reads a getbundle reply's first bundle2 part.
func firstPart(t *testing.T, body []byte) *bundle2.Part {
	t.Helper()
	br, err := bundle2.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	p, err := br.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStreamRefused(t *testing.T) {
	src := testenv.Generate(t, testenv.Small) // has a secret changeset
	streamArgs := map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1", "common": NullHex}
	t.Run("secret", func(t *testing.T) {
		cfg := testConfig()
		cfg.UncompressedAllowSecret = false
		url := startServer(t, src, cfg)
		caps, err := ParseCaps(payload(t, rawGet(t, url, "capabilities", nil, ""), false))
		if err != nil {
			t.Fatal(err)
		}
		if caps.Has("stream") || caps.Has("streamreqs") {
			t.Errorf("stream advertised despite secret changesets: %v", caps)
		}
		if got := string(payload(t, rawGet(t, url, "stream_out", nil, ""), false)); got != "1\n" {
			t.Errorf("stream_out = %q, want 1", got)
		}
		p := firstPart(t, payload(t, rawGet(t, url, "getbundle", streamArgs, "0.1 0.2 comp=none"), true))
		if msg, _ := p.Param("message"); p.Type != "error:abort" || msg != streamclone.ErrNotAllowed.Msg {
			t.Errorf("getbundle stream: part %s %q", p.Type, msg)
		}
		// The clone falls back to a changegroup, without the secrets.
		dest := filepath.Join(t.TempDir(), "c")
		out, stderr, err := testenv.HgResult(t, "", "clone", "--stream", "-U", url, dest)
		if err != nil || !bytes.Contains(stderr, []byte("warning: stream clone requested but server has them disabled")) ||
			!bytes.Contains(out, []byte("requesting all changes")) {
			t.Errorf("clone of a repository with secrets: err %v\n%s%s", err, out, stderr)
		}
		if secret := testenv.Hg(t, dest, "log", "--hidden", "-r", "secret()", "-T", "{node}\n"); len(secret) != 0 {
			t.Errorf("secret changesets sent: %s", secret)
		}
	})
	// Archived changesets are not secret ones (phases.hassecret), and an
	// obsstore whose markers were all deleted holds none (hg's obsstore
	// is false): hg serve streams such a repository to a client without
	// obsolescence, and so must hgfs serve.
	t.Run("archived-markerless", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		testenv.Hg(t, dir, "init", src)
		for _, f := range []string{"a", "b"} {
			if err := os.WriteFile(filepath.Join(src, f), []byte(f), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Hg(t, src, "commit", "-qAm", f)
		}
		archived := "32 " + string(testenv.Hg(t, src, "log", "-r", "1", "-T", "{node}")) + "\n"
		if err := os.WriteFile(filepath.Join(src, ".hg", "store", "phaseroots"), []byte(archived), 0o644); err != nil {
			t.Fatal(err)
		}
		evolution := []string{"--config", "experimental.evolution=all"}
		testenv.Hg(t, src, append(evolution, "debugobsolete", "-q", strings.Repeat("ab", 20))...)
		testenv.Hg(t, src, append(evolution, "debugobsolete", "-q", "--delete", "0")...)
		cfg := testConfig()
		cfg.Publishing = true
		cfg.UncompressedAllowSecret = false
		url := startServer(t, src, cfg)
		hgURL := testenv.Serve(t, testenv.CopyRepo(t, src))
		logT := []string{"log", "--hidden", "-T", "{node} {phase}\n"}
		if a, b := testenv.Hg(t, cloneFrom(t, hgURL), logT...), testenv.Hg(t, cloneFrom(t, url), logT...); !bytes.Equal(a, b) {
			t.Errorf("clones differ:\n%s", testenv.Diff("hg serve", string(a), "hgfs serve", string(b)))
		}
	})
	t.Run("uncompressed=false", func(t *testing.T) {
		hgSrc := testenv.CopyRepo(t, src)
		hgURL := testenv.Serve(t, hgSrc, "--config", "server.uncompressed=false", "--config", "server.uncompressedallowsecret=true", "--config", "phases.publish=false")
		cfg := testConfig()
		cfg.Uncompressed = false
		url := startServer(t, src, cfg)
		wantDir, gotDir := filepath.Join(t.TempDir(), "c"), filepath.Join(t.TempDir(), "c")
		want, wantErr, _ := testenv.HgResult(t, "", "clone", "--stream", "-U", hgURL, wantDir)
		got, gotErr, err := testenv.HgResult(t, "", "clone", "--stream", "-U", url, gotDir)
		if err != nil {
			t.Fatalf("clone: %v\n%s%s", err, got, gotErr)
		}
		// Both fall back to a changegroup clone.
		if string(want) != strings.ReplaceAll(string(got), url, hgURL) || string(wantErr) != string(gotErr) {
			t.Errorf("clone output differs:\n%s", testenv.Diff("hg serve", string(want)+string(wantErr), "hgfs serve", string(got)+string(gotErr)))
		}
		logT := []string{"log", "--debug", "--hidden", "-r", "all()"}
		if a, b := testenv.Hg(t, wantDir, logT...), testenv.Hg(t, gotDir, logT...); !bytes.Equal(a, b) {
			t.Errorf("clones differ:\n%s", testenv.Diff("hg serve", string(a), "hgfs serve", string(b)))
		}
		if got := string(payload(t, rawGet(t, url, "stream_out", nil, ""), false)); got != "1\n" {
			t.Errorf("stream_out = %q, want 1", got)
		}
	})
}

func TestLocked(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	lock := filepath.Join(src, ".hg", "store", "lock")
	if err := os.Symlink("otherhost:1", lock); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.LockTimeout = 100 * time.Millisecond
	url := startServer(t, src, cfg)
	if got := string(payload(t, rawGet(t, url, "stream_out", nil, ""), false)); got != "2\n" {
		t.Errorf("stream_out under a foreign lock = %q, want 2", got)
	}
	args := map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1", "common": NullHex}
	p := firstPart(t, payload(t, rawGet(t, url, "getbundle", args, "0.1 0.2 comp=none"), true))
	if msg, _ := p.Param("message"); p.Type != "error:abort" || !strings.Contains(msg, "locked") {
		t.Errorf("getbundle under a foreign lock: part %s %q", p.Type, msg)
	}
	// A lock left by a dead process of this host is broken.
	os.Remove(lock)
	if err := os.Symlink(store.LockPrefix()+":999999999", lock); err != nil {
		t.Fatal(err)
	}
	body := payload(t, rawGet(t, url, "stream_out", nil, ""), false)
	if !bytes.HasPrefix(body, []byte("0\n")) {
		t.Errorf("stream_out with a stale lock: %q", truncate(string(body), 40))
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("lock not released: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	url := startServer(t, src, testConfig())
	check := func(method, target string, body io.Reader, wantCode int, wantBody string) {
		t.Helper()
		req, _ := http.NewRequest(method, strings.TrimSuffix(url, "/")+target, body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantCode || !strings.Contains(string(b), wantBody) {
			t.Errorf("%s %s: %d %q, want %d %q", method, truncate(target, 80), resp.StatusCode, b, wantCode, wantBody)
		}
	}
	check("GET", "/?cmd=unbundle", nil, 405, "push requires POST request")
	check("POST", "/?cmd=unbundle", strings.NewReader("HG20"), 403, "read-only")
	check("GET", "/?cmd=pushkey", nil, 405, "push requires POST request")
	check("GET", "/.hg/store/00changelog.i", nil, 404, "wire protocol")
	check("GET", "/.hg/hgrc?cmd=heads", nil, 404, "Not Found")
	check("GET", "/?cmd=nosuchcommand", nil, 404, "wire protocol")
	check("GET", "/?cmd=hello", nil, 200, "not available over HTTP")
	check("GET", "/?cmd=batch&cmds=unbundle+heads%3D", nil, 400, "push permission")
	check("GET", "/?cmd=heads&"+strings.Repeat("a", maxArgBytes+1), nil, 400, "exceeds")

	// Headers beyond the bound are refused by the HTTP server itself.
	req, _ := http.NewRequest("GET", url+"?cmd=heads", nil)
	req.Header.Set("X-HgArg-1", strings.Repeat("a", 2*maxArgBytes))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("oversized headers: %s", resp.Status)
		}
		resp.Body.Close()
	}

	// A real push gets a clear refusal.
	dest := cloneFrom(t, url)
	testenv.Hg(t, dest, "update", "-q", "-r", "max(not secret())") // a draft commit, which a push sends
	os.WriteFile(filepath.Join(dest, "new.txt"), []byte("x\n"), 0o644)
	testenv.Hg(t, dest, "commit", "-qAm", "new")
	out, stderr, err := testenv.HgResult(t, dest, "push", url)
	// As hg serve's refusal ("abort: HTTP Error 403: ssl required").
	if err == nil || !bytes.Contains(stderr, []byte("abort: HTTP Error 403: "+msgReadOnly+"\n")) {
		t.Errorf("push: %v\n%s%s", err, out, stderr)
	}

}

// TestStreamClient applies a zlib (media 0.1) stream reply with hgfs's own
// applier, as a curl-fetched getbundle would be.
func TestZlibGetbundle(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	url := startServer(t, src, testConfig())
	args := map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1", "common": NullHex, "bookmarks": "1"}
	resp := rawGet(t, url, "getbundle", args, "")
	if ct := resp.Header.Get("Content-Type"); ct != mediaTypeV1 {
		t.Fatalf("content type %q", ct)
	}
	zr, err := zlib.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "c")
	sink, err := streamclone.NewDirSink(dest, streamclone.DefaultDirOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streamclone.ApplyBundle(context.Background(), zr, sink, streamclone.Options{}); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, dest, "verify", "-q")
	if want, got := repoState(t, src), repoState(t, dest); want != got {
		t.Errorf("differs:\n%s", testenv.Diff("source", string(want), "clone", string(got)))
	}
}

func TestAccessLog(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	var log syncBuffer
	cfg := testConfig()
	cfg.AccessLog = &log
	url := startServer(t, src, cfg)
	payload(t, rawGet(t, url, "heads", nil, ""), false)
	re := regexp.MustCompile(`^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z][a-z]/\d{4} \d\d:\d\d:\d\d\] "GET /\?cmd=heads HTTP/1\.1" 200 -\n$`)
	if !re.MatchString(log.String()) {
		t.Errorf("access log %q", log.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCloneWhileCommitting clones while hg commits to the served
// repository: the snapshot is taken under the store lock, so each clone
// is some consistent state of the repository and verifies.
func TestCloneWhileCommitting(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	testenv.Hg(t, src, "update", "-q", "-r", "tip")
	url := startServer(t, src, testConfig())
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 6; i++ {
			if err := os.WriteFile(filepath.Join(src, "busy.txt"), []byte(strings.Repeat(fmt.Sprintf("%d\n", i), 1000*(i+1))), 0o644); err != nil {
				done <- err
				return
			}
			if _, stderr, err := testenv.HgResult(t, src, "commit", "-qAm", fmt.Sprint("busy ", i)); err != nil {
				done <- fmt.Errorf("commit: %v: %s", err, stderr)
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < 3; i++ {
		cloneFrom(t, url) // verifies
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The last state too.
	dest := cloneFrom(t, url)
	if want, got := testenv.Hg(t, src, "log", "-r", "tip", "-T", "{node}"), testenv.Hg(t, dest, "log", "-r", "tip", "-T", "{node}"); !bytes.Equal(want, got) {
		t.Errorf("tip %s, want %s", got, want)
	}
}
