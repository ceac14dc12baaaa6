package s3bundles

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/wireproto"
)

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"s3://bundles":             {Bucket: "bundles"},
		"s3://bundles/":            {Bucket: "bundles"},
		"s3://bundles/a/b/":        {Bucket: "bundles", Prefix: "a/b"},
		"s3://my.bucket-1/repo.hg": {Bucket: "my.bucket-1", Prefix: "repo.hg"},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "bundles", "http://x/y", "s3://", "s3://B/x", "s3://a/x//y", "s3://ab/x\ny", "s3://-ab/x"} {
		if got, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q) = %+v, want an error", in, got)
		}
	}
}

// TestEntryLine: the lines refresh writes parse as hg's manifest lines,
// with the spec hg's debugbundle --spec prints and its requirements.
func TestEntryLine(t *testing.T) {
	e := Entry{
		URL:    "https://bundles.example/r/abc.hg?X-Amz-Signature=00&X-Amz-Expires=60",
		Bundle: Bundle{Kind: "stream-v2", Spec: "none-v2;stream=v2;requirements%3Dgeneraldelta%2Crevlogv1", Compression: "none"},
		Object: Object{Size: 42, SHA256: strings.Repeat("ab", 32)},
		Heads:  []string{strings.Repeat("1", 40), strings.Repeat("2", 40)},
	}
	line := e.Line()
	p, ok := wireproto.ParseCloneBundleLine(line)
	if !ok || p.SpecErr != nil {
		t.Fatalf("%q: ok %v, spec error %v", line, ok, p.SpecErr)
	}
	if p.URL != e.URL || !p.Spec.IsStreamClone() || strings.Join(p.Spec.Requirements(), ",") != "generaldelta,revlogv1" {
		t.Errorf("%q parsed as %+v (requirements %v)", line, p, p.Spec.Requirements())
	}
	for k, v := range map[string]string{"REQUIRESNI": "true", "COMPRESSION": "none", "heads": e.Heads[0] + ";" + e.Heads[1],
		AttrSize: "42", AttrSHA256: e.Object.SHA256} {
		if p.Attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, p.Attrs[k], v)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL": "http://general", "AWS_ENDPOINT_URL_S3": "http://s3", "AWS_DEFAULT_REGION": "eu-1",
		"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}
	c := Config{Region: "us-2"}
	c.FillFromEnv(func(k string) string { return env[k] })
	if c.Endpoint != "http://s3" || c.Region != "us-2" || c.AccessKey != "id" || c.SecretKey != "secret" || c.SessionToken != "" {
		t.Errorf("%+v", c)
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func objects(t *testing.T, c *minio.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// TestRefreshSeaweedFS runs refreshes against a real SeaweedFS: bundles
// (one larger than a part, so uploaded in parts) land under the prefix,
// the manifest's pre-signed and public URLs return their bytes without
// credentials, a refresh of the same bytes uploads nothing new, and the
// objects of a replaced manifest go only after the grace period.
func TestRefreshSeaweedFS(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	ctx := context.Background()
	dir := t.TempDir()
	hg := filepath.Join(dir, ".hg")
	if err := os.Mkdir(hg, 0o755); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 40<<20+123)
	rand.Read(big)
	small := []byte("HG20\x00\x00\x00\x00\x00\x00\x00\x00")
	bundles := []Bundle{
		{Path: writeFile(t, dir, "big.hg", big), Kind: "stream-v2", Spec: "none-v2;stream=v2;requirements%3Drevlogv1", Compression: "none"},
		{Path: writeFile(t, dir, "small.hg", small), Kind: "zstd-v2", Spec: "zstd-v2", Compression: "zstd"},
	}
	heads := []string{"0123456789abcdef0123456789abcdef01234567"}
	cfg := Config{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Grace: time.Hour, Timeout: 30 * time.Second}
	target := Target{Bucket: "bundles", Prefix: "repo/a"}
	s, err := Open(ctx, cfg, target)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	entries, err := s.Refresh(ctx, hg, bundles, Options{Heads: heads, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(hg, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	parsed := wireproto.ParseCloneBundles(data)
	if len(parsed) != 2 || len(entries) != 2 {
		t.Fatalf("manifest:\n%s", data)
	}
	for i, want := range [][]byte{big, small} {
		code, body := testenv.Get(t, parsed[i].URL)
		if code != 200 || !bytes.Equal(body, want) {
			t.Errorf("%s: HTTP %d, %d bytes, want %d", parsed[i].URL, code, len(body), len(want))
		}
		if !strings.Contains(parsed[i].URL, "X-Amz-Signature=") {
			t.Errorf("%s is not pre-signed", parsed[i].URL)
		}
	}
	first := objects(t, srv.Client(t), "bundles", "repo/a/")
	if len(first) != 2 {
		t.Fatalf("objects after the first refresh: %v", first)
	}
	// Same bytes: same objects, nothing retired.
	if _, err := s.Refresh(ctx, hg, bundles, Options{Heads: heads, Now: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, srv.Client(t), "bundles", "repo/a/"); strings.Join(got, " ") != strings.Join(first, " ") {
		t.Errorf("refresh of the same bytes changed the objects: %v, then %v", first, got)
	}
	// New bytes for the small bundle: its old object waits out the grace.
	bundles[1].Path = writeFile(t, dir, "small2.hg", append(small, 'x'))
	if _, err := s.Refresh(ctx, hg, bundles, Options{Heads: heads, Now: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, srv.Client(t), "bundles", "repo/a/"); len(got) != 3 {
		t.Errorf("old object deleted within the grace period: %v", got)
	}
	if code, _ := testenv.Get(t, parsed[1].URL); code != 200 {
		t.Errorf("a URL of the replaced manifest answers %d within the grace period", code)
	}
	due, _, err := Pending(hg, cfg.Grace, t0.Add(3*time.Hour))
	if err != nil || len(due) != 1 || !strings.HasSuffix(due[0], ".zstd-v2.hg") {
		t.Errorf("Pending: %v, %v", due, err)
	}
	if _, err := s.Refresh(ctx, hg, bundles, Options{Heads: heads, Now: t0.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, srv.Client(t), "bundles", "repo/a/"); len(got) != 2 {
		t.Errorf("old object kept after the grace period: %v", got)
	}
	if code, _ := testenv.Get(t, parsed[1].URL); code != 404 {
		t.Errorf("a deleted bundle's URL answers %d", code)
	}

	// A public bucket: plain URLs under the public base.
	pub := cfg
	pub.PublicURL = srv.PublicURL()
	ps, err := Open(ctx, pub, Target{Bucket: srv.PublicBucket, Prefix: "r"})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := ps.Refresh(ctx, t.TempDir(), bundles[1:], Options{Heads: heads})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pe[0].URL, srv.PublicURL()+"/r/") || strings.Contains(pe[0].URL, "?") {
		t.Errorf("public URL %s", pe[0].URL)
	}
	if code, body := testenv.Get(t, pe[0].URL); code != 200 || !bytes.Equal(body, append(small, 'x')) {
		t.Errorf("%s: HTTP %d %q", pe[0].URL, code, body)
	}
}

// TestOpenErrors: a store that does not answer, wrong credentials, and
// a missing bucket are errors before anything is written, and say which.
func TestOpenErrors(t *testing.T) {
	srv := testenv.StartSeaweedFS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	good := Config{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Timeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		cfg    func(Config) Config
		bucket string
		want   string
	}{
		{"unreachable", func(c Config) Config { c.Endpoint = dead; return c }, "bundles", "connection refused"},
		{"bad endpoint", func(c Config) Config { c.Endpoint = "ftp://x"; return c }, "bundles", "invalid S3 endpoint"},
		{"wrong secret", func(c Config) Config { c.SecretKey = "wrong"; return c }, "bundles", "checking bucket bundles"},
		{"no bucket", func(c Config) Config { return c }, "missing", "bucket missing does not exist"},
		{"long expiry", func(c Config) Config { c.URLExpiry = 8 * 24 * time.Hour; return c }, "bundles", "at most"},
	} {
		_, err := Open(ctx, c.cfg(good), Target{Bucket: c.bucket})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
