package wireproto

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/testenv"
)

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	testenv.RemoveGenerated()
	os.Exit(code)
}

// fixture is one small repository shared by this package's tests: two
// changesets, a bookmark.
func fixture(t *testing.T) string {
	t.Helper()
	testenv.HgPath(t)
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wireproto-test-")
		if err != nil {
			fixtureErr = err.Error()
			return
		}
		fixtureDir = dir
		repo := filepath.Join(dir, "repo")
		testenv.Hg(t, dir, "init", "repo")
		os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644)
		testenv.Hg(t, repo, "commit", "-qAm", "first")
		os.WriteFile(filepath.Join(repo, "a.txt"), []byte("two\n"), 0o644)
		testenv.Hg(t, repo, "commit", "-qm", "second")
		testenv.Hg(t, repo, "bookmark", "-r", "0", "feature")
	})
	if fixtureErr != "" {
		t.Fatal(fixtureErr)
	}
	return filepath.Join(fixtureDir, "repo")
}

func hgOut(t *testing.T, repo string, args ...string) string {
	return string(testenv.Hg(t, repo, args...))
}

// fakeSSH writes a stand-in for ssh: it drops the options and the host
// and runs the remote command locally.
func fakeSSH(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fakessh")
	script := "#!/bin/sh\nwhile [ $# -gt 1 ]; do shift; done\nexec env HGRCPATH= HGPLAIN=1 sh -c \"$1\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkPeer runs the commands a clone uses against a real server.
func checkPeer(t *testing.T, p Peer, repo string) {
	ctx := context.Background()
	if !p.Capabilities().Has("getbundle") {
		t.Fatalf("caps %v", p.Capabilities())
	}
	heads, err := p.Heads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(hgOut(t, repo, "heads", "-T", "{node} "))
	if strings.Join(heads, " ") != strings.Join(want, " ") {
		t.Errorf("heads %v, want %v", heads, want)
	}
	books, err := p.ListKeys(ctx, "bookmarks")
	if err != nil {
		t.Fatal(err)
	}
	if books["feature"] != strings.TrimSpace(hgOut(t, repo, "log", "-r", "feature", "-T", "{node}")) || len(books) != 1 {
		t.Errorf("bookmarks %v", books)
	}
	phases, err := p.ListKeys(ctx, "phases")
	if err != nil {
		t.Fatal(err)
	}
	if phases["publishing"] != "True" {
		t.Errorf("phases %v", phases)
	}
	n, err := p.Lookup(ctx, "tip")
	if err != nil || n != want[0] {
		t.Errorf("lookup tip: %q %v", n, err)
	}
	if _, err := p.Lookup(ctx, "nosuchrev"); !errors.Is(err, ErrLookup) {
		t.Errorf("lookup of unknown: %v", err)
	}
	b2, err := p.Capabilities().Bundle2()
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.GetBundle(ctx, StreamCloneArgs(b2))
	if err != nil {
		t.Fatal(err)
	}
	// The bundle: HG20, then parts; reading the whole of it over ssh would
	// block (the server waits for the next command), so read the header
	// and the first part's type only.
	head := make([]byte, 4+4)
	if _, err := io.ReadFull(body, head); err != nil {
		t.Fatal(err)
	}
	if string(head[:4]) != "HG20" {
		t.Fatalf("bundle starts %q", head)
	}
	body.Close()
}

func TestHTTPPeer(t *testing.T) {
	repo := fixture(t)
	url := testenv.Serve(t, repo)
	var debug bytes.Buffer
	var mu sync.Mutex
	p, err := DialHTTP(context.Background(), url, Options{Debugf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		debug.WriteString(strings.TrimSpace(f))
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	checkPeer(t, p, repo)

	// stream_out over HTTP: status line then "files bytes".
	r, err := p.StreamOut(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(r)
	l1, _ := br.ReadString('\n')
	l2, _ := br.ReadString('\n')
	rest, err := io.ReadAll(br)
	r.Close()
	if l1 != "0\n" || err != nil {
		t.Fatalf("stream_out: %q %v", l1, err)
	}
	var files, size int
	if _, err := fmtSscan(l2, &files, &size); err != nil || size >= len(rest) || files < 3 {
		t.Errorf("stream_out header %q with %d bytes following", l2, len(rest))
	}
}

// TestHTTPCompression gets a changegroup bundle (which hg serve
// compresses) with each media type and engine and compares the payloads.
func TestHTTPCompression(t *testing.T) {
	repo := fixture(t)
	url := testenv.Serve(t, repo)
	ctx := context.Background()
	args := map[string]string{
		"bundlecaps": "HG20,bundle2=" + bundle2.Quote("HG20\nchangegroup=01,02"),
		"common":     NullHex,
		"cg":         "1",
	}
	var log strings.Builder
	get := func(mutate func(c Caps)) []byte {
		log.Reset()
		p, err := DialHTTP(ctx, url, Options{Debugf: func(f string, a ...any) { fmt.Fprintf(&log, f, a...) }})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		args["heads"] = EncodeNodes(mustHeads(t, p))
		mutate(p.caps)
		r, err := p.GetBundle(ctx, args)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("HG20")) {
			t.Fatalf("bundle starts %q", data[:min(len(data), 16)])
		}
		return data
	}
	zstdBody := get(func(Caps) {}) // 0.2, server picks zstd
	if !strings.Contains(log.String(), "getbundle response: application/mercurial-0.2, compression zstd") {
		t.Errorf("zstd not used:\n%s", log.String())
	}
	v01 := get(func(c Caps) { delete(c, "httpmediatype") }) // 0.1: zlib
	if !strings.Contains(log.String(), "getbundle response: application/mercurial-0.1, compression zlib") {
		t.Errorf("0.1 zlib not used:\n%s", log.String())
	}
	if !bytes.Equal(zstdBody, v01) {
		t.Errorf("payloads differ: %d %d bytes", len(zstdBody), len(v01))
	}
	// A server limited to zlib answers 0.2 with zlib.
	url = testenv.Serve(t, repo, "--config", "server.compressionengines=zlib")
	zlibBody := get(func(Caps) {})
	if !strings.Contains(log.String(), "getbundle response: application/mercurial-0.2, compression zlib") {
		t.Errorf("0.2 zlib not used:\n%s", log.String())
	}
	if !bytes.Equal(zstdBody, zlibBody) {
		t.Errorf("zlib payload differs: %d vs %d bytes", len(zlibBody), len(zstdBody))
	}
	// Arguments in the query string (servers without httpheader).
	_ = get(func(c Caps) { delete(c, "httpheader") })
}

func mustHeads(t *testing.T, p Peer) []string {
	h, err := p.Heads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHTTPErrors(t *testing.T) {
	repo := fixture(t)
	ctx := context.Background()

	// hg serve answers unknown paths with 404.
	url := testenv.Serve(t, repo)
	_, err := DialHTTP(ctx, url+"nosuchrepo", Options{})
	var he *HTTPError
	if !errors.As(err, &he) || he.Code != 404 || err.Error() != "HTTP Error 404: Not Found" {
		t.Errorf("404: %v", err)
	}

	// Connection refused: a port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = DialHTTP(ctx, "http://"+addr+"/", Options{})
	if !errors.Is(err, ErrConnection) || err.Error() != "error: Connection refused" {
		t.Errorf("refused: %v", err)
	}

	// Not Mercurial, an hg-error, a redirect.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>hello</html>")
		case "/hgerror":
			w.Header().Set("Content-Type", "application/hg-error")
			io.WriteString(w, "this went wrong\n")
		case "/moved":
			http.Redirect(w, r, "/real?"+r.URL.RawQuery, http.StatusMovedPermanently)
		case "/real":
			w.Header().Set("Content-Type", "application/mercurial-0.1")
			io.WriteString(w, "lookup batch")
		case "/huge":
			w.Header().Set("Content-Type", "application/mercurial-0.1")
			w.Write(bytes.Repeat([]byte("x "), 4096))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	_, err = DialHTTP(ctx, srv.URL+"/html", Options{})
	if !errors.Is(err, ErrNotRepository) || !strings.Contains(err.Error(), "does not appear to be an hg repository:\n---%<--- (text/html)\n<html>hello</html>") {
		t.Errorf("html: %v", err)
	}
	_, err = DialHTTP(ctx, srv.URL+"/hgerror", Options{})
	if !errors.Is(err, ErrRemote) || err.Error() != "remote error:\nthis went wrong" {
		t.Errorf("hg-error: %v", err)
	}
	var warn bytes.Buffer
	p, err := DialHTTP(ctx, srv.URL+"/moved", Options{Stderr: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().Has("lookup") || warn.String() != "real URL is "+srv.URL+"/real\n" || p.base.Path != "/real" {
		t.Errorf("redirect: %v %q %s", p.Capabilities(), warn.String(), p.base)
	}
	warn.Reset()
	if p, err = DialHTTP(ctx, srv.URL+"/moved", Options{Stderr: &warn, Quiet: true}); err != nil || warn.Len() != 0 || p.base.Path != "/real" {
		t.Errorf("quiet redirect: %v %q", err, warn.String())
	}
	_, err = DialHTTP(ctx, srv.URL+"/huge", Options{MaxResponse: 1000})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge: %v", err)
	}
	for _, bad := range []string{"http://h/r?x=1", "http://h/r#frag"} {
		if _, err := DialHTTP(ctx, bad, Options{}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v", bad, err)
		}
	}

	// A cancelled context stops a request.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := DialHTTP(cctx, url, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSSHPeer(t *testing.T) {
	repo := fixture(t)
	var remote bytes.Buffer
	p, err := DialSSH(context.Background(), "ssh://user@nohost:22/"+repo, Options{SSHCommand: fakeSSH(t), Stderr: &remote})
	if err != nil {
		t.Fatal(err)
	}
	checkPeer(t, p, repo)
	// The connection was left mid-bundle: further commands are refused
	// rather than misparsed.
	if _, err := p.Heads(context.Background()); !errors.Is(err, ErrProtocol) {
		t.Errorf("after unread stream: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// stream_out, read fully, leaves the connection usable.
	p, err = DialSSH(context.Background(), "ssh://nohost/"+repo, Options{SSHCommand: fakeSSH(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.StreamOut(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(r)
	l1, _ := br.ReadString('\n')
	l2, _ := br.ReadString('\n')
	var files, size int
	if _, err := fmtSscan(l2, &files, &size); err != nil || l1 != "0\n" {
		t.Fatalf("stream_out %q %q", l1, l2)
	}
	// Read exactly the announced bytes: names and sizes of each file.
	for i := 0; i < files; i++ {
		hdr, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		_, sz, _ := strings.Cut(strings.TrimSuffix(hdr, "\n"), "\x00")
		var n int64
		if _, err := fmtSscan(sz, &n); err != nil {
			t.Fatalf("entry %q", hdr)
		}
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			t.Fatal(err)
		}
	}
	if br.Buffered() != 0 {
		t.Fatalf("%d bytes after the stream", br.Buffered())
	}
	r.Close()
	if h, err := p.Heads(context.Background()); err != nil || len(h) != 1 {
		t.Errorf("heads after stream_out: %v %v", h, err)
	}
}

func TestSSHErrors(t *testing.T) {
	fixture(t)
	var remote bytes.Buffer
	_, err := DialSSH(context.Background(), "ssh://nohost//nonexistent/repo", Options{SSHCommand: fakeSSH(t), Stderr: &remote})
	if !IsNoSuitableResponse(err) {
		t.Errorf("missing repo: %v", err)
	}
	if !strings.Contains(remote.String(), "remote: abort: repository /nonexistent/repo not found") {
		t.Errorf("remote output %q", remote.String())
	}
	// An ssh command that does not exist.
	remote.Reset()
	_, err = DialSSH(context.Background(), "ssh://nohost/x", Options{SSHCommand: "/nonexistent/ssh", Stderr: &remote})
	if !IsNoSuitableResponse(err) || !strings.Contains(remote.String(), "remote: ") {
		t.Errorf("no ssh: %v, %q", err, remote.String())
	}
	// A remote that hangs is cut off by the context.
	hang := filepath.Join(t.TempDir(), "hangssh")
	os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = DialSSH(ctx, "ssh://nohost/x", Options{SSHCommand: hang})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("hang not stopped")
	}
}

// TestDecodeHeadsProtocol: a heads response with a node that is not 40
// hex digits is the server's malformed response (ErrProtocol), which
// DecodeNodes leaves to its caller to say.
func TestDecodeHeadsProtocol(t *testing.T) {
	for _, resp := range []string{"xyz\n", strings.Repeat("0", 40) + " 12\n", strings.Repeat("0", 40)} {
		if _, err := decodeHeads([]byte(resp)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v", resp, err)
		}
	}
	if h, err := decodeHeads([]byte(strings.Repeat("ab", 20) + "\n")); err != nil || len(h) != 1 {
		t.Errorf("good heads: %v %v", h, err)
	}
	if _, err := DecodeNodes("xyz"); err == nil || errors.Is(err, ErrProtocol) || err.Error() != `bad node "xyz"` {
		t.Errorf("DecodeNodes: %v", err)
	}
}

// TestDecodeBranchmap: hg's branchmap response (URL-quoted names, heads
// in the server's order, closed heads too) and what is not one.
func TestDecodeBranchmap(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	m, err := decodeBranchmap([]byte("default " + a + "\nst%20able " + b + " " + a))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"default": {a}, "st able": {b, a}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("decodeBranchmap = %v, want %v", m, want)
	}
	if m, err := decodeBranchmap(nil); err != nil || m == nil || len(m) != 0 {
		t.Errorf("empty response: %v, %v", m, err)
	}
	for _, bad := range []string{"default", "default " + a[:39], "default " + a + "\n", "x " + a + "  " + b} {
		if _, err := decodeBranchmap([]byte(bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("decodeBranchmap(%q) = %v, want ErrProtocol", bad, err)
		}
	}
}

// FuzzDecodeBranchmap: any response decodes or is ErrProtocol, and what
// decodes re-encodes (as the server encodes it) to the same map.
func FuzzDecodeBranchmap(f *testing.F) {
	f.Add([]byte("default " + strings.Repeat("a", 40) + "\nst%20able " + strings.Repeat("b", 40)))
	f.Add([]byte("%zz%"))
	f.Add([]byte("a \nb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeBranchmap(data)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error not ErrProtocol: %v", err)
			}
			return
		}
		var lines []string
		for name, heads := range m {
			lines = append(lines, bundle2.Quote(name)+" "+EncodeNodes(heads))
		}
		m2, err := decodeBranchmap([]byte(strings.Join(lines, "\n")))
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip of %q: %v vs %v (%v)", data, m, m2, err)
		}
	})
}
