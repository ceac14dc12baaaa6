package wireproto

// The landing page: what a browser (or curl) gets from GET / without
// ?cmd=, in place of hgweb's summary page. It shows the served view only
// (server_view.go: no secret or hidden changeset), so it tells a visitor
// exactly what a clone would bring: the tip, the heads, branches and
// bookmarks, and the commands that clone the repository from the URL the
// request came to.
//
// Everything on it comes from the repository or the request and is
// untrusted: bookmark and branch names, descriptions, user names, the
// Host header. The page is built by html/template (contextual escaping),
// long texts are cut, every list is bounded (pageLimit rows and a count),
// and the Host header is used only if it is a plain host[:port];
// otherwise the address the request came in on is shown. No script and
// no external resource: a Content-Security-Policy allows only the page's
// own style sheet.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hgfs/hgfs/hgfmt"
)

// WebConfig is what a repository's page shows besides the repository
// itself: hg's [web] settings.
type WebConfig struct {
	// Name is web.name; "" shows the name the repository is served
	// under (--web-conf), else its root's base name.
	Name        string
	Description string // web.description
	Contact     string // web.contact
	// BaseURL is web.baseurl: the URL the server is reached at (behind
	// a proxy, say). Its scheme, host and path replace the request's in
	// the clone commands, as hgweb's advertised URL does.
	BaseURL string
	// ReadDenied refuses every request (401), as hgweb refuses a reader
	// web.deny_read or web.allow_read leaves out: hgfs serve knows no
	// users, so any deny_read, or an allow_read without "*", refuses
	// everyone.
	ReadDenied bool
}

// ReadDenied reports whether hgweb's web.allow_read and web.deny_read
// lists refuse a reader who is not logged in (common.checkauthz, with
// ismember for no user).
func ReadDenied(allowRead, denyRead []string) bool {
	if len(denyRead) > 0 {
		return true
	}
	return len(allowRead) > 0 && !slices.Contains(allowRead, "*")
}

// pageLimit bounds each list of a page (heads, branches, bookmarks, the
// repositories of a listing); the page says how many there are.
const pageLimit = 100

// maxShown bounds, in runes, a name or line of text shown.
const maxShown = 200

// webRoute is how a WebDir reached a repository's Server: the name it is
// served under and its advertised URL. A Server serving alone has none.
type webRoute struct {
	name string
	url  string
}

type routeKey struct{}

func routeOf(r *http.Request) *webRoute {
	rt, _ := r.Context().Value(routeKey{}).(*webRoute)
	return rt
}

// changeInfo is one changeset as the page shows it.
type changeInfo struct {
	Rev     int
	Node    string // 40 hex digits
	Short   string // 12
	Date    string // hg's default date format
	User    string
	Branch  string
	Summary string // the description's first line
}

type branchInfo struct {
	Name   string
	Tip    changeInfo
	Heads  int
	Closed bool
}

type markInfo struct {
	Name   string
	Change changeInfo
}

type repoPage struct {
	Name, Description, Contact string
	URL, HgClone, HgfsClone    string

	Tip            *changeInfo
	Heads          []changeInfo
	HeadsTotal     int
	Branches       []branchInfo
	BranchesTotal  int
	Bookmarks      []markInfo
	BookmarksTotal int
}

// readDenied answers as hgweb does when its permission check fails: a
// wire command gets "permission denied", a page says so.
func readDenied(w *logRecorder, wire bool) {
	if wire {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "permission denied")
		return
	}
	writeHTML(w, http.StatusUnauthorized, errorTemplate(), errorPage{Title: "Unauthorized", Message: "read not authorized"})
}

// servePage answers a request without ?cmd=: the landing page at the
// repository's root, a 404 page elsewhere.
func (s *Server) servePage(w *logRecorder, r *http.Request) {
	if r.URL.Path != "/" && r.URL.Path != "" {
		notFoundPage(w, r, "")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w)
		return
	}
	p, err := s.page(r)
	if err != nil {
		s.logError("page: %v", err)
		writeHTML(w, http.StatusInternalServerError, errorTemplate(), errorPage{Title: "Internal Server Error", Message: "the repository could not be read"})
		return
	}
	writeHTML(w, http.StatusOK, repoTemplate(), p)
}

func (s *Server) page(r *http.Request) (*repoPage, error) {
	v, err := s.open()
	if err != nil {
		return nil, err
	}
	defer v.close()
	p := &repoPage{Name: s.cfg.Web.Name, Description: shown(s.cfg.Web.Description), Contact: shown(s.cfg.Web.Contact)}
	rt := routeOf(r)
	if rt == nil {
		rt = &webRoute{url: advertisedURL(r, s.cfg.Web.BaseURL, "") + "/"}
	}
	if p.Name == "" {
		p.Name = rt.name
	}
	if p.Name == "" {
		p.Name = filepath.Base(s.root)
	}
	p.Name = shown(p.Name)
	p.URL = rt.url
	p.HgClone, p.HgfsClone = cloneCommands(rt.url, p.Name)

	info := func(rev int) (changeInfo, error) {
		cs, err := v.r.Changeset(rev)
		if err != nil {
			return changeInfo{}, err
		}
		node := v.r.Node(rev)
		return changeInfo{
			Rev: rev, Node: node.String(), Short: node.Short(),
			Date: hgfmt.Date(cs.Time, cs.TZ), User: shown(cs.User),
			Branch: shown(cs.Branch()), Summary: shown(hgfmt.FirstLine(cs.Description)),
		}, nil
	}
	for rev := v.n - 1; rev >= 0; rev-- {
		if v.served[rev] {
			ci, err := info(rev)
			if err != nil {
				return nil, err
			}
			p.Tip = &ci
			break
		}
	}

	heads := v.heads() // increasing: the newest are shown
	p.HeadsTotal = len(heads)
	for i := len(heads) - 1; i >= 0 && len(p.Heads) < pageLimit; i-- {
		ci, err := info(heads[i])
		if err != nil {
			return nil, err
		}
		p.Heads = append(p.Heads, ci)
	}

	bh, err := v.branchHeads()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(bh))
	for name := range bh {
		names = append(names, name)
	}
	sort.Strings(names)
	p.BranchesTotal = len(names)
	for _, name := range names[:min(len(names), pageLimit)] {
		b, err := branchOf(v, name, bh[name])
		if err != nil {
			return nil, err
		}
		if b.Tip, err = info(b.Tip.Rev); err != nil {
			return nil, err
		}
		p.Branches = append(p.Branches, b)
	}

	marks, err := v.bookmarks()
	if err != nil {
		return nil, err
	}
	names = names[:0]
	for name := range marks {
		names = append(names, name)
	}
	sort.Strings(names)
	p.BookmarksTotal = len(names)
	for _, name := range names[:min(len(names), pageLimit)] {
		rev, _ := v.rev(marks[name])
		ci, err := info(rev)
		if err != nil {
			return nil, err
		}
		p.Bookmarks = append(p.Bookmarks, markInfo{Name: shown(name), Change: ci})
	}
	return p, nil
}

// branchOf describes a branch from its heads (increasing revs): its tip
// is the tipmost open head, else the tipmost head (localrepo.branchtip),
// and it is closed when every head is.
func branchOf(v *view, name string, heads []int) (branchInfo, error) {
	b := branchInfo{Name: shown(name), Heads: len(heads), Closed: true}
	b.Tip.Rev = heads[len(heads)-1]
	for i := len(heads) - 1; i >= 0; i-- {
		cs, err := v.r.Changeset(heads[i])
		if err != nil {
			return b, err
		}
		if _, closed := cs.Extra["close"]; !closed {
			b.Tip.Rev, b.Closed = heads[i], false
			break
		}
	}
	return b, nil
}

// shown makes untrusted text fit for a page: valid UTF-8, at most
// maxShown runes (cut with an ellipsis). Escaping is the template's.
func shown(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= maxShown {
		return s
	}
	n := 0
	for i := range s {
		if n == maxShown {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// advertisedURL is the URL of the application at appPath (a repository
// of a WebDir, or "" for the server's root), without a trailing slash,
// as hgweb's request.advertisedurl builds it: web.baseurl's scheme, host
// and path when they are set, else the request's scheme and Host.
func advertisedURL(r *http.Request, baseURL, appPath string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := requestHost(r)
	prefix := ""
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err == nil {
			if u.Scheme == "http" || u.Scheme == "https" {
				scheme = u.Scheme
			}
			if u.Host != "" && validHost(u.Host) {
				host = u.Host
			}
		}
		prefix = basePath(baseURL)
	}
	return scheme + "://" + host + prefix + appPath
}

// requestHost is the Host header when it is a plain host[:port], else the
// local address the request came in on: a forged Host must not put
// anything but a host into the commands a visitor copies.
func requestHost(r *http.Request) string {
	if validHost(r.Host) {
		return r.Host
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return "localhost"
}

// hostNameRE is compiled when first used (see serverSafe).
var hostNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?)*\.?$`)
})

// validHost reports whether h is a DNS name, an IPv4 address or a
// bracketed IPv6 address, with an optional decimal port.
func validHost(h string) bool {
	if h == "" || len(h) > 261 {
		return false
	}
	name, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		if ip := net.ParseIP(h[1:end]); ip == nil || ip.To4() != nil {
			return false
		}
		name, port = "", h[end+1:]
		if port != "" && port[0] != ':' {
			return false
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		name, port = h[:i], h[i:]
	}
	if port != "" {
		n, err := strconv.Atoi(port[1:])
		if err != nil || n < 0 || n > 65535 || port[1] == '+' || port[1] == '-' {
			return false
		}
	}
	return name == "" && strings.HasPrefix(h, "[") || len(name) <= 253 && hostNameRE().MatchString(name)
}

// cloneCommands are the commands a visitor copies: hg clone of the URL
// (with a destination when the URL names none hg would derive) and
// hgfs clone --mount into a directory named after the repository, each
// word quoted for a POSIX shell where it needs it (serverQuote).
func cloneCommands(u, name string) (hg, hgfs string) {
	dir := path.Base(strings.TrimRight(name, "/"))
	if dir == "." || dir == "/" || dir == ".." || dir == "" {
		dir = "repo"
	}
	if strings.HasPrefix(dir, "-") {
		dir = "./" + dir // a directory, not an option
	}
	hg = "hg clone " + serverQuote(u)
	if pu, err := url.Parse(u); err != nil || strings.Trim(pu.Path, "/") == "" {
		hg += " " + serverQuote(dir)
	}
	return hg, "hgfs clone --mount " + serverQuote(u) + " " + serverQuote(dir)
}

// writeHTML renders a page whole before sending it, so that a failure
// is a 500 rather than half a page, and HEAD gets the same headers as
// GET.
func writeHTML(w http.ResponseWriter, code int, t *template.Template, data any) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		code = http.StatusInternalServerError
		b.Reset()
		b.WriteString("<!DOCTYPE html><title>Internal Server Error</title><p>Internal Server Error</p>\n")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

type errorPage struct{ Title, Message string }

// notFoundPage is the 404 page; name, if any, is the repository asked for.
func notFoundPage(w http.ResponseWriter, r *http.Request, name string) {
	msg := "nothing is served at this address"
	if name != "" {
		msg = fmt.Sprintf("no repository named %q is served here", shown(name))
	}
	writeHTML(w, http.StatusNotFound, errorTemplate(), errorPage{Title: "Not Found", Message: msg})
}

func methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "GET, HEAD")
	writeHTML(w, http.StatusMethodNotAllowed, errorTemplate(), errorPage{Title: "Method Not Allowed", Message: "pages answer GET and HEAD"})
}

// pageStyle is every page's only style sheet, allowed by its hash.
const pageStyle = `
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--code:#151b23;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.5rem;border-bottom:1px solid var(--line)}
h1{font-size:1.6rem;margin:0 0 .25rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.count,.muted,footer{color:var(--muted)}
.desc{margin:.25rem 0 1rem}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;overflow-x:auto;margin:.4rem 0}
code,.mono{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.3rem .6rem .3rem 0;border-bottom:1px solid var(--line);vertical-align:top}
td{overflow-wrap:anywhere}
th{font-weight:600;font-size:.85rem;color:var(--muted)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
a{color:var(--accent)}
.tag{font-size:.75rem;border:1px solid var(--line);border-radius:1em;padding:0 .5em;margin-left:.4em;color:var(--muted)}
footer{font-size:.8rem;padding:2rem 1rem}
`

var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

const pageHead = `{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}</title>
<style>` + pageStyle + `</style>
</head>
{{end}}{{define "foot"}}<footer>Served read-only by hgfs serve over Mercurial's wire protocol.</footer>
</body>
</html>
{{end}}`

const changeCell = `{{define "change"}}<span class="mono" title="{{.Node}}">{{.Rev}}:{{.Short}}</span>{{end}}`

// repoTemplate is parsed on first use, as are the other pages': parsing
// them at start-up cost every command a quarter of a millisecond.
var repoTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("repo").Parse(pageHead + changeCell + `{{template "head" .Name}}<body>
<header>
<h1 id="name">{{.Name}}</h1>
{{with .Description}}<p class="desc">{{.}}</p>{{end}}
{{with .Contact}}<p class="muted">Contact: {{.}}</p>{{end}}
</header>
<main>
<section id="clone">
<h2>Clone</h2>
<p class="muted">With Mercurial, or with hgfs into a mounted cache:</p>
<pre><code id="hg-clone">{{.HgClone}}</code></pre>
<pre><code id="hgfs-clone">{{.HgfsClone}}</code></pre>
</section>
<section id="tip">
<h2>Tip</h2>
{{with .Tip}}<dl>
<dt>changeset</dt><dd id="tip-change">{{template "change" .}}</dd>
<dt>node</dt><dd class="mono" id="tip-node">{{.Node}}</dd>
<dt>date</dt><dd id="tip-date">{{.Date}}</dd>
<dt>user</dt><dd>{{.User}}</dd>
<dt>branch</dt><dd>{{.Branch}}</dd>
<dt>summary</dt><dd id="tip-summary">{{.Summary}}</dd>
</dl>{{else}}<p>The repository is empty.</p>{{end}}
</section>
<section id="heads">
<h2>Heads <span class="count">({{.HeadsTotal}})</span></h2>
{{if .Heads}}<table>
<thead><tr><th>changeset</th><th>branch</th><th>date</th><th>summary</th></tr></thead>
<tbody>{{range .Heads}}
<tr><td>{{template "change" .}}</td><td>{{.Branch}}</td><td>{{.Date}}</td><td>{{.Summary}}</td></tr>{{end}}
</tbody></table>
{{if gt .HeadsTotal (len .Heads)}}<p class="muted more">The newest {{len .Heads}} of {{.HeadsTotal}} heads.</p>{{end}}
{{else}}<p class="muted">None.</p>{{end}}
</section>
<section id="branches">
<h2>Branches <span class="count">({{.BranchesTotal}})</span></h2>
{{if .Branches}}<table>
<thead><tr><th>branch</th><th>tip</th><th>heads</th><th>date</th></tr></thead>
<tbody>{{range .Branches}}
<tr><td>{{.Name}}{{if .Closed}}<span class="tag">closed</span>{{end}}</td><td>{{template "change" .Tip}}</td><td>{{.Heads}}</td><td>{{.Tip.Date}}</td></tr>{{end}}
</tbody></table>
{{if gt .BranchesTotal (len .Branches)}}<p class="muted more">The first {{len .Branches}} of {{.BranchesTotal}} branches, by name.</p>{{end}}
{{else}}<p class="muted">None.</p>{{end}}
</section>
<section id="bookmarks">
<h2>Bookmarks <span class="count">({{.BookmarksTotal}})</span></h2>
{{if .Bookmarks}}<table>
<thead><tr><th>bookmark</th><th>changeset</th><th>date</th><th>summary</th></tr></thead>
<tbody>{{range .Bookmarks}}
<tr><td>{{.Name}}</td><td>{{template "change" .Change}}</td><td>{{.Change.Date}}</td><td>{{.Change.Summary}}</td></tr>{{end}}
</tbody></table>
{{if gt .BookmarksTotal (len .Bookmarks)}}<p class="muted more">The first {{len .Bookmarks}} of {{.BookmarksTotal}} bookmarks, by name.</p>{{end}}
{{else}}<p class="muted">None.</p>{{end}}
</section>
</main>
{{template "foot"}}`))
})

// errorTemplate is parsed on first use, as repoTemplate.
var errorTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("error").Parse(pageHead + `{{template "head" .Title}}<body>
<header><h1>{{.Title}}</h1></header>
<main><p>{{.Message}}</p></main>
{{template "foot"}}`))
})
