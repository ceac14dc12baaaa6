package wireproto

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestServeCloneBundles compares hgfs serve's clone bundle commands and
// capabilities with hg 7's serve (clonebundles extension enabled) on the
// same manifest: a plain entry, one with a store fingerprint, an inline
// (peer-bundle-cache://) one, a blank line and a CRLF line end.
func TestServeCloneBundles(t *testing.T) {
	hg7 := testenv.Hg7(t)
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	manifest := filepath.Join(src, ".hg", CloneBundlesManifestFile)
	hgURL := hg7.Serve(t, src, "--config", "extensions.clonebundles=")
	ours := startServer(t, src, testConfig())

	caps := func(url string) string {
		return " " + string(payload(t, rawGet(t, url, "capabilities", nil, ""), false)) + " "
	}
	for _, url := range []string{hgURL, ours} {
		if c := caps(url); strings.Contains(c, " clonebundles") {
			t.Errorf("%s advertises clone bundles without a manifest: %s", url, c)
		}
	}
	// Without a manifest the commands answer empty.
	if got := payload(t, rawGet(t, ours, "clonebundles", nil, ""), false); len(got) != 0 {
		t.Errorf("clonebundles without a manifest: %q", got)
	}

	content := "https://example.com/a.hg BUNDLESPEC=zstd-v2 REQUIRESNI=true\r\n" +
		"\n" +
		"https://example.com/fp.hg BUNDLESPEC=none-v2%3Bstream%3Dv2%3Bstore-fingerprint%3Dabc\n" +
		"peer-bundle-cache://inline.hg BUNDLESPEC=zstd-v2\n" +
		"https://example.com/b.hg BUNDLESPEC=gzip-v1"
	if err := os.WriteFile(manifest, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{hgURL, ours} {
		c := caps(url)
		if !strings.Contains(c, " clonebundles ") || !strings.Contains(c, " clonebundles_manifest ") {
			t.Errorf("%s does not advertise clone bundles: %s", url, c)
		}
	}
	for _, c := range []struct {
		cmd  string
		args map[string]string
	}{
		{"clonebundles", nil},
		{"clonebundles_manifest", map[string]string{"store_fingerprint": "1"}},
	} {
		want := payload(t, rawGet(t, hgURL, c.cmd, c.args, ""), false)
		got := payload(t, rawGet(t, ours, c.cmd, c.args, ""), false)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: hgfs serve %q, hg serve %q", c.cmd, got, want)
		}
		if !bytes.Contains(want, []byte("example.com/b.hg")) {
			t.Errorf("%s: %q lacks the last entry", c.cmd, want)
		}
	}

	// A manifest past the bound is a server error, not read whole.
	if err := os.WriteFile(manifest, bytes.Repeat([]byte("x"), MaxCloneBundlesManifest+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := rawGet(t, ours, "clonebundles", nil, ""); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("oversized manifest: %s", resp.Status)
	}
}

// TestParseCloneBundles checks the parsed attributes hg derives from a
// manifest line.
func TestParseCloneBundles(t *testing.T) {
	es := ParseCloneBundles([]byte("http://a/x BUNDLESPEC=zstd-v2 A%20B=c%3Dd\r\n\nhttp://a/y BUNDLESPEC=bad\nhttp://a/z noequals\nhttp://a/s BUNDLESPEC=none-v2%3Bstream%3Dv2%3Bstore-fingerprint%3Df\n"))
	if len(es) != 3 {
		t.Fatalf("%d entries: %+v", len(es), es)
	}
	if e := es[0]; e.URL != "http://a/x" || e.Attrs["COMPRESSION"] != "zstd" || e.Attrs["VERSION"] != "v2" || e.Attrs["A B"] != "c=d" {
		t.Errorf("first entry: %+v", e)
	}
	if e := es[1]; e.SpecErr == nil || e.Attrs["COMPRESSION"] != "" {
		t.Errorf("bad spec: %+v", e)
	}
	if e := es[2]; e.Attrs["STORE-FINGERPRINT"] != "f" || !e.Spec.IsStreamClone() {
		t.Errorf("fingerprinted stream entry: %+v", e)
	}
}

// FuzzParseCloneBundles: any manifest parses without panicking, and
// every entry has a URL.
func FuzzParseCloneBundles(f *testing.F) {
	f.Add([]byte("https://example.com/a.hg BUNDLESPEC=zstd-v2 REQUIRESNI=true\n"))
	f.Add([]byte("http://127.0.0.1:8000/full.hg BUNDLESPEC=none-packed1%3Brequirements%3Dgeneraldelta%252Crevlogv1\r\nx y=z\n\n"))
	f.Add([]byte("peer-bundle-cache://a BUNDLESPEC=none-v2%3Bstream%3Dv3-exp DIGEST=sha256:00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range ParseCloneBundles(data) {
			if e.URL == "" || e.Attrs == nil {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
