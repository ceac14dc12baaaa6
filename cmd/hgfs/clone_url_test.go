package main

// hgfs clone of a bundle URL (clone_url.go): bundles made by real hg,
// served over HTTP on loopback and from a real SeaweedFS, cloned into a
// directory and into a mount; each clone must hold what real hg makes of
// the same bundle file. Failures leave nothing behind.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/hgfs/hgfs/testenv"
)

// urlBundleKinds are the bundles cloned from URLs (by hg 6.3) and how
// real hg makes a repository of the same file: hg clone for a
// changegroup bundle; a stream bundle, which hg clone cannot read, is
// applied to an empty repository.
var urlBundleKinds = []struct {
	name  string
	make  []string // hg arguments; the file name is appended
	apply []string // hg applying the file into an empty repository; nil: hg clone FILE
}{
	{"zstd-v2", []string{"bundle", "-q", "-a", "-t", "zstd-v2"}, nil},
	{"stream-v2", []string{"bundle", "-q", "-a", "-t", "none-v2;stream=v2"}, []string{"unbundle", "-q"}},
	{"packed1", []string{"debugcreatestreamclonebundle"}, []string{"debugapplystreamclonebundle"}},
}

// urlBundles makes cloneFixture's bundles in dir/www (KIND.hg, and a
// copy named KIND without a suffix) and real hg's repositories of them
// (dir/oracle-KIND, checked out as hg clone does).
func urlBundles(t *testing.T, dir string) (www string) {
	t.Helper()
	src := cloneFixture(t, dir)
	www = filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range urlBundleKinds {
		file := filepath.Join(www, k.name+".hg")
		testenv.Hg(t, src, append(append([]string{}, k.make...), file)...)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(www, k.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		oracle := filepath.Join(dir, "oracle-"+k.name)
		if k.apply == nil {
			testenv.Hg(t, dir, "clone", "-q", file, oracle)
			continue
		}
		testenv.Hg(t, dir, "init", oracle)
		testenv.Hg(t, oracle, append(append([]string{}, k.apply...), file)...)
		testenv.Hg(t, oracle, "update", "-q")
	}
	return www
}

// checkURLClone compares the clone at dest with real hg's repository of
// the same bundle: history (hg log --debug, verified), requirements, the
// checked-out revision and a clean working copy (withWorkingCopy), and
// the default path.
func checkURLClone(t *testing.T, dest, oracle, source string, withWorkingCopy bool) {
	t.Helper()
	if got, want := repoState(t, dest, true), repoState(t, oracle, false); got != want {
		t.Errorf("clone differs from hg's of the bundle file:\n%s", testenv.Diff("hg", want, "hgfs", got))
	}
	if withWorkingCopy {
		parent := func(repo string) string {
			return string(testenv.Hg(t, repo, "log", "-r", ".", "-T", "{node}"))
		}
		if got, want := parent(dest), parent(oracle); got != want || got == strings.Repeat("0", 40) {
			t.Errorf("checked out %s, hg %s", got, want)
		}
		if st := testenv.Hg(t, dest, "status"); len(st) != 0 {
			t.Errorf("hg status after the clone:\n%s", st)
		}
	}
	hgrc, err := os.ReadFile(filepath.Join(dest, ".hg", "hgrc"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hgrc), "[paths]\ndefault = "+source+"\n") {
		t.Errorf("hgrc lacks default = %s:\n%s", source, hgrc)
	}
}

// closedURL is an http:// URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// checkNothingLeft fails if a failed clone left dest (or a cache).
func checkNothingLeft(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

// TestCloneBundleURL: bundles over HTTP, found as the three rules say
// (a bundle's file name, a query, and a URL of neither kind that is not
// a server), each cloned as hg makes a repository of the file; a server
// URL still clones from the server.
func TestCloneBundleURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	www := urlBundles(t, dir)
	bs := startBundleServer(t, www)

	for _, k := range urlBundleKinds {
		for _, shape := range []struct{ name, path string }{
			{"suffix", "/" + k.name + ".hg"},
			{"query", "/" + k.name + "?X-Amz-Signature=abc"},
			{"plain", "/" + k.name},
		} {
			t.Run(k.name+"/"+shape.name, func(t *testing.T) {
				source := bs.URL + shape.path
				dest := filepath.Join(dir, "hgfs-"+k.name+"-"+shape.name)
				before := bs.total()
				stdout, stderr, code := hgfsClone(t, dir, source, dest)
				if code != 0 {
					t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
				}
				checkURLClone(t, dest, filepath.Join(dir, "oracle-"+k.name), source, true)
				// One download for a bundle's name or a query; the
				// capabilities request first otherwise.
				want := 1
				if shape.name == "plain" {
					want = 2
				}
				if n := bs.total() - before; n != want {
					t.Errorf("%d requests, want %d", n, want)
				}
			})
		}
	}

	t.Run("server", func(t *testing.T) {
		// A server whose URL ends in .hg: the bundle try gets its page,
		// not a bundle, and the clone goes on from the server.
		src := filepath.Join(dir, "src")
		srv := testenv.Serve(t, src)
		mux := http.NewServeMux()
		mux.HandleFunc("/repo.hg", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, srv+"?"+r.URL.RawQuery, http.StatusFound)
		})
		front := httptest.NewServer(mux)
		t.Cleanup(front.Close)
		dest := filepath.Join(dir, "from-server")
		stdout, stderr, code := hgfsClone(t, dir, "-U", front.URL+"/repo.hg", dest)
		if code != 0 || !strings.Contains(stdout, "adding changesets\n") {
			t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
		}
		testenv.Hg(t, dest, "verify", "-q")
		if got, want := string(testenv.Hg(t, dest, "log", "--debug")), string(testenv.Hg(t, src, "log", "--debug")); got != want {
			t.Errorf("clone differs from its source:\n%s", testenv.Diff("src", want, "clone", got))
		}
	})
}

// TestCloneBundleURLErrors: a missing bundle, a refusal, an unreachable
// host, a download cut short, something that is not a bundle, and what a
// bundle URL cannot do (--rev, a changegroup into a mount): each a clear
// error and nothing left behind.
func TestCloneBundleURLErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	www := urlBundles(t, dir)
	sizes := map[string]int{}
	files := http.FileServer(http.Dir(www))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if kind, ok := strings.CutPrefix(r.URL.Path, "/cut/"); ok {
			// Promises the whole bundle, sends half, hangs up.
			data, err := os.ReadFile(filepath.Join(www, kind))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data[:len(data)/2])
			w.(http.Flusher).Flush()
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
				}
			}
			return
		}
		switch r.URL.Path {
		case "/forbidden.hg":
			http.Error(w, "no", http.StatusForbidden)
		case "/text.hg":
			w.Write([]byte("<html>not a bundle</html>"))
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	closed := closedURL(t)
	for _, k := range urlBundleKinds {
		fi, err := os.Stat(filepath.Join(www, k.name+".hg"))
		if err != nil {
			t.Fatal(err)
		}
		sizes[k.name] = int(fi.Size())
	}

	for _, tc := range []struct {
		name, source string
		args         []string
		stderr       string // exact, or prefix when ending in "..."
	}{
		{"404", srv.URL + "/missing.hg", nil, "abort: HTTP error fetching bundle " + srv.URL + "/missing.hg: HTTP Error 404: Not Found\n"},
		{"404-query", srv.URL + "/missing?sig=1", nil, "abort: HTTP error fetching bundle " + srv.URL + "/missing?sig=1: HTTP Error 404: Not Found\n"},
		{"403", srv.URL + "/forbidden.hg", nil, "abort: HTTP error fetching bundle " + srv.URL + "/forbidden.hg: HTTP Error 403: Forbidden\n"},
		{"unreachable", closed + "/stream-v2.hg", nil, "abort: error fetching bundle " + closed + "/stream-v2.hg: [Errno 111] Connection refused\n"},
		{"cut-stream-v2", srv.URL + "/cut/stream-v2.hg", nil, "abort: error fetching bundle " + srv.URL + "/cut/stream-v2.hg after " + strconv.Itoa(sizes["stream-v2"]/2) + " bytes: HTTP request error (incomplete response)\n"},
		{"cut-packed1", srv.URL + "/cut/packed1.hg", nil, "abort: error fetching bundle " + srv.URL + "/cut/packed1.hg after " + strconv.Itoa(sizes["packed1"]/2) + " bytes: HTTP request error (incomplete response)\n"},
		{"cut-zstd-v2", srv.URL + "/cut/zstd-v2.hg", nil, "abort: error fetching bundle " + srv.URL + "/cut/zstd-v2.hg after " + strconv.Itoa(sizes["zstd-v2"]/2) + " bytes: HTTP request error (incomplete response)\n"},
		{"cut-stream-v2-mount", srv.URL + "/cut/stream-v2.hg", []string{"--mount"}, "abort: error fetching bundle " + srv.URL + "/cut/stream-v2.hg after " + strconv.Itoa(sizes["stream-v2"]/2) + " bytes: HTTP request error (incomplete response)\n"},
		{"not-a-bundle", srv.URL + "/text.hg", nil, "abort: " + srv.URL + "/text.hg is not a Mercurial bundle (it starts with \"<htm\")\n"},
		{"rev", srv.URL + "/zstd-v2.hg", []string{"-r", "0"}, "abort: hgfs clone cannot clone only --rev ancestors from a bundle\n..."},
		{"mount-changegroup", srv.URL + "/zstd-v2.hg", []string{"--mount"}, "abort: " + srv.URL + "/zstd-v2.hg: not a stream clone bundle\n..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(dir, "failed-"+tc.name)
			cache := dest + ".cache"
			args := append(append([]string{}, tc.args...), tc.source, dest)
			if slices.Contains(tc.args, "--mount") {
				args = append([]string{"--cache", cache}, args...)
			}
			stdout, stderr, code := hgfsClone(t, dir, args...)
			if code != 255 {
				t.Errorf("exit %d, want 255\n%s%s", code, stdout, stderr)
			}
			want, pattern := strings.CutSuffix(tc.stderr, "...")
			if !pattern && stderr != want {
				t.Errorf("stderr %q\nwant   %q", stderr, want)
			}
			if pattern {
				parts := strings.Split(want, "...")
				if !strings.HasPrefix(stderr, parts[0]) || len(parts) > 1 && !strings.Contains(stderr, parts[1]) {
					t.Errorf("stderr %q\nwant   %q", stderr, tc.stderr)
				}
			}
			t.Logf("%s", stderr)
			checkNothingLeft(t, dest, cache)
		})
	}
}

// TestCloneBundleURLMount: stream bundles over HTTP straight into a
// mount's cache, with the real binary; the mounted repository is what hg
// makes of the file.
func TestCloneBundleURLMount(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	www := urlBundles(t, dir)
	bs := startBundleServer(t, www)
	for _, kind := range []string{"stream-v2", "packed1"} {
		t.Run(kind, func(t *testing.T) {
			source := bs.URL + "/" + kind + ".hg"
			mp := filepath.Join(dir, "mnt-"+kind)
			cloneMount(t, source, mp)
			checkURLClone(t, mp, filepath.Join(dir, "oracle-"+kind), source, true)
		})
	}
}

// cloneMount runs hgfs clone --mount SOURCE MP (a cache beside it) and
// unmounts it when the test ends.
func cloneMount(t *testing.T, source, mp string, args ...string) {
	t.Helper()
	cmd := exec.Command(testenv.Hgfs(t), append(append([]string{"clone", "--mount", "--cache", mp + ".cache"}, args...), source, mp)...)
	cmd.Env = append(testenv.HgEnv(), os.Environ()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { testenv.UnmountCache(t, mp) })
	if !strings.Contains(string(out), " files to transfer, ") {
		t.Errorf("no stream applied:\n%s", out)
	}
}

// TestCloneBundleS3: the bundles in a real SeaweedFS, cloned from
// s3://BUCKET/KEY with the configured credentials (directory and mount),
// from a pre-signed URL and from a public bucket's URL; a missing object,
// bad credentials and an unreachable store fail cleanly.
func TestCloneBundleS3(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	testenv.UseS3Helper(t)
	dir := t.TempDir()
	www := urlBundles(t, dir)
	client := srv.Client(t)
	ctx := context.Background()
	for _, k := range urlBundleKinds {
		for _, bucket := range []string{"bundles", srv.PublicBucket} {
			if _, err := client.FPutObject(ctx, bucket, "repo/"+k.name+".hg", filepath.Join(www, k.name+".hg"), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	config := s3Args(t, srv)

	for _, k := range urlBundleKinds {
		t.Run(k.name, func(t *testing.T) {
			oracle := filepath.Join(dir, "oracle-"+k.name)
			source := "s3://bundles/repo/" + k.name + ".hg"
			dest := filepath.Join(dir, "s3-"+k.name)
			if stdout, stderr, code := hgfsClone(t, dir, append(config, source, dest)...); code != 0 {
				t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
			}
			checkURLClone(t, dest, oracle, source, true)

			signed, err := client.PresignedGetObject(ctx, "bundles", "repo/"+k.name+".hg", time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			dest = filepath.Join(dir, "signed-"+k.name)
			if stdout, stderr, code := hgfsClone(t, dir, "-U", signed.String(), dest); code != 0 {
				t.Fatalf("hgfs clone of a pre-signed URL: exit %d\n%s%s", code, stdout, stderr)
			}
			checkURLClone(t, dest, oracle, signed.String(), false)

			public := srv.PublicURL() + "/repo/" + k.name + ".hg"
			dest = filepath.Join(dir, "public-"+k.name)
			if stdout, stderr, code := hgfsClone(t, dir, "-U", public, dest); code != 0 {
				t.Fatalf("hgfs clone of a public URL: exit %d\n%s%s", code, stdout, stderr)
			}
			checkURLClone(t, dest, oracle, public, false)
		})
	}

	t.Run("mount", func(t *testing.T) {
		testenv.RequireFUSE(t)
		source := "s3://bundles/repo/stream-v2.hg"
		mp := filepath.Join(dir, "mnt")
		cloneMount(t, source, mp, config...)
		checkURLClone(t, mp, filepath.Join(dir, "oracle-stream-v2"), source, true)
	})

	closed := closedURL(t)
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string // substring
	}{
		{"missing", append(config, "s3://bundles/repo/nope.hg"), "abort: fetching s3://bundles/repo/nope.hg from "},
		{"no-bucket", append(config, "s3://nobucket/repo/zstd-v2.hg"), "(NoSuchBucket, HTTP 404)"},
		{"bad-key", append(config, "--config", "hgfs.s3-secret-key=wrong", "s3://bundles/repo/zstd-v2.hg"), "HTTP 403)"},
		{"unreachable", []string{"--config", "hgfs.s3-endpoint=" + closed, "s3://bundles/repo/zstd-v2.hg"}, "connection refused"},
		{"no-key", append(config, "s3://bundles"), "abort: s3://bundles/ names no object\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(dir, "failed-"+tc.name)
			stdout, stderr, code := hgfsClone(t, dir, append(tc.args, dest)...)
			if code != 255 || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr lacks %q\n%s%s", code, tc.stderr, stdout, stderr)
			}
			t.Logf("%s", stderr)
			checkNothingLeft(t, dest)
		})
	}
}
