package s3client

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

	"github.com/hgfs/hgfs/s3bundles"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/wireproto"
)

func TestHelperNames(t *testing.T) {
	if testenv.S3HelperEnv != s3bundles.HelperEnv || testenv.S3HelperName != s3bundles.HelperName {
		t.Errorf("testenv names the helper %s, %s; s3bundles %s, %s", testenv.S3HelperEnv, testenv.S3HelperName, s3bundles.HelperEnv, s3bundles.HelperName)
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
	bundles := []s3bundles.Bundle{
		{Path: writeFile(t, dir, "big.hg", big), Kind: "stream-v2", Spec: "none-v2;stream=v2;requirements%3Drevlogv1", Compression: "none"},
		{Path: writeFile(t, dir, "small.hg", small), Kind: "zstd-v2", Spec: "zstd-v2", Compression: "zstd"},
	}
	heads := []string{"0123456789abcdef0123456789abcdef01234567"}
	cfg := s3bundles.Config{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Grace: time.Hour, Timeout: 30 * time.Second}
	target := s3bundles.Target{Bucket: "bundles", Prefix: "repo/a"}
	s, err := Open(ctx, cfg, target)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	entries, err := s3bundles.Refresh(ctx, s, hg, bundles, s3bundles.Options{Heads: heads, Now: t0, Grace: cfg.Grace})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(hg, s3bundles.ManifestFile))
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
	if _, err := s3bundles.Refresh(ctx, s, hg, bundles, s3bundles.Options{Heads: heads, Now: t0.Add(time.Minute), Grace: cfg.Grace}); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, srv.Client(t), "bundles", "repo/a/"); strings.Join(got, " ") != strings.Join(first, " ") {
		t.Errorf("refresh of the same bytes changed the objects: %v, then %v", first, got)
	}
	// New bytes for the small bundle: its old object waits out the grace.
	bundles[1].Path = writeFile(t, dir, "small2.hg", append(small, 'x'))
	if _, err := s3bundles.Refresh(ctx, s, hg, bundles, s3bundles.Options{Heads: heads, Now: t0.Add(2 * time.Minute), Grace: cfg.Grace}); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, srv.Client(t), "bundles", "repo/a/"); len(got) != 3 {
		t.Errorf("old object deleted within the grace period: %v", got)
	}
	if code, _ := testenv.Get(t, parsed[1].URL); code != 200 {
		t.Errorf("a URL of the replaced manifest answers %d within the grace period", code)
	}
	due, _, err := s3bundles.Pending(hg, cfg.Grace, t0.Add(3*time.Hour))
	if err != nil || len(due) != 1 || !strings.HasSuffix(due[0], ".zstd-v2.hg") {
		t.Errorf("Pending: %v, %v", due, err)
	}
	if _, err := s3bundles.Refresh(ctx, s, hg, bundles, s3bundles.Options{Heads: heads, Now: t0.Add(3 * time.Hour), Grace: cfg.Grace}); err != nil {
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
	ps, err := Open(ctx, pub, s3bundles.Target{Bucket: srv.PublicBucket, Prefix: "r"})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := s3bundles.Refresh(ctx, ps, t.TempDir(), bundles[1:], s3bundles.Options{Heads: heads, Grace: cfg.Grace})
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
	good := s3bundles.Config{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Timeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		cfg    func(s3bundles.Config) s3bundles.Config
		bucket string
		want   string
	}{
		{"unreachable", func(c s3bundles.Config) s3bundles.Config { c.Endpoint = dead; return c }, "bundles", "connection refused"},
		{"bad endpoint", func(c s3bundles.Config) s3bundles.Config { c.Endpoint = "ftp://x"; return c }, "bundles", "invalid S3 endpoint"},
		{"wrong secret", func(c s3bundles.Config) s3bundles.Config { c.SecretKey = "wrong"; return c }, "bundles", "checking bucket bundles"},
		{"no bucket", func(c s3bundles.Config) s3bundles.Config { return c }, "missing", "bucket missing does not exist"},
		{"long expiry", func(c s3bundles.Config) s3bundles.Config { c.URLExpiry = 8 * 24 * time.Hour; return c }, "bundles", "at most"},
	} {
		_, err := Open(ctx, c.cfg(good), s3bundles.Target{Bucket: c.bucket})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
