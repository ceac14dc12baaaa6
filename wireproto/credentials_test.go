package wireproto

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// seen is what a server was sent: each request's target and headers.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s user=%v", r.Method, r.RequestURI, r.URL.User)
	for k, v := range r.Header {
		fmt.Fprintf(&b, "\n%s: %s", k, strings.Join(v, ", "))
	}
	s.reqs = append(s.reqs, b.String())
}

func (s *seen) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// leaks lists the requests that carried the credentials in any form.
func leaks(reqs []string, user, password string) []string {
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	var out []string
	for _, r := range reqs {
		if strings.Contains(r, password) || strings.Contains(r, basic) || strings.Contains(strings.ToLower(r), "\nauthorization:") {
			out = append(out, r)
		}
	}
	return out
}

// TestRedirectCredentials: credentials given in the URL go to that
// URL's scheme, host and port only. One loopback server redirects
// (every redirect status) to another, which records what it is sent and
// answers as hg serve does (a proxy to a real one): it never sees the
// credentials, on the redirected request nor on the commands after it.
// Where it asks for them, hgfs says what hg 6.3 and hg 7.2 say. A
// redirect within the same server still authenticates, as hg's does.
func TestRedirectCredentials(t *testing.T) {
	hgs := testenv.Mercurials(t)
	repo := fixture(t)
	hgURL, err := url.Parse(testenv.Serve(t, repo))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(hgURL)
	serveHg := func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/"
		proxy.ServeHTTP(w, r)
	}
	challenge := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="hg"`)
		http.Error(w, "authorization required", http.StatusUnauthorized)
		return true
	}

	// other records and answers at /repo, and at /locked only with
	// credentials.
	var otherSeen seen
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherSeen.record(r)
		if r.URL.Path == "/locked" && challenge(w, r) {
			return
		}
		serveHg(w, r)
	}))
	defer other.Close()
	otherURL, _ := url.Parse(other.URL)
	_, otherPort, _ := strings.Cut(otherURL.Host, ":")

	// origin redirects /to/CODE/HOST/PATH to http://HOST/PATH with CODE,
	// and /repo to /repo/sub/, which it serves only with credentials.
	var originSeen seen
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originSeen.record(r)
		if strings.HasPrefix(r.URL.Path, "/repo/sub/") {
			if !challenge(w, r) {
				serveHg(w, r)
			}
			return
		}
		if r.URL.Path == "/repo" {
			http.Redirect(w, r, origin.URL+"/repo/sub/?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
			return
		}
		var code int
		var host, path string
		if _, err := fmt.Sscanf(r.URL.Path, "/to/%d/%s", &code, &host); err != nil {
			http.NotFound(w, r)
			return
		}
		host, path, _ = strings.Cut(host, "/")
		w.Header().Set("Location", "http://"+host+"/"+path+"?"+r.URL.RawQuery)
		w.WriteHeader(code)
	}))
	defer origin.Close()
	const user, password = "user", "s3cret"
	withAuth := func(path string) string {
		u, _ := url.Parse(origin.URL + path)
		u.User = url.UserPassword(user, password)
		return u.String()
	}

	// hgfs's run: what a clone does first (capabilities, then commands
	// at the URL it ended at), and hg's messages.
	ctx := context.Background()
	dial := func(t *testing.T, source string) (stderr string, err error) {
		t.Helper()
		var warn strings.Builder
		p, err := DialHTTP(ctx, source, Options{Stderr: &warn})
		if err == nil {
			if _, err = p.Heads(ctx); err == nil {
				_, err = p.ListKeys(ctx, "bookmarks")
			}
			p.Close()
		}
		if err != nil {
			warn.WriteString("abort: " + err.Error() + "\n")
		}
		return warn.String(), err
	}
	hgClone := func(t *testing.T, m testenv.Mercurial, source string) string {
		t.Helper()
		_, stderr, _ := m.Result(t, "", "clone", "-U", source, filepath.Join(t.TempDir(), "c"))
		return string(stderr)
	}

	for _, code := range []int{301, 302, 303, 307, 308} {
		for _, host := range []string{"127.0.0.1:" + otherPort, "localhost:" + otherPort} {
			t.Run(fmt.Sprintf("%d-%s", code, host), func(t *testing.T) {
				originSeen.take()
				otherSeen.take()
				stderr, err := dial(t, withAuth(fmt.Sprintf("/to/%d/%s/repo", code, host)))
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr)
				}
				if want := "real URL is http://" + host + "/repo\n"; stderr != want {
					t.Errorf("stderr %q, want %q", stderr, want)
				}
				if got := otherSeen.take(); len(got) < 3 {
					t.Errorf("the other server saw %d requests, want capabilities and two commands", len(got))
				} else if l := leaks(got, user, password); len(l) > 0 {
					t.Errorf("the other server was sent the credentials:\n%s", strings.Join(l, "\n\n"))
				}
				if len(leaks(originSeen.take(), user, password)) != 1 {
					t.Errorf("the origin was not sent the credentials")
				}
				if code != http.StatusFound || !strings.HasPrefix(host, "127.") {
					return
				}
				for _, m := range hgs {
					if want := hgClone(t, m, withAuth(fmt.Sprintf("/to/%d/%s/repo", code, host))); stderr != want {
						t.Errorf("hgfs:\n%s%s:\n%s", stderr, m.Name, want)
					}
				}
			})
		}
	}

	// The other server asks for credentials: hgfs has none for it, and
	// says so as hg does.
	t.Run("challenged", func(t *testing.T) {
		source := withAuth("/to/302/127.0.0.1:" + otherPort + "/locked")
		otherSeen.take()
		stderr, err := dial(t, source)
		if err == nil {
			t.Fatalf("no error")
		}
		if l := leaks(otherSeen.take(), user, password); len(l) > 0 {
			t.Errorf("the other server was sent the credentials:\n%s", strings.Join(l, "\n\n"))
		}
		for _, m := range hgs {
			if want := hgClone(t, m, source); stderr != want {
				t.Errorf("hgfs:\n%s%s:\n%s", stderr, m.Name, want)
			}
		}
	})

	// Within the origin, below the URL's path: credentials go along, as
	// they do in hg (which answers the challenge).
	t.Run("same-origin", func(t *testing.T) {
		source := withAuth("/repo")
		originSeen.take()
		stderr, err := dial(t, source)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		for _, m := range hgs {
			if want := hgClone(t, m, source); stderr != want {
				t.Errorf("hgfs:\n%s%s:\n%s", stderr, m.Name, want)
			}
		}
		var sub int
		for _, r := range originSeen.take() {
			if strings.Contains(r, " /repo/sub/") && len(leaks([]string{r}, user, password)) == 1 {
				sub++
			}
		}
		if sub < 3 {
			t.Errorf("%d authenticated requests below the origin's URL, want 3 or more", sub)
		}
	})
}

// TestOrigin: what counts as the same place for credentials.
func TestOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://h/repo", "http://h:80/other", true},
		{"https://H:443/", "https://h/x", true},
		{"http://h/", "https://h/", false},
		{"https://h/", "http://h:443/", false},
		{"http://h:8000/", "http://h:8001/", false},
		{"http://h/", "http://sub.h/", false},
		{"http://[::1]:80/", "http://[::1]/", true},
		{"http://127.0.0.1/", "http://localhost/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin(a) == origin(b); got != tc.same {
			t.Errorf("%s and %s: same %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
