package main

// hgfs clonebundles refresh against a real SeaweedFS on loopback, and
// clones through hgfs serve's manifest by hg 6.3, hg 7 and hgfs.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/hgfs/hgfs/s3bundles"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/wireproto"
)

// s3Args are the --config arguments pointing hgfs at srv; the keys come
// from the environment (AWS_*), as a cron job's would.
func s3Args(t *testing.T, srv *testenv.S3Server, extra ...string) []string {
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	return append([]string{"--config", "hgfs.s3-endpoint=" + srv.Endpoint}, extra...)
}

// refreshBundles runs hgfs clonebundles refresh of src into
// s3://bundles/prefix and returns the manifest's entries.
func refreshBundles(t *testing.T, srv *testenv.S3Server, src, prefix string, extra ...string) []wireproto.CloneBundleEntry {
	t.Helper()
	args := append([]string{"clonebundles", "refresh", "-R", src, "--to", "s3://bundles/" + prefix}, s3Args(t, srv, extra...)...)
	stdout, stderr, code := hgfsIn(src, args...)
	if code != 0 {
		t.Fatalf("hgfs clonebundles refresh: exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(src, ".hg", "clonebundles.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	entries := wireproto.ParseCloneBundles(data)
	if len(entries) != 3 {
		t.Fatalf("manifest:\n%s", data)
	}
	return entries
}

// corpusSource is a private copy of the corpus repository with a working
// copy, for commits after a refresh.
func corpusSource(t *testing.T) string {
	t.Helper()
	src := testenv.CopyRepo(t, testenv.CorpusRepo(t, testenv.CorpusHistory))
	testenv.Hg(t, src, "update", "-q", "tip")
	return src
}

func commitFile(t *testing.T, repo, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, repo, "commit", "-qAm", "add "+name)
}

// historyOf is what a clone must hold, phases aside: a stream bundle's
// clone keeps the phases the bundle carries (see cloneBundleKinds).
func historyOf(t *testing.T, repo string) string {
	t.Helper()
	return withoutPhases(cloneLog(t, repo))
}

// TestCloneBundlesS3: refresh the corpus repository's bundles into
// SeaweedFS, commit once more, and clone through hgfs serve with hg 6.3,
// hg 7 and hgfs, each bundle kind in turn (ui.clonebundleprefers): each
// clone downloads its bundle from the store, pulls the new changeset
// from the server, and holds what a direct clone holds. hgfs clone
// --mount takes the stream v2 bundle into its cache and pulls through the
// mount.
func TestCloneBundlesS3(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	testenv.UseS3Helper(t)
	src := corpusSource(t)
	entries := refreshBundles(t, srv, src, "corpus")
	for i, want := range []string{"stream-v2", "packed1", "zstd-v2"} {
		e := entries[i]
		if !strings.HasPrefix(e.URL, srv.Endpoint+"/bundles/corpus/") || !strings.Contains(e.URL, "."+want+".hg?") || e.SpecErr != nil {
			t.Errorf("entry %d: %s (spec %q, %v)", i, e.URL, e.Attrs["BUNDLESPEC"], e.SpecErr)
		}
	}
	commitFile(t, src, "after-refresh", "made after the refresh\n")
	url, _, _ := startServeBinary(t, src)
	dir := t.TempDir()
	direct := filepath.Join(dir, "direct")
	testenv.Hg(t, dir, "clone", "-q", "-U", "--config", "ui.clonebundles=false", url, direct)
	want := historyOf(t, direct)
	if want != historyOf(t, src) {
		t.Fatal("the direct clone differs from the source")
	}

	kinds := []struct{ name, prefers string }{
		{"stream-v2", ""},
		{"packed1", "VERSION=packed1"},
		{"zstd-v2", "COMPRESSION=zstd"},
	}
	type client struct {
		name  string
		clone func(t *testing.T, dest string, args ...string) string
	}
	var clients []client
	for _, m := range testenv.Mercurials(t) {
		clients = append(clients, client{m.Name, func(t *testing.T, dest string, args ...string) string {
			return string(m.Run(t, dir, append(append([]string{"clone", "-U"}, args...), url, dest)...))
		}})
	}
	clients = append(clients, client{"hgfs", func(t *testing.T, dest string, args ...string) string {
		stdout, stderr, code := hgfsClone(t, dir, append(append([]string{"-U"}, args...), url, dest)...)
		if code != 0 {
			t.Fatalf("hgfs clone: exit %d\n%s%s", code, stdout, stderr)
		}
		return stdout
	}})
	clients = append(clients, client{"hgfs-mount", func(t *testing.T, dest string, args ...string) string {
		testenv.RequireFUSE(t)
		cmd := exec.Command(testenv.Hgfs(t), append(append([]string{"clone", "--mount", "--cache", dest + ".cache"}, args...), url, dest)...)
		cmd.Env = testenv.HgEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hgfs clone --mount: %v\n%s", err, out)
		}
		t.Cleanup(func() { testenv.UnmountCache(t, dest) })
		return string(out)
	}})
	for _, c := range clients {
		for _, k := range kinds {
			if c.name == "hgfs-mount" && k.name != "stream-v2" {
				// A mount is filled from stream v2 bundles only.
				continue
			}
			t.Run(c.name+"/"+k.name, func(t *testing.T) {
				dest := filepath.Join(dir, c.name+"-"+k.name)
				var args []string
				if k.prefers != "" {
					args = []string{"--config", "ui.clonebundleprefers=" + k.prefers}
				}
				out := c.clone(t, dest, args...)
				if !strings.Contains(out, "applying clone bundle from "+srv.Endpoint+"/bundles/corpus/") ||
					!strings.Contains(out, "."+k.name+".hg?") || !strings.Contains(out, "finished applying clone bundle\n") {
					t.Fatalf("%s did not clone from the %s bundle:\n%s", c.name, k.name, out)
				}
				if !strings.Contains(out, "added 1 changesets") {
					t.Errorf("%s did not pull the changeset made after the refresh:\n%s", c.name, out)
				}
				if got := historyOf(t, dest); got != want {
					t.Errorf("clone differs from a direct clone:\n%s", testenv.Diff("direct", want, c.name, got))
				}
			})
		}
	}
}

// TestCloneBundlesS3Refresh: a refresh while 8 downloads are under way
// breaks none of them (the replaced manifest's objects stay for the
// grace period), and 8 clones started beside a refresh all finish with
// the repository; a second refresh with hgfs.s3-grace=0 then deletes the
// first refresh's objects.
func TestCloneBundlesS3Refresh(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	testenv.UseS3Helper(t)
	src := corpusSource(t)
	old := refreshBundles(t, srv, src, "live")
	commitFile(t, src, "second", "second\n")

	// 8 downloads of the first manifest's bundles, each paused after its
	// first bytes until the refresh is done.
	type download struct {
		resp  *http.Response
		first []byte
		e     wireproto.CloneBundleEntry
	}
	var downloads []download
	for i := 0; i < 8; i++ {
		e := old[i%len(old)]
		resp, err := http.Get(e.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", e.URL, resp.Status)
		}
		first := make([]byte, 1024)
		if _, err := io.ReadFull(resp.Body, first); err != nil {
			t.Fatal(err)
		}
		downloads = append(downloads, download{resp, first, e})
	}
	url, _, _ := startServeBinary(t, src)
	dir := t.TempDir()
	hgfs := testenv.Hgfs(t)
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dest := filepath.Join(dir, "clone"+string(rune('a'+i)))
			out, err := exec.Command(hgfs, "clone", "-U", url, dest).CombinedOutput()
			if err != nil {
				results[i] = fmt.Sprintf("%v\n%s", err, out)
			}
		}()
	}
	next := refreshBundles(t, srv, src, "live")
	wg.Wait()
	for i, r := range results {
		if r != "" {
			t.Errorf("clone %d during the refresh failed:\n%s", i, r)
		}
	}
	// The paused downloads finish with the whole bundle.
	for i, d := range downloads {
		rest, err := io.ReadAll(d.resp.Body)
		sum := sha256.Sum256(append(d.first, rest...))
		if err != nil || hex.EncodeToString(sum[:]) != d.e.Attrs[s3bundles.AttrSHA256] {
			t.Errorf("download %d of the replaced manifest broke by the refresh (%v)", i, err)
		}
	}
	want := historyOf(t, src)
	for i := range results {
		if got := historyOf(t, filepath.Join(dir, "clone"+string(rune('a'+i)))); got != want {
			t.Errorf("clone %d differs from the source:\n%s", i, testenv.Diff("source", want, "clone", got))
		}
	}
	if next[0].URL == old[0].URL {
		t.Errorf("the refresh after a commit listed the same stream bundle")
	}
	// Grace 0: the objects of the earlier manifests go at the next
	// refresh; the store then holds the last manifest's alone.
	last := refreshBundles(t, srv, src, "live", "--config", "hgfs.s3-grace=0s")
	var listed, stored []string
	for _, e := range last {
		listed = append(listed, objectKey(srv, e.URL))
	}
	for o := range srv.Client(t).ListObjects(context.Background(), "bundles", minio.ListObjectsOptions{Prefix: "live/", Recursive: true}) {
		stored = append(stored, o.Key)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, stored) {
		t.Errorf("after a refresh with no grace the store holds %v, the manifest lists %v", stored, listed)
	}
}

// objectKey is the key of a bundle URL in srv's "bundles" bucket.
func objectKey(srv *testenv.S3Server, url string) string {
	return strings.TrimPrefix(strings.SplitN(url, "?", 2)[0], srv.Endpoint+"/bundles/")
}

// TestCloneBundlesS3Failures: the ways a clone bundle in a store goes
// wrong, each a clear error and no clone left (or, where hg falls back,
// a normal clone).
func TestCloneBundlesS3Failures(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	testenv.UseS3Helper(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)

	// An unreachable store: refresh fails before writing anything.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	s3Args(t, srv)
	stdout, stderr, code := hgfsIn(src, "clonebundles", "refresh", "--to", "s3://bundles/x", "--config", "hgfs.s3-endpoint="+dead, "--config", "hgfs.s3-timeout=5s")
	if code != 255 || !strings.Contains(stderr, "abort: checking bucket bundles at "+strings.TrimPrefix(dead, "http://")) || !strings.Contains(stderr, "connection refused") {
		t.Errorf("refresh to an unreachable store: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(src, ".hg", "clonebundles.manifest")); err == nil {
		t.Error("a failed refresh wrote a manifest")
	}
	stdout, stderr, code = hgfsIn(src, "clonebundles", "refresh", "--to", "http://bundles/x")
	if code != 255 || !strings.Contains(stderr, "is not an s3://BUCKET/PREFIX location") {
		t.Errorf("refresh to a non-s3 location: exit %d\n%s%s", code, stdout, stderr)
	}
	// --dry-run changes nothing.
	stdout, stderr, code = hgfsIn(src, append([]string{"clonebundles", "refresh", "--dry-run", "--to", "s3://bundles/f"}, s3Args(t, srv)...)...)
	if code != 0 || !strings.Contains(stdout, "would upload stream-v2 bundle") || !strings.Contains(stdout, "would replace .hg/clonebundles.manifest") {
		t.Errorf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(src, ".hg", "clonebundles.manifest")); err == nil {
		t.Error("a dry run wrote a manifest")
	}

	entries := refreshBundles(t, srv, src, "f")
	url, _, _ := startServeBinary(t, src)
	manifest, err := os.ReadFile(filepath.Join(src, ".hg", "clonebundles.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	key := objectKey(srv, entries[0].URL)
	good, err := srv.Client(t).GetObject(context.Background(), "bundles", key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	goodBytes, err := io.ReadAll(good)
	good.Close()
	if err != nil {
		t.Fatal(err)
	}
	replace := func(data []byte) {
		t.Helper()
		if _, err := srv.Client(t).PutObject(context.Background(), "bundles", key, strings.NewReader(string(data)), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(dest string) {
		t.Helper()
		if _, err := os.Stat(dest); err == nil {
			t.Errorf("%s left behind", dest)
		}
	}
	// A truncated object: hg fails to apply it; hgfs says the bytes do
	// not match the manifest entry; neither leaves a clone.
	replace(goodBytes[:len(goodBytes)/2])
	for _, m := range testenv.Mercurials(t) {
		dest := filepath.Join(dir, m.Name+"-truncated")
		if _, _, err := m.Result(t, dir, "clone", "-U", url, dest); err == nil {
			t.Errorf("%s cloned from a truncated bundle", m.Name)
		}
		gone(dest)
	}
	dest := filepath.Join(dir, "hgfs-truncated")
	stdout, stderr, code = hgfsClone(t, dir, "-U", url, dest)
	if code != 255 || !strings.Contains(stderr, "abort: clone bundle has ") || !strings.Contains(stderr, "(truncated download?)") {
		t.Errorf("hgfs clone of a truncated bundle: exit %d\n%s%s", code, stdout, stderr)
	}
	gone(dest)
	// Other bytes of the same size: hgfs checks the SHA-256.
	other := append([]byte(nil), goodBytes...)
	other[len(other)-1] ^= 1
	replace(other)
	dest = filepath.Join(dir, "hgfs-other")
	stdout, stderr, code = hgfsClone(t, dir, "-U", url, dest)
	if code != 255 || !strings.Contains(stderr, "abort: clone bundle's SHA-256 is ") {
		t.Errorf("hgfs clone of a changed bundle: exit %d\n%s%s", code, stdout, stderr)
	}
	gone(dest)
	replace(goodBytes)

	// A manifest entry outside http(s): hg 7 (and hgfs) skip it, and
	// with nothing else listed the clone is a normal one; hg 6.3 tries
	// it and aborts.
	writeManifest(t, src, "s3://bundles/"+key+" BUNDLESPEC=zstd-v2\nfile:///etc/passwd BUNDLESPEC=zstd-v2\n")
	for _, m := range testenv.Mercurials(t) {
		dest := filepath.Join(dir, m.Name+"-scheme")
		stdout, stderr, err := m.Result(t, dir, "clone", "-U", url, dest)
		out := string(stdout) + string(stderr)
		if m.Major() < 7 {
			if err == nil || !strings.Contains(out, "error fetching bundle: unknown url type: s3") {
				t.Errorf("%s: %v\n%s", m.Name, err, out)
			}
			gone(dest)
		} else if err != nil || !strings.Contains(out, "no compatible clone bundles available on server; falling back to regular clone") {
			t.Errorf("%s: %v\n%s", m.Name, err, out)
		}
	}
	stdout, stderr, code = hgfsClone(t, dir, "-U", url, filepath.Join(dir, "hgfs-scheme"))
	if code != 0 || !strings.Contains(stderr, "no compatible clone bundles available on server; falling back to regular clone") {
		t.Errorf("hgfs clone with non-http entries: exit %d\n%s%s", code, stdout, stderr)
	}

	// Expired pre-signed URLs: hg's HTTP error, and its fallback.
	writeManifest(t, src, string(manifest))
	refreshBundles(t, srv, src, "expiring", "--config", "hgfs.s3-url-expiry=1s")
	time.Sleep(2 * time.Second)
	dest = filepath.Join(dir, "hgfs-expired")
	stdout, stderr, code = hgfsClone(t, dir, "-U", url, dest)
	if code != 255 || !strings.Contains(stderr, "HTTP error fetching bundle: HTTP Error 403") || !strings.Contains(stderr, "abort: error applying bundle") {
		t.Errorf("hgfs clone from an expired URL: exit %d\n%s%s", code, stdout, stderr)
	}
	gone(dest)
	stdout, stderr, code = hgfsClone(t, dir, "-U", "--config", "ui.clonebundlefallback=true", url, dest)
	if code != 0 || !strings.Contains(stderr, "falling back to normal clone") {
		t.Errorf("hgfs clone from an expired URL with fallback: exit %d\n%s%s", code, stdout, stderr)
	}
}
