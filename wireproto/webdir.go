package wireproto

// Several repositories under one address, as hg serve --web-conf serves
// them (mercurial/hgweb/hgwebdir_mod.py): each repository answers both
// its page and the wire protocol at /NAME (hg clone http://host/NAME),
// and / lists them.
//
// Routing follows hgwebdir's _runwsgi, with PATH_INFO as the request
// path stripped of slashes ("virtual"):
//
//   - "" or "index", unless a repository has that name: the listing;
//   - "DIR/index", unless a repository has that name, with repositories
//     under DIR/: the listing of DIR/;
//   - the longest of virtual and its parent directories ("a/b/c", "a/b",
//     "a", "") that names a repository: that repository, the rest of
//     the path being the path within it (so "/NAME/x?cmd=heads" is the
//     404 a single repository answers for it);
//   - a directory holding repositories ("DIR"): the listing of DIR/;
//   - anything else: 404.
//
// The repositories are fixed when the WebDir is made (hg re-reads its
// configuration every web.refreshinterval seconds; restart hgfs serve
// instead).

import (
	"context"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/hgfmt"
)

// WebDirRepo is one repository a WebDir serves.
type WebDirRepo struct {
	// Name is the URL path it is served under, slashes allowed
	// ("team/project"); "" serves it at the root in place of the
	// listing, as hgweb does.
	Name   string
	Server *Server
	// Hidden is web.hidden: served, but not listed.
	Hidden bool
}

// WebDirConfig is hgwebdir's [web] settings that hgfs serve honours.
type WebDirConfig struct {
	// BaseURL is web.baseurl: the URL the listing is reached at; each
	// repository is advertised at BaseURL/NAME.
	BaseURL string
	// Descend is web.descend (hg's default: true): a listing shows the
	// repositories of its subdirectories too, not only its own.
	Descend bool
	// AccessLog receives hg-style lines for the requests the WebDir
	// answers itself (listings, 404s); the repositories' Servers log
	// theirs. nil discards.
	AccessLog io.Writer
}

// WebDir serves several repositories. It is an http.Handler, safe for
// concurrent use.
type WebDir struct {
	cfg   WebDirConfig
	repos map[string]*WebDirRepo
	names []string // sorted
	logMu sync.Mutex
}

// dirLimit bounds the repositories one listing shows.
const dirLimit = 1000

// NewWebDir serves repos. Names are stripped of leading and trailing
// slashes; of two repositories with one name the later is served, as
// hgwebdir's dict of them keeps it.
func NewWebDir(repos []WebDirRepo, cfg WebDirConfig) *WebDir {
	d := &WebDir{cfg: cfg, repos: map[string]*WebDirRepo{}}
	for _, r := range repos {
		r.Name = strings.Trim(r.Name, "/")
		d.repos[r.Name] = &r
	}
	for name := range d.repos {
		d.names = append(d.names, name)
	}
	sort.Strings(d.names)
	return d
}

// ServeHTTP implements http.Handler.
func (d *WebDir) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	virtual := strings.Trim(r.URL.Path, "/")
	if _, ok := d.repos[virtual]; !ok {
		if virtual == "" || virtual == "index" {
			d.listing(w, r, "")
			return
		}
		if sub, ok := strings.CutSuffix(virtual, "/index"); ok && d.hasUnder(sub+"/") {
			d.listing(w, r, sub+"/")
			return
		}
	}
	for name := virtual; ; {
		if repo, ok := d.repos[name]; ok {
			d.serveRepo(w, r, repo, virtual[len(name):])
			return
		}
		if name == "" {
			break
		}
		i := strings.LastIndexByte(name, '/')
		name = name[:max(i, 0)]
	}
	if d.hasUnder(virtual + "/") {
		d.listing(w, r, virtual+"/")
		return
	}
	rec := &logRecorder{ResponseWriter: w, status: http.StatusOK}
	defer d.logAccess(r, rec)
	notFoundPage(rec, r, virtual)
}

// serveRepo hands the request to the repository's Server with the path
// within the repository, keeping RequestURI for the access log.
func (d *WebDir) serveRepo(w http.ResponseWriter, r *http.Request, repo *WebDirRepo, rest string) {
	app := escapeName(repo.Name)
	u := advertisedURL(r, d.cfg.BaseURL, app)
	if repo.Name == "" {
		u += "/"
	}
	r2 := r.Clone(context.WithValue(r.Context(), routeKey{}, &webRoute{name: repo.Name, url: u}))
	r2.URL.Path = "/" + strings.TrimLeft(rest, "/")
	r2.URL.RawPath = ""
	repo.Server.ServeHTTP(w, r2)
}

// escapeName is a repository's path, "/a/b" for "a/b", each part
// escaped for a URL ("" for the root).
func escapeName(name string) string {
	if name == "" {
		return ""
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/" + strings.Join(parts, "/")
}

// hasUnder reports whether a repository's name starts with prefix.
func (d *WebDir) hasUnder(prefix string) bool {
	i := sort.SearchStrings(d.names, prefix)
	return i < len(d.names) && strings.HasPrefix(d.names[i], prefix)
}

type dirEntry struct {
	Name, URL, Description, Contact, LastChange string
}

type dirPage struct {
	Title   string
	Subdir  string
	Up      string // link to the parent listing, "" at the top
	Entries []dirEntry
	Total   int
}

// listing answers the list of the repositories under subdir ("" or
// "DIR/"), as hgwebdir's makeindex: hidden ones, refused ones
// (web.deny_read) and, without web.descend, those of subdirectories
// left out.
func (d *WebDir) listing(w http.ResponseWriter, r *http.Request, subdir string) {
	rec := &logRecorder{ResponseWriter: w, status: http.StatusOK}
	defer d.logAccess(r, rec)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(rec)
		return
	}
	base := basePath(d.cfg.BaseURL)
	p := dirPage{Title: "Mercurial repositories", Subdir: shown(subdir)}
	if subdir != "" {
		p.Title += " in " + p.Subdir
		up := ""
		if i := strings.LastIndexByte(strings.TrimSuffix(subdir, "/"), '/'); i >= 0 {
			up = subdir[:i+1]
		}
		p.Up = base + escapeName(strings.TrimSuffix(up, "/")) + "/"
	}
	for _, name := range d.names {
		rel, ok := strings.CutPrefix(name, subdir)
		repo := d.repos[name]
		if !ok || rel == "" || repo.Hidden || repo.Server.cfg.Web.ReadDenied || (!d.cfg.Descend && strings.Contains(rel, "/")) {
			continue
		}
		p.Total++
		if len(p.Entries) == dirLimit {
			continue
		}
		web := repo.Server.cfg.Web
		e := dirEntry{Name: web.Name, URL: base + escapeName(name) + "/", Description: web.Description, Contact: web.Contact}
		if e.Name == "" {
			e.Name = rel
		}
		e.Name, e.Description, e.Contact = shown(e.Name), shown(e.Description), shown(e.Contact)
		if t, ok := lastChange(repo.Server.root); ok {
			e.LastChange = t
		}
		p.Entries = append(p.Entries, e)
	}
	writeHTML(rec, http.StatusOK, dirTemplate(), p)
}

// lastChange is hgweb's get_mtime of the store: the later of the
// store's and its changelog's modification times.
func lastChange(root string) (string, bool) {
	var latest int64
	found := false
	for _, p := range []string{".hg/store", ".hg/store/00changelog.i", ".hg/00changelog.i"} {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			found = true
			latest = max(latest, fi.ModTime().Unix())
		}
	}
	return hgfmt.Date(latest, 0), found
}

// basePath is web.baseurl's path without its trailing slash ("" when
// none is set), the prefix of every link a listing makes.
func basePath(baseURL string) string {
	if baseURL == "" {
		return ""
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

func (d *WebDir) logAccess(r *http.Request, rec *logRecorder) {
	writeAccessLog(d.cfg.AccessLog, &d.logMu, r, rec.status)
}

// dirTemplate is parsed on first use, as repoTemplate.
var dirTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("dir").Parse(pageHead + `{{template "head" .Title}}<body>
<header>
<h1>{{.Title}}</h1>
{{with .Up}}<p><a href="{{.}}">↑ parent directory</a></p>{{end}}
</header>
<main>
{{if .Entries}}<table id="repositories">
<thead><tr><th>repository</th><th>description</th><th>contact</th><th>last change</th></tr></thead>
<tbody>{{range .Entries}}
<tr><td><a href="{{.URL}}">{{.Name}}</a></td><td>{{.Description}}</td><td>{{.Contact}}</td><td>{{.LastChange}}</td></tr>{{end}}
</tbody></table>
{{if gt .Total (len .Entries)}}<p class="muted more">The first {{len .Entries}} of {{.Total}} repositories.</p>{{end}}
{{else}}<p class="muted">No repositories are listed here.</p>{{end}}
</main>
{{template "foot"}}`))
})
