package wireproto

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// evolution makes hg create obsolescence markers (so amend hides).
var evolution = []string{"--config", "experimental.evolution=all"}

// webRepo is a repository with what the page must show and what it must
// not: a bookmark and a branch named with markup, a secret changeset, an
// obsolete (hidden) one.
func webRepo(t *testing.T, dir, name string) string {
	t.Helper()
	root := filepath.Join(dir, name)
	testenv.Hg(t, dir, "init", name)
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(root, "f"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one\n")
	testenv.Hg(t, root, "commit", "-qAm", "first <em>line</em>\nsecond line")
	testenv.Hg(t, root, "bookmark", "-i", "<script>alert(1)</script>")
	testenv.Hg(t, root, "branch", "-q", `<b onmouseover="x()">br</b>`)
	write("two\n")
	testenv.Hg(t, root, "commit", "-qm", "HIDDEN-BEFORE-AMEND")
	write("two!\n")
	testenv.Hg(t, root, append([]string{"commit", "-q", "--amend", "-m", "amended & public"}, evolution...)...)
	testenv.Hg(t, root, "phase", "--public", "-r", ".")
	write("three\n")
	testenv.Hg(t, root, "commit", "-q", "--secret", "-m", "SECRET-WORK")
	return root
}

// hgLog runs hg log with a template over the served view's revisions.
func hgLog(t *testing.T, root, revs, tmpl string) string {
	t.Helper()
	return string(testenv.Hg(t, root, append([]string{"log", "-r", revs, "-T", tmpl}, evolution...)...))
}

func get(t *testing.T, method, url, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestWebPage(t *testing.T) {
	root := webRepo(t, t.TempDir(), "proj")
	cfg := testConfig()
	cfg.Web.Description = "a <i>test</i> repository"
	u := startServer(t, root, cfg)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")

	resp, page := get(t, "GET", u, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(page, "<!DOCTYPE html>\n") {
		t.Fatalf("GET /: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") {
		t.Errorf("CSP: %q", csp)
	}
	served := "not secret()"
	tip := hgLog(t, root, "max("+served+")", "{rev}:{node|short}")
	tipNode := hgLog(t, root, "max("+served+")", "{node}")
	want := []string{
		`<h1 id="name">proj</h1>`,
		`<p class="desc">a &lt;i&gt;test&lt;/i&gt; repository</p>`,
		`<code id="hg-clone">hg clone ` + u + ` proj</code>`,
		`<code id="hgfs-clone">hgfs clone --mount ` + u + ` proj</code>`,
		`<dd id="tip-change"><span class="mono" title="` + tipNode + `">` + tip + `</span></dd>`,
		`<dd id="tip-summary">amended &amp; public</dd>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		`&lt;b onmouseover=&#34;x()&#34;&gt;br&lt;/b&gt;`,
		`Heads <span class="count">(1)</span>`,
		`Branches <span class="count">(2)</span>`,
		`Bookmarks <span class="count">(1)</span>`,
		`first &lt;em&gt;line&lt;/em&gt;</td>`,
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s", w)
		}
	}
	for _, bad := range []string{"<script", "<b ", "<em>", "SECRET-WORK", "HIDDEN-BEFORE-AMEND", "second line",
		hgLog(t, root, "secret()", "{node|short}")} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", page)
	}

	// HEAD: GET's headers, no body.
	hresp, hbody := get(t, "HEAD", u, "")
	if hresp.StatusCode != 200 || hbody != "" || hresp.Header.Get("Content-Length") != fmt.Sprint(len(page)) {
		t.Errorf("HEAD: %s, length %q (GET: %d), body %q", hresp.Status, hresp.Header.Get("Content-Length"), len(page), hbody)
	}

	// The Host header names the URL in the commands when it is a plain
	// host[:port]; anything else gives way to the address the request
	// came in on.
	for host, wantURL := range map[string]string{
		"hg.example.org:8080": "http://hg.example.org:8080/",
		"[::1]:8000":          "'http://[::1]:8000/'", // [ is a shell glob
		"hg.example.org":      "http://hg.example.org/",
		"it's":                u,
		"a:b:c":               u,
		"x:99999":             u,
		"-x.example":          u,
	} {
		_, p := get(t, "GET", u, host)
		wantURL = strings.ReplaceAll(wantURL, "'", "&#39;")
		if !strings.Contains(p, `<code id="hg-clone">hg clone `+wantURL+` proj</code>`) {
			t.Errorf("Host %q: commands are not for %s:\n%s", host, wantURL, grepLines(p, "clone"))
		}
	}
	// Markup in the Host header does not even reach the handler.
	if status := rawRequest(t, hostPort, "GET / HTTP/1.1\r\nHost: x\"><script>\r\n\r\n"); !strings.HasPrefix(status, "HTTP/1.1 400") {
		t.Errorf("Host with markup: %s", status)
	}

	// Not the page: another path, another method, a wire command.
	if resp, body := get(t, "GET", u+"log", ""); resp.StatusCode != 404 || !strings.Contains(body, "Not Found") {
		t.Errorf("GET /log: %s %q", resp.Status, body)
	}
	if resp, _ := get(t, "POST", u, ""); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %s", resp.Status)
	}
	if resp, body := get(t, "GET", u+"?cmd=heads", ""); resp.StatusCode != 200 || body != hgLog(t, root, "heads("+served+")", "{node}")+"\n" {
		t.Errorf("?cmd=heads: %s %q", resp.Status, body)
	}
}

func TestWebPageBaseURL(t *testing.T) {
	root := webRepo(t, t.TempDir(), "proj")
	cfg := testConfig()
	cfg.Web.BaseURL = "https://hg.example.com/repos/proj/"
	cfg.Web.Name = "Project"
	u := startServer(t, root, cfg)
	_, page := get(t, "GET", u, "")
	for _, w := range []string{
		`<h1 id="name">Project</h1>`,
		`<code id="hg-clone">hg clone https://hg.example.com/repos/proj/</code>`,
		`<code id="hgfs-clone">hgfs clone --mount https://hg.example.com/repos/proj/ Project</code>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s:\n%s", w, grepLines(page, "clone|h1"))
		}
	}
}

// TestWebPageBounded: 100,000 bookmarks and 151 branches (150 heads)
// show the first pageLimit of each and the count.
func TestWebPageBounded(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "big")
	testenv.Hg(t, dir, "init", "big")
	var dag strings.Builder
	dag.WriteString("+1:r")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&dag, " @b%03d <r +1", i)
	}
	testenv.Hg(t, root, "debugbuilddag", dag.String())
	node := hgLog(t, root, "0", "{node}")
	var marks bytes.Buffer
	const nMarks = 100000
	for i := 0; i < nMarks; i++ {
		fmt.Fprintf(&marks, "%s mark%06d\n", node, i)
	}
	if err := os.WriteFile(filepath.Join(root, ".hg", "bookmarks"), marks.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(testenv.Hg(t, root, "bookmarks")), "\n"); n != nMarks {
		t.Fatalf("hg lists %d bookmarks", n)
	}
	u := startServer(t, root, testConfig())
	_, page := get(t, "GET", u, "")
	for _, w := range []string{
		"Heads <span class=\"count\">(150)</span>", "The newest 100 of 150 heads.",
		"Branches <span class=\"count\">(151)</span>", "The first 100 of 151 branches, by name.",
		"Bookmarks <span class=\"count\">(100000)</span>", "The first 100 of 100000 bookmarks, by name.",
		"<tr><td>mark000099</td>", "<tr><td>b000</td>", "<tr><td>b099</td>",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s", w)
		}
	}
	for _, bad := range []string{"mark000100", "<tr><td>b100</td>", "<tr><td>default</td>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows %s", bad)
		}
	}
	if rows := strings.Count(page, "<tr>"); rows != 3*pageLimit+3 {
		t.Errorf("%d table rows, want %d", rows, 3*pageLimit+3)
	}
	if len(page) > 200<<10 {
		t.Errorf("page is %d bytes", len(page))
	}
}

func TestWebDir(t *testing.T) {
	dir := t.TempDir()
	a := webRepo(t, dir, "a")
	// Stream clones of these need no secret changeset: b and h have none.
	b := cloneFixtureRepo(t, dir, "b")
	h := cloneFixtureRepo(t, dir, "h")
	var log syncBuffer
	cfg := testConfig()
	cfg.AccessLog = &log
	srv := func(root string, web WebConfig) *Server {
		c := cfg
		c.Web = web
		s, err := NewServer(root, c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wd := NewWebDir([]WebDirRepo{
		{Name: "a", Server: srv(a, WebConfig{Description: "<first>"})},
		{Name: "/team/b/", Server: srv(b, WebConfig{Contact: "b@example.com"})},
		{Name: "hidden", Server: srv(h, WebConfig{}), Hidden: true},
		{Name: "we ird", Server: srv(b, WebConfig{})},
		{Name: "private", Server: srv(b, WebConfig{ReadDenied: true})},
	}, WebDirConfig{Descend: true, AccessLog: &log})
	u := serveOn(t, wd)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")

	resp, list := get(t, "GET", u, "")
	if resp.StatusCode != 200 {
		t.Fatalf("listing: %s", resp.Status)
	}
	for _, w := range []string{`<a href="/a/">a</a></td><td>&lt;first&gt;</td>`, `<a href="/team/b/">team/b</a></td><td></td><td>b@example.com</td>`, `<a href="/we%20ird/">we ird</a>`} {
		if !strings.Contains(list, w) {
			t.Errorf("listing lacks %s:\n%s", w, list)
		}
	}
	if strings.Contains(list, "hidden") || strings.Contains(list, "private") {
		t.Errorf("listing shows the hidden or the refused repository")
	}
	// A refused repository answers neither its page nor the protocol.
	if resp, body := get(t, "GET", u+"private/", ""); resp.StatusCode != 401 || !strings.Contains(body, "read not authorized") {
		t.Errorf("/private/: %s %q", resp.Status, body)
	}
	if resp, body := get(t, "GET", u+"private?cmd=capabilities", ""); resp.StatusCode != 401 || body != "permission denied" {
		t.Errorf("/private?cmd=capabilities: %s %q", resp.Status, body)
	}
	for _, p := range []string{"team/", "team", "team/index"} {
		_, sub := get(t, "GET", u+p, "")
		if !strings.Contains(sub, `<a href="/team/b/">b</a>`) || strings.Contains(sub, `href="/a/"`) || !strings.Contains(sub, `<a href="/">`) {
			t.Errorf("/%s: not team/'s listing:\n%s", p, sub)
		}
	}

	// Each repository: its page at /NAME and /NAME/, the wire protocol at
	// /NAME, stream clones by real hg.
	for name, root := range map[string]string{"a": a, "team/b": b, "hidden": h} {
		for _, p := range []string{name, name + "/"} {
			resp, page := get(t, "GET", u+p, "")
			want := `<code id="hg-clone">hg clone ` + u + name + `</code>`
			if resp.StatusCode != 200 || !strings.Contains(page, want) || !strings.Contains(page, "<h1 id=\"name\">"+name+"</h1>") {
				t.Errorf("/%s: %s\n%s", p, resp.Status, grepLines(page, "clone|h1"))
			}
		}
		resp, heads := get(t, "GET", u+name+"?cmd=heads", "")
		if want := hgLog(t, root, "heads(not secret())", "{node}") + "\n"; resp.StatusCode != 200 || heads != want {
			t.Errorf("/%s?cmd=heads: %s %q, want %q", name, resp.Status, heads, want)
		}
		if name != "a" {
			dest := cloneFrom(t, u+name)
			if got, want := repoState(t, dest), repoState(t, root); got != want {
				t.Errorf("clone of %s differs:\n%s", name, testenv.Diff("source", want, "clone", got))
			}
		}
	}
	_, weird := get(t, "GET", u+"we%20ird/", "")
	if !strings.Contains(weird, `hgfs clone --mount `+u+`we%20ird &#39;we ird&#39;`) {
		t.Errorf("we ird:\n%s", grepLines(weird, "clone"))
	}

	// Unknown names, paths within a repository, methods.
	for _, p := range []string{"nope", "nope/", "tea", "team/c", "a/log?cmd=heads"} {
		resp, body := get(t, "GET", u+p, "")
		if resp.StatusCode != 404 {
			t.Errorf("/%s: %s", p, resp.Status)
		}
		if strings.HasPrefix(p, "nope") && !strings.Contains(body, "no repository named &#34;nope&#34;") {
			t.Errorf("/%s: %s", p, body)
		}
	}
	if resp, body := get(t, "GET", u+"%3Cscript%3E", ""); resp.StatusCode != 404 || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("/<script>: %s %s", resp.Status, body)
	}
	if resp, _ := get(t, "DELETE", u, ""); resp.StatusCode != 405 {
		t.Errorf("DELETE /: %s", resp.Status)
	}
	if resp, body := get(t, "HEAD", u, ""); resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != fmt.Sprint(len(list)) {
		t.Errorf("HEAD /: %s %q", resp.Status, resp.Header.Get("Content-Length"))
	}
	_ = hostPort

	// The access log has the paths as requested, whoever answered.
	logged := log.String()
	for _, w := range []string{`"GET /team/b?cmd=heads HTTP/1.1" 200`, `"GET /nope HTTP/1.1" 404`, `"GET / HTTP/1.1" 200`, `"GET /a/ HTTP/1.1" 200`} {
		if !strings.Contains(logged, w) {
			t.Errorf("access log lacks %s:\n%s", w, logged)
		}
	}
}

// TestWebDirRoot: a repository named "" is served at the root in place
// of the listing, and paths below it reach it (hgweb's finddirs ends
// with "").
func TestWebDirRoot(t *testing.T) {
	dir := t.TempDir()
	b := cloneFixtureRepo(t, dir, "b")
	s, err := NewServer(b, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	u := serveOn(t, NewWebDir([]WebDirRepo{{Name: "/", Server: s}}, WebDirConfig{Descend: true}))
	_, page := get(t, "GET", u, "")
	if !strings.Contains(page, `<code id="hg-clone">hg clone `+u+` b</code>`) {
		t.Errorf("root page:\n%s", grepLines(page, "clone"))
	}
	if resp, _ := get(t, "GET", u+"x/y", ""); resp.StatusCode != 404 {
		t.Errorf("/x/y: %s", resp.Status)
	}
	cloneFrom(t, u)
}

// cloneFixtureRepo is a small repository without secret changesets,
// with a bookmark.
func cloneFixtureRepo(t *testing.T, dir, name string) string {
	t.Helper()
	root := filepath.Join(dir, name)
	testenv.Hg(t, dir, "init", name)
	if err := os.WriteFile(filepath.Join(root, "f"), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, root, "commit", "-qAm", "in "+name)
	testenv.Hg(t, root, "bookmark", "-i", "mark-"+name)
	return root
}

func grepLines(s, pattern string) string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// rawRequest sends req as written and returns the response's status line.
func rawRequest(t *testing.T, hostPort, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n")
}

// TestReadDenied: hgweb's checkauthz for a reader who is not logged in.
func TestReadDenied(t *testing.T) {
	for _, c := range []struct {
		allow, deny []string
		want        bool
	}{
		{nil, nil, false},
		{[]string{"*"}, nil, false},
		{[]string{"alice", "*"}, nil, false},
		{[]string{"alice"}, nil, true},
		{nil, []string{"bob"}, true},
		{nil, []string{"*"}, true},
		{[]string{"*"}, []string{"bob"}, true},
	} {
		if got := ReadDenied(c.allow, c.deny); got != c.want {
			t.Errorf("ReadDenied(%q, %q) = %v", c.allow, c.deny, got)
		}
	}
}

// FuzzCloneCommands: whatever the Host header, web.baseurl and the
// repository's name, the advertised host is a plain host[:port] and the
// commands a visitor copies are the words they mean to a POSIX shell.
func FuzzCloneCommands(f *testing.F) {
	for _, s := range [][3]string{
		{"127.0.0.1:8000", "", "a"},
		{"[::1]:8000", "", "team/b"},
		{"hg.example.org", "https://hg.example.com/repos/", "we ird"},
		{`evil"><script>`, "", "<script>alert(1)</script>"},
		{"a'b", "//x", ""},
		{"h:1", "http://[::1]:99/a b/", "it's; rm -rf ~"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	hostChars := regexp.MustCompile(`^[A-Za-z0-9.:\[\]_-]+$`)
	f.Fuzz(func(t *testing.T, host, baseURL, name string) {
		r, err := http.NewRequest("GET", "http://127.0.0.1:8000/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Host = host
		if validHost(host) && !hostChars.MatchString(host) {
			t.Fatalf("validHost(%q)", host)
		}
		if h := requestHost(r); !hostChars.MatchString(h) {
			t.Fatalf("requestHost gave %q for Host %q", h, host)
		}
		u := advertisedURL(r, baseURL, escapeName(name))
		hg, hgfs := cloneCommands(u, name)
		for _, cmd := range []string{hg, hgfs} {
			words, ok := shellWords(cmd)
			if !ok || len(words) < 3 {
				t.Fatalf("%q is not shell words", cmd)
			}
			i := 2
			if words[2] == "--mount" {
				i = 3
			}
			if words[i] != u {
				t.Fatalf("%q: URL word %q, want %q", cmd, words[i], u)
			}
			if len(words) > i+1 && (words[i+1] == "" || strings.HasPrefix(words[i+1], "-") || strings.Contains(words[i+1], "/") && !strings.HasPrefix(words[i+1], "./-")) {
				t.Fatalf("%q: directory %q", cmd, words[i+1])
			}
		}
	})
}

// shellWords splits s as a POSIX shell splits words made of safe
// characters and single-quoted strings, refusing anything else.
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	in, started := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\'':
			in = false
		case in:
			cur.WriteByte(c)
		case c == '\'':
			in, started = true, true
		case c == '\\' && i+1 < len(s) && s[i+1] == '\'':
			cur.WriteByte('\'')
			i++
		case c == ' ':
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		case strings.IndexByte("@%+=:,./_-", c) >= 0 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			cur.WriteByte(c)
			started = true
		default:
			return nil, false
		}
	}
	if in {
		return nil, false
	}
	if started {
		words = append(words, cur.String())
	}
	return words, true
}
