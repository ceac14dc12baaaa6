package main

// Clone bundles against real Mercurial: a server (hg serve with the
// clonebundles extension, or hgfs serve) whose .hg/clonebundles.manifest
// points at bundles made by real hg and served by a separate HTTP
// server on loopback; hg clone and hgfs clone must both use the bundle
// and end equal to each other and to a plain clone.

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// bundleServer serves a directory's files over HTTP and counts requests
// by path; it records whether any request carried credentials.
type bundleServer struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int
	authed []string
}

func startBundleServer(t *testing.T, dir string) *bundleServer {
	t.Helper()
	bs := &bundleServer{hits: map[string]int{}}
	files := http.FileServer(http.Dir(dir))
	bs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bs.mu.Lock()
		bs.hits[r.URL.Path]++
		if r.Header.Get("Authorization") != "" {
			bs.authed = append(bs.authed, r.URL.Path)
		}
		bs.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(bs.Close)
	return bs
}

func (bs *bundleServer) count(path string) int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.hits[path]
}

func (bs *bundleServer) total() int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	n := 0
	for _, c := range bs.hits {
		n += c
	}
	return n
}

// cloneBundleKinds are the bundles a manifest lists: the hg command
// making each and its BUNDLESPEC. Phases are not compared where a clone
// cannot or hg does not keep them:
//
//   - packed1 carries no phaseroots, so everything it brings is public
//     (in hg's clone and hgfs's alike), drafts of the server included;
//   - a stream v2 bundle carries them, but hg's clone loses them: its
//     phase cache, read before the stream, is written over the streamed
//     phaseroots when the bundleurl transaction closes, and the pull that
//     follows cannot turn public changesets back to draft. hgfs keeps the
//     streamed phases, so its clone has the server's, as a plain clone.
var cloneBundleKinds = []struct {
	name, spec string
	make       []string // hg arguments; the file name is appended
	// phasesAsHg, phasesAsPlain: whether the clone's phases are hg's
	// clone's, and a plain clone's.
	phasesAsHg, phasesAsPlain bool
}{
	{"zstd-v2", "zstd-v2", []string{"bundle", "-q", "-a", "-t", "zstd-v2"}, true, true},
	{"gzip-v1", "gzip-v1", []string{"bundle", "-q", "-a", "-t", "gzip-v1"}, true, true},
	{"stream-v2", "none-v2;stream=v2", []string{"bundle", "-q", "-a", "-t", "none-v2;stream=v2"}, false, true},
	{"packed1", "none-packed1", []string{"debugcreatestreamclonebundle"}, true, false},
}

// withoutPhases drops the phase lines of hg log --debug output.
func withoutPhases(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "phase:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// cloneBundleSource is cloneFixture with bundles made by hg 6.3 (in
// www/, early-KIND.hg before two more commits and a bookmark move,
// full-KIND.hg after them).
func cloneBundleSource(t *testing.T, dir string) (src, www string) {
	t.Helper()
	src = cloneFixture(t, dir)
	www = filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	makeAll := func(prefix string) {
		for _, k := range cloneBundleKinds {
			testenv.Hg(t, src, append(append([]string{}, k.make...), filepath.Join(www, prefix+k.name+".hg"))...)
		}
	}
	makeAll("early-")
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("hello\nagain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, src, "commit", "-qm", "after the bundles")
	testenv.Hg(t, src, "bookmark", "-f", "-r", ".", "feature")
	if err := os.WriteFile(filepath.Join(src, "new"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, src, "commit", "-qAm", "more after the bundles")
	makeAll("full-")
	return src, www
}

func writeManifest(t *testing.T, src, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(src, ".hg", "clonebundles.manifest"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cloneLog is the history a clone must hold, as hg log --debug shows it
// (phases and bookmarks included).
func cloneLog(t *testing.T, repo string) string {
	t.Helper()
	return string(testenv.Hg(t, repo, "log", "--debug", "-r", "all()"))
}

// cloneBundleSetup makes cloneBundleSource in a temporary directory,
// serves its bundles, and returns the history a plain clone of it holds.
func cloneBundleSetup(t *testing.T) (dir, src string, bs *bundleServer, want string) {
	t.Helper()
	dir = t.TempDir()
	src, www := cloneBundleSource(t, dir)
	bs = startBundleServer(t, www)
	plain := filepath.Join(dir, "plain")
	testenv.Hg(t, dir, "clone", "-q", "-U", "--config", "ui.clonebundles=false", src, plain)
	return dir, src, bs, cloneLog(t, plain)
}

func TestCloneBundles(t *testing.T) {
	t.Parallel()
	_, src, bs, want := cloneBundleSetup(t)

	for _, m := range testenv.Mercurials(t) {
		// The bundles predate the last changesets: the clones pull them
		// from the server.
		servers := []struct {
			name string
			url  func() string
		}{
			{"hg-serve", func() string { return m.Serve(t, src, "--config", "extensions.clonebundles=") }},
			{"hgfs-serve", func() string { url, _, _ := startServeBinary(t, src); return url }},
		}
		for _, srv := range servers {
			for _, k := range cloneBundleKinds {
				t.Run(m.Name+"/"+srv.name+"/"+k.name, func(t *testing.T) {
					file := "/early-" + k.name + ".hg"
					// The first entry's spec is one no client applies: it is
					// skipped without a request.
					writeManifest(t, src, bs.URL+"/never.hg BUNDLESPEC=xz-v2\n"+
						bs.URL+file+" BUNDLESPEC="+strings.ReplaceAll(k.spec, ";", "%3B")+" extra=1\n")
					url := srv.url()
					sub := t.TempDir()
					before := bs.count(file)
					hgDest, hgfsDest := filepath.Join(sub, "hg"), filepath.Join(sub, "hgfs")
					hgOut := string(m.Run(t, sub, "clone", "-U", url, hgDest))
					if !strings.Contains(hgOut, "finished applying clone bundle\n") {
						t.Fatalf("%s did not use the clone bundle:\n%s", m.Name, hgOut)
					}
					stdout, stderr, code := hgfsClone(t, sub, "-U", url, hgfsDest)
					if code != 0 {
						t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
					}
					if got := bs.count(file) - before; got != 2 {
						t.Errorf("%s fetched %d times, want once by each clone", file, got)
					}
					if n := bs.count("/never.hg"); n != 0 {
						t.Errorf("the unsupported entry was fetched %d times", n)
					}
					// hg's messages, less the transfer rates.
					if g, w := stableCloneOutput(stdout), stableCloneOutput(hgOut); g != w {
						t.Errorf("output differs from %s's:\n%s", m.Name, testenv.Diff(m.Name, w, "hgfs", g))
					}
					g, w := repoState(t, hgfsDest, true), repoState(t, hgDest, false)
					if !k.phasesAsHg {
						g, w = withoutPhases(g), withoutPhases(w)
					}
					if g != w {
						t.Errorf("clone differs from %s's:\n%s", m.Name, testenv.Diff(m.Name, w, "hgfs", g))
					}
					g, w = cloneLog(t, hgfsDest), want
					if !k.phasesAsPlain {
						g, w = withoutPhases(g), withoutPhases(w)
					}
					if g != w {
						t.Errorf("clone differs from a plain clone:\n%s", testenv.Diff("plain", w, "hgfs", g))
					}
				})
			}
		}
	}
}

// stableCloneOutput drops what varies between two runs and two
// implementations: the transfer rate, and hg 7's name for it.
func stableCloneOutput(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "transferred ") || strings.HasPrefix(l, "stream-cloned ") {
			l = "transferred ...\n"
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// TestCloneBundleFailures: an entry whose download fails aborts the clone
// with hg's messages, leaving nothing, or with ui.clonebundlefallback
// clones normally; ui.clonebundles=false asks for no manifest and no
// bundle.
func TestCloneBundleFailures(t *testing.T) {
	t.Parallel()
	dir, src, bs, want := cloneBundleSetup(t)
	// A port nothing listens on: a listener opened and closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x.hg"
	ln.Close()

	for _, m := range testenv.Mercurials(t) {
		url := m.Serve(t, src, "--config", "extensions.clonebundles=")
		for _, c := range []struct{ name, entry string }{
			{"404", bs.URL + "/missing.hg BUNDLESPEC=zstd-v2"},
			{"refused", refused + " BUNDLESPEC=zstd-v2"},
		} {
			for _, fallback := range []bool{false, true} {
				name := c.name
				if fallback {
					name += "-fallback"
				}
				t.Run(m.Name+"/"+name, func(t *testing.T) {
					writeManifest(t, src, c.entry+"\n")
					sub := t.TempDir()
					args := []string{"-U", url}
					if fallback {
						args = append(args, "--config", "ui.clonebundlefallback=true")
					}
					hgOut, hgErr, hgErrExit := m.Result(t, sub, append([]string{"clone"}, append(args, filepath.Join(sub, "hg"))...)...)
					stdout, stderr, code := hgfsClone(t, sub, append(args, filepath.Join(sub, "hgfs"))...)
					if (hgErrExit == nil) != (code == 0) || (code == 0) != fallback {
						t.Fatalf("%s clone: %v; hgfs clone: exit %d\n%s%s", m.Name, hgErrExit, code, stdout, stderr)
					}
					if stderr != string(hgErr) {
						t.Errorf("stderr differs from %s's:\n%s", m.Name, testenv.Diff(m.Name, string(hgErr), "hgfs", stderr))
					}
					if g, w := stableCloneOutput(stdout), stableCloneOutput(string(hgOut)); g != w {
						t.Errorf("output differs from %s's:\n%s", m.Name, testenv.Diff(m.Name, w, "hgfs", g))
					}
					if !fallback {
						if _, err := os.Lstat(filepath.Join(sub, "hgfs")); !os.IsNotExist(err) {
							t.Errorf("the failed clone left its destination (%v)", err)
						}
						return
					}
					if g := cloneLog(t, filepath.Join(sub, "hgfs")); g != want {
						t.Errorf("clone differs from a plain clone:\n%s", testenv.Diff("plain", want, "hgfs", g))
					}
				})
			}
		}
	}

	t.Run("disabled", func(t *testing.T) {
		writeManifest(t, src, bs.URL+"/full-zstd-v2.hg BUNDLESPEC=zstd-v2\n")
		log := filepath.Join(dir, "access.log")
		url, _, _ := startServeBinary(t, src, "-A", log)
		before := bs.total()
		sub := t.TempDir()
		stdout, stderr, code := hgfsClone(t, sub, "-U", "--config", "ui.clonebundles=false", url, filepath.Join(sub, "hgfs"))
		if code != 0 {
			t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
		}
		if n := bs.total() - before; n != 0 {
			t.Errorf("%d bundle requests with ui.clonebundles=false", n)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "cmd=clonebundles") {
			t.Errorf("the manifest was asked for with ui.clonebundles=false:\n%s", data)
		}
		if !strings.Contains(string(data), "cmd=capabilities") {
			t.Errorf("the access log shows no request:\n%s", data)
		}
	})
}

// TestCloneBundleCredentials: the hg server's credentials are not sent to
// the bundle's host.
func TestCloneBundleCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, www := cloneBundleSource(t, dir)
	bs := startBundleServer(t, www)
	writeManifest(t, src, bs.URL+"/full-stream-v2.hg BUNDLESPEC=none-v2%3Bstream%3Dv2\n")
	url, _, _ := startServeBinary(t, src)
	url = strings.Replace(url, "http://", "http://alice:secret@", 1)
	sub := t.TempDir()
	stdout, stderr, code := hgfsClone(t, sub, "-U", url, filepath.Join(sub, "hgfs"))
	if code != 0 {
		t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
	}
	if bs.count("/full-stream-v2.hg") != 1 {
		t.Fatalf("the bundle was not fetched:\n%s%s", stdout, stderr)
	}
	if len(bs.authed) > 0 {
		t.Errorf("credentials sent to the bundle server for %v", bs.authed)
	}
}

// TestCloneBundlePrefers: ui.clonebundleprefers and --stream choose the
// entry hg chooses.
func TestCloneBundlePrefers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, www := cloneBundleSource(t, dir)
	bs := startBundleServer(t, www)
	manifest := bs.URL + "/early-gzip-v1.hg BUNDLESPEC=gzip-v1\n" +
		bs.URL + "/early-zstd-v2.hg BUNDLESPEC=zstd-v2 REQUIRESNI=true\n" +
		bs.URL + "/early-packed1.hg BUNDLESPEC=none-packed1\n" +
		bs.URL + "/early-stream-v2.hg BUNDLESPEC=none-v2%3Bstream%3Dv2\n"
	writeManifest(t, src, manifest)
	for _, m := range testenv.Mercurials(t) {
		url := m.Serve(t, src, "--config", "extensions.clonebundles=")
		for _, c := range []struct {
			name string
			args []string
		}{
			{"first", nil},
			{"zstd", []string{"--config", "ui.clonebundleprefers=COMPRESSION=zstd"}},
			{"v2-then-none", []string{"--config", "ui.clonebundleprefers=VERSION=v2,COMPRESSION=none"}},
			{"packed1", []string{"--config", "ui.clonebundleprefers=VERSION=packed1"}},
			{"stream", []string{"--stream"}},
		} {
			t.Run(m.Name+"/"+c.name, func(t *testing.T) {
				sub := t.TempDir()
				hgOut := string(m.Run(t, sub, append(append([]string{"clone", "-U"}, c.args...), url, filepath.Join(sub, "hg"))...))
				stdout, stderr, code := hgfsClone(t, sub, append(append([]string{"-U"}, c.args...), url, filepath.Join(sub, "hgfs"))...)
				if code != 0 {
					t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
				}
				hgLine, _, _ := strings.Cut(hgOut, "\n")
				line, _, _ := strings.Cut(stdout, "\n")
				if !strings.HasPrefix(hgLine, "applying clone bundle from ") || line != hgLine {
					t.Errorf("hgfs: %q, %s: %q", line, m.Name, hgLine)
				}
			})
		}
	}
}

// TestBundleType: the bundle types hgfs bundle -t takes, now read through
// bundle2.ParseSpec.
func TestBundleType(t *testing.T) {
	for spec, want := range map[string]string{
		"packed1": "packed1", "none-packed1": "packed1", "v2": "v2", "v2;stream=v2": "v2", "none-v2;stream=v2": "v2",
		"none-v1": "HG10UN", "gzip-v1": "HG10GZ", "none-v2": "HG20-02", "none-v2;cg.version=02": "HG20-02",
		"none-v2;cg.version=03": "HG20-03", "v2;cg.version=02": "v2",
		"zstd-v2": "HG20ZS-02", "zstd-v2;cg.version=03": "HG20ZS-03", "zstd-v2;stream=v2": "",
		"bzip2-v1": "", "gzip-v2": "", "none-v3": "", "none-v2;cg.version=01": "", "none-v1;cg.version=02": "",
		"none-v2;stream=v3-exp": "", "none-v2;stream=v2;cg.version=03": "", "v2;cg.version=03": "", "gzip-packed1": "",
		"none-packed1;x=y": "", "": "", "xz-v2": "", "none-v2;phases=yes": "",
	} {
		got, ok := bundleType(spec)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("bundleType(%q) = %q, %v; want %q", spec, got, ok, want)
		}
	}
}

// TestCloneBundleApplyFailure: a bundle that downloads but does not apply
// aborts the clone, as in hg, and leaves no destination behind.
func TestCloneBundleApplyFailure(t *testing.T) {
	t.Parallel()
	_, src, bs, _ := cloneBundleSetup(t)
	www := filepath.Join(filepath.Dir(src), "www")
	for _, k := range []string{"zstd-v2", "stream-v2", "packed1"} {
		data, err := os.ReadFile(filepath.Join(www, "early-"+k+".hg"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(www, "cut-"+k+".hg"), data[:len(data)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := testenv.Default(t)
	url := m.Serve(t, src, "--config", "extensions.clonebundles=")
	for _, k := range cloneBundleKinds {
		if k.name == "gzip-v1" {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			writeManifest(t, src, bs.URL+"/cut-"+k.name+".hg BUNDLESPEC="+strings.ReplaceAll(k.spec, ";", "%3B")+"\n")
			sub := t.TempDir()
			_, _, hgErr := m.Result(t, sub, "clone", "-U", url, filepath.Join(sub, "hg"))
			stdout, stderr, code := hgfsClone(t, sub, "-U", "--config", "ui.clonebundlefallback=true", url, filepath.Join(sub, "hgfs"))
			if hgErr == nil || code == 0 {
				t.Fatalf("%s clone: %v; hgfs clone: exit %d\n%s%s", m.Name, hgErr, code, stdout, stderr)
			}
			if !strings.HasPrefix(stdout, "applying clone bundle from ") || !strings.Contains(stderr, "abort: ") {
				t.Errorf("hgfs clone:\n%s%s", stdout, stderr)
			}
			for _, d := range []string{"hg", "hgfs"} {
				if _, err := os.Lstat(filepath.Join(sub, d)); !os.IsNotExist(err) {
					t.Errorf("%s's failed clone left its destination (%v)", d, err)
				}
			}
		})
	}
}

// TestCloneBundleSSH: over ssh, the manifest comes by the clonebundles
// command of hg serve --stdio.
func TestCloneBundleSSH(t *testing.T) {
	t.Parallel()
	dir, src, bs, want := cloneBundleSetup(t)
	hgrc := filepath.Join(dir, "remote.hgrc")
	if err := os.WriteFile(hgrc, []byte("[extensions]\nclonebundles =\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ssh := fakeSSHScript(t, dir, hgrc)
	writeManifest(t, src, bs.URL+"/early-zstd-v2.hg BUNDLESPEC=zstd-v2\n")
	sub := t.TempDir()
	stdout, stderr, code := hgfsClone(t, sub, "-U", "-e", ssh, "ssh://user@host/"+src, filepath.Join(sub, "hgfs"))
	if code != 0 {
		t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
	}
	if bs.count("/early-zstd-v2.hg") != 1 || !strings.Contains(stdout, "finished applying clone bundle\n") {
		t.Errorf("the clone bundle was not used:\n%s%s", stdout, stderr)
	}
	if g := cloneLog(t, filepath.Join(sub, "hgfs")); g != want {
		t.Errorf("clone differs from a plain clone:\n%s", testenv.Diff("plain", want, "hgfs", g))
	}
}
