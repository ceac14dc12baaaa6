package wireproto

// Clone bundles, the client's side (mercurial/bundlecaches.py,
// exchange._maybeapplyclonebundle): the manifest a server lists
// (clonebundles, or hg 7's clonebundles_manifest), parsed into entries,
// and the GET of a bundle's URL. The URL is on any host: the request
// carries none of the hg server's credentials, only those the bundle URL
// holds itself. Which entry to use is the caller's choice
// (cmd/hgfs/clone_bundles.go).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
)

// MaxCloneBundlesManifest bounds a clone bundles manifest, served or
// received. Real ones list a few entries of a few hundred bytes each.
const MaxCloneBundlesManifest = 1 << 20

// CloneBundlesManifestFile is where a repository lists its clone bundles,
// relative to .hg (bundlecaches.CB_MANIFEST_FILE).
const CloneBundlesManifestFile = "clonebundles.manifest"

// CloneBundleEntry is one line of a clone bundles manifest: the URL and
// its attributes (unquoted). As in bundlecaches.parseclonebundlesmanifest,
// a BUNDLESPEC that parses adds COMPRESSION and VERSION (for
// ui.clonebundleprefers), and its store-fingerprint parameter
// STORE-FINGERPRINT.
type CloneBundleEntry struct {
	URL   string
	Attrs map[string]string
	// Spec is the parsed BUNDLESPEC, nil when absent; SpecErr is why it
	// did not parse.
	Spec    *bundle2.Spec
	SpecErr error
}

// ParseCloneBundleLine parses one manifest line; ok is false for a blank
// line and for one with an attribute lacking "=" (on which hg fails with
// a traceback).
func ParseCloneBundleLine(line string) (e CloneBundleEntry, ok bool) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return e, false
	}
	e = CloneBundleEntry{URL: fields[0], Attrs: map[string]string{}}
	for _, raw := range fields[1:] {
		k, v, ok := strings.Cut(raw, "=")
		if !ok {
			return CloneBundleEntry{}, false
		}
		k, v = bundle2.Unquote(k), bundle2.Unquote(v)
		e.Attrs[k] = v
		if k == "BUNDLESPEC" {
			e.Spec, e.SpecErr = bundle2.ParseSpec(v)
			if e.SpecErr == nil {
				e.Attrs["COMPRESSION"] = e.Spec.Compression
				e.Attrs["VERSION"] = e.Spec.Version
				if sf, _ := e.Spec.Param("store-fingerprint"); sf != "" {
					e.Attrs["STORE-FINGERPRINT"] = sf
				}
			}
		}
	}
	return e, true
}

// ParseCloneBundles parses a manifest (bundlecaches.parseclonebundlesmanifest):
// one entry per non-blank line, malformed lines left out.
func ParseCloneBundles(data []byte) []CloneBundleEntry {
	var out []CloneBundleEntry
	for _, line := range splitManifestLines(string(data)) {
		if e, ok := ParseCloneBundleLine(line); ok {
			out = append(out, e)
		}
	}
	return out
}

// splitManifestLines is Python's bytes.splitlines: splitLines without
// the empty string after a final line end.
func splitManifestLines(s string) []string {
	lines := splitLines(s)
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// CloneBundlesManifest fetches the server's manifest, as hg 7's peer
// does: clonebundles_manifest (with store_fingerprint=1) where the server
// advertises it, else clonebundles. The caller checks the "clonebundles"
// capability first; the response is bounded by MaxCloneBundlesManifest.
func CloneBundlesManifest(ctx context.Context, p Peer) ([]byte, error) {
	cmd, args := "clonebundles", map[string]string(nil)
	if p.Capabilities().Has("clonebundles_manifest") {
		cmd, args = "clonebundles_manifest", map[string]string{"store_fingerprint": "1"}
	}
	switch p := p.(type) {
	case *HTTPPeer:
		body, err := p.stream(ctx, cmd, args, false)
		if err != nil {
			return nil, err
		}
		defer body.Close()
		data, err := readBounded(body, MaxCloneBundlesManifest, cmd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd, p.connErr(err))
		}
		return data, nil
	case *SSHPeer:
		return p.withCtx(ctx, func() ([]byte, error) {
			if args != nil {
				return p.callStar(cmd, nil, args)
			}
			return p.call(cmd, nil)
		})
	}
	return nil, unsupportedf("clone bundles are not available over %T", p)
}

// OpenCloneBundle starts the download of a clone bundle (http:// or
// https://) with client's transport (nil: the peers' default) and no
// credentials but those in rawURL itself. A status other than 2xx is an
// *HTTPError, a failure to connect a *ConnError: hg's "HTTP error
// fetching bundle" and "error fetching bundle". Reading the body reports
// broken connections as *ConnError too.
func OpenCloneBundle(ctx context.Context, rawURL string, client *http.Client) (io.ReadCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &ConnError{Op: "http", Err: err}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &ConnError{Op: "http", Err: fmt.Errorf("unknown url type: %s", u.Scheme)}
	}
	var c http.Client
	if client != nil {
		c = *client
	} else {
		c = *defaultHTTPClient(false) // one request: nothing to wait for
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &ConnError{Op: "http", Err: err}
	}
	req.Header.Set("User-Agent", "mercurial/proto-1.0 (hgfs)")
	p := &HTTPPeer{base: u, client: &c}
	resp, err := c.Do(req)
	if err != nil {
		return nil, p.connErr(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
		if reason == "" {
			reason = http.StatusText(resp.StatusCode)
		}
		where := *resp.Request.URL
		return nil, &HTTPError{URL: redact(&where), Code: resp.StatusCode, Reason: reason}
	}
	return &httpBody{r: resp.Body, resp: resp, peer: p}, nil
}
