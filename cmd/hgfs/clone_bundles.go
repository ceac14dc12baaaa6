package main

// Clone bundles (exchange._maybeapplyclonebundle, trypullbundlefromurl,
// bundlecaches.filterclonebundleentries and sortclonebundleentries): a
// network clone into a directory asks a server advertising
// "clonebundles" for its manifest, keeps the entries hgfs can apply,
// orders them by ui.clonebundleprefers, downloads the first over
// HTTP(S) (without the hg server's credentials) and applies it into the
// new repository as 'hgfs unbundle' would (in hg's "bundleurl"
// transaction), then pulls the rest from the server. A download that
// fails aborts the clone unless ui.clonebundlefallback, which clones
// normally instead; a bundle that fails to apply aborts it, as in hg,
// and the staged repository is removed with everything in it.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"syscall"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/exchange"
	"github.com/hgfs/hgfs/s3bundles"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
)

// cloneBundle is the bundle chosen for a clone: its URL and the open
// download, checked against the size and SHA-256 its manifest entry
// gives (hgfs clonebundles refresh writes them), when it gives them.
type cloneBundle struct {
	url   string
	body  io.ReadCloser
	check *bundleCheck
}

// bundleCheck counts and hashes the bytes of a download whose manifest
// entry names its size and SHA-256 (s3bundles.AttrSize, AttrSHA256): more
// bytes than the size fail the read at once; fewer, or other bytes, fail
// verify, which reads what the bundle reader left.
type bundleCheck struct {
	r    io.Reader
	size int64
	sum  string
	n    int64
	h    hash.Hash
}

// newBundleCheck wraps body when e names a well-formed size and sum;
// otherwise body is used as is.
func newBundleCheck(body io.Reader, e wireproto.CloneBundleEntry) *bundleCheck {
	size, err := strconv.ParseInt(e.Attrs[s3bundles.AttrSize], 10, 64)
	sum := strings.ToLower(e.Attrs[s3bundles.AttrSHA256])
	if err != nil || size < 0 || len(sum) != 64 {
		return nil
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return nil
	}
	return &bundleCheck{r: body, size: size, sum: sum, h: sha256.New()}
}

func (c *bundleCheck) Read(p []byte) (int, error) {
	if c.n > c.size {
		return 0, &bundleMismatch{fmt.Sprintf("clone bundle is larger than its manifest entry's %d bytes", c.size)}
	}
	if rest := c.size - c.n + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.size {
		return n, &bundleMismatch{fmt.Sprintf("clone bundle is larger than its manifest entry's %d bytes", c.size)}
	}
	return n, err
}

// verify reads the rest of the download and compares it with the entry.
func (c *bundleCheck) verify() error {
	if _, err := io.Copy(io.Discard, c); err != nil {
		return err
	}
	if c.n != c.size {
		return &bundleMismatch{fmt.Sprintf("clone bundle has %d bytes, its manifest entry %d (truncated download?)", c.n, c.size)}
	}
	if got := hex.EncodeToString(c.h.Sum(nil)); got != c.sum {
		return &bundleMismatch{fmt.Sprintf("clone bundle's SHA-256 is %s, its manifest entry's %s", got, c.sum)}
	}
	return nil
}

// reader is the download, through the check when there is one.
func (cb *cloneBundle) reader() io.Reader {
	if cb.check != nil {
		return cb.check
	}
	return cb.body
}

// verify checks the download against its manifest entry once applied
// (applyErr nil) or not: the bytes are checked either way, since a
// mismatch explains a failure to apply. A read error after a failure to
// apply leaves that failure to be reported.
func (cb *cloneBundle) verify(applyErr error) error {
	if cb.check == nil {
		return nil
	}
	err := cb.check.verify()
	var mismatch *bundleMismatch
	if errors.As(err, &mismatch) || err != nil && applyErr == nil {
		return abortf("%v", err).withHint("the clone bundle at %s differs from what the server's manifest lists; if this persists, contact the server operator or clone with --config ui.clonebundles=false", cb.url)
	}
	return nil
}

// bundleMismatch is a download that is not the bundle its manifest entry
// describes.
type bundleMismatch struct{ msg string }

func (e *bundleMismatch) Error() string { return e.msg }

// pickCloneBundle runs the client's side up to the download: nil when
// no bundle is to be used (disabled, not advertised, none listed, none
// compatible, or a download failure with ui.clonebundlefallback).
// streamOnly keeps the stream bundles only (--stream, hg's
// streamclonerequested).
func (cl *cloner) pickCloneBundle(peer wireproto.Peer, streamOnly bool) (*cloneBundle, error) {
	u := cl.c.ui
	enabled, err := u.cfg.GetBool(config.UICloneBundles)
	if err != nil {
		return nil, abortf("%v", err)
	}
	if !enabled || !peer.Capabilities().Has("clonebundles") {
		return nil, nil
	}
	data, err := wireproto.CloneBundlesManifest(cl.ctx, peer)
	if err != nil {
		return nil, peerError(cl.ctx, err)
	}
	entries := wireproto.ParseCloneBundles(data)
	if len(entries) == 0 {
		u.note("no clone bundles available on remote; falling back to regular clone\n")
		return nil, nil
	}
	entries = filterCloneBundles(u, entries, streamOnly, cl.mount != nil)
	if len(entries) == 0 {
		u.warn("no compatible clone bundles available on server; falling back to regular clone\n")
		u.warn("(you may want to report this to the server operator)\n")
		return nil, nil
	}
	entries, err = sortCloneBundles(u.cfg, entries)
	if err != nil {
		return nil, err
	}
	url := entries[0].URL
	u.status("applying clone bundle from %s\n", url)
	body, err := wireproto.OpenCloneBundle(cl.ctx, url, nil)
	if err == nil {
		return &cloneBundle{url: url, body: body, check: newBundleCheck(body, entries[0])}, nil
	}
	if cl.ctx.Err() != nil {
		return nil, cl.ctx.Err()
	}
	var he *wireproto.HTTPError
	if errors.As(err, &he) {
		u.warn("HTTP error fetching bundle: %s\n", he.Error())
	} else {
		u.warn("error fetching bundle: %s\n", fetchReason(err))
	}
	fallback, ferr := u.cfg.GetBool(config.UICloneBundleFallback)
	if ferr != nil {
		return nil, abortf("%v", ferr)
	}
	if !fallback {
		return nil, abortf("error applying bundle").withHint(`if this error persists, consider contacting the server operator or disable clone bundles via "--config ui.clonebundles=false"`)
	}
	u.warn("falling back to normal clone\n")
	return nil, nil
}

// fetchReason is a failed download's reason as Python's URLError shows
// it: "[Errno 111] Connection refused".
func fetchReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return fmt.Sprintf("[Errno %d] %s", int(errno), strings.ToUpper(s[:1])+s[1:])
	}
	var ce *wireproto.ConnError
	if errors.As(err, &ce) {
		return strings.TrimPrefix(ce.Error(), "error: ")
	}
	return err.Error()
}

// filterCloneBundles is bundlecaches.filterclonebundleentries for what
// hgfs applies: a BUNDLESPEC that parses and names a changegroup bundle
// (any version and compression hgfs reads) or a packed1 or v2 stream
// bundle whose requirements hgfs supports; hg 7's rules for schemes
// (http and https only here) and store fingerprints (none asked for);
// REQUIRESNI (Go always sends SNI) and REQUIREDRAM are not filters here.
func filterCloneBundles(u *ui, entries []wireproto.CloneBundleEntry, streamOnly, v2Only bool) []wireproto.CloneBundleEntry {
	var out []wireproto.CloneBundleEntry
	for _, e := range entries {
		if !strings.HasPrefix(e.URL, "http://") && !strings.HasPrefix(e.URL, "https://") {
			u.debugf("filtering %s because not a supported clonebundle scheme\n", e.URL)
			continue
		}
		if fp := e.Attrs["STORE-FINGERPRINT"]; fp != "" {
			u.debugf("filtering %s because not the correct store fingerprint (expected %s)\n", e.URL, fp)
			continue
		}
		if _, ok := e.Attrs["BUNDLESPEC"]; ok {
			if e.SpecErr != nil {
				if errors.Is(e.SpecErr, bundle2.ErrUnsupportedSpec) {
					u.debugf("filtering %s because unsupported bundle spec: %s\n", e.URL, specReason(e.SpecErr))
				} else {
					u.debugf("%s\n", specReason(e.SpecErr))
				}
				continue
			}
			if why := unusableSpec(e.Spec); why != "" {
				u.debugf("filtering %s because unsupported bundle spec: %s\n", e.URL, why)
				continue
			}
			if streamOnly && !e.Spec.IsStreamClone() {
				u.debugf("filtering %s because not a stream clone\n", e.URL)
				continue
			}
			if v2Only && e.Spec.Stream != "v2" {
				u.debugf("filtering %s because a mount takes stream v2 bundles only\n", e.URL)
				continue
			}
		} else if streamOnly {
			u.debugf("filtering %s because cannot determine if a stream clone bundle\n", e.URL)
			continue
		}
		out = append(out, e)
	}
	return out
}

// specReason is a spec error as hg words it (its message without the
// sentinel's prefix).
func specReason(err error) string {
	s := err.Error()
	for _, p := range []string{bundle2.ErrUnsupportedSpec.Error() + ": ", bundle2.ErrInvalidSpec.Error() + ": "} {
		if r, ok := strings.CutPrefix(s, p); ok {
			return r
		}
	}
	return s
}

// unusableSpec says why hgfs cannot apply a bundle of a spec hg knows:
// a stream format other than v2 (v3-exp) or requirements hgfs lacks.
func unusableSpec(s *bundle2.Spec) string {
	if s.Stream != "" && s.Stream != "v2" {
		return fmt.Sprintf("stream %s is not supported", s.Stream)
	}
	if missing := streamclone.MissingRequirements(s.Requirements()); len(missing) > 0 {
		return "missing support for repository features: " + strings.Join(missing, ", ")
	}
	return ""
}

// sortCloneBundles is bundlecaches.sortclonebundleentries: a stable
// sort by ui.clonebundleprefers, each KEY=VALUE in turn.
func sortCloneBundles(cfg *configSet, entries []wireproto.CloneBundleEntry) ([]wireproto.CloneBundleEntry, error) {
	var prefers [][2]string
	for _, p := range cfg.List(config.UICloneBundlePrefers.Section, config.UICloneBundlePrefers.Name) {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, abortf("invalid ui.clonebundleprefers item: %s", p).withHint("each comma separated item should be key=value pairs")
		}
		prefers = append(prefers, [2]string{k, v})
	}
	if len(prefers) == 0 {
		return entries, nil
	}
	out := append([]wireproto.CloneBundleEntry(nil), entries...)
	// Insertion sort: stable, and right for the partial order hg's
	// comparison defines over a handful of entries.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && cloneBundleCmp(out[j], out[j-1], prefers) < 0; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// cloneBundleCmp is bundlecaches.clonebundleentry._cmp.
func cloneBundleCmp(a, b wireproto.CloneBundleEntry, prefers [][2]string) int {
	for _, p := range prefers {
		key, want := p[0], p[1]
		av, aok := a.Attrs[key]
		bv, bok := b.Attrs[key]
		switch {
		case aok && !bok && av == want:
			return -1
		case bok && !aok && bv == want:
			return 1
		case !aok || !bok, av == bv:
			continue
		case av == want:
			return -1
		case bv == want:
			return 1
		}
	}
	return 0
}

// cloneBundleClone clones through the chosen bundle: the bundle applied
// into the staged repository as 'hgfs unbundle' applies it, then the
// rest pulled from peer, all removed if either fails.
func (cl *cloner) cloneBundleClone(peer wireproto.Peer, remote *remoteOutput, cb *cloneBundle) error {
	defer cb.body.Close()
	r := cb.reader()
	return cl.changegroupClone(func(root string) error {
		_, err := unbundleFrom(cl.ctx, cl.c, root, cb.url, "bundleurl", r, true)
		if cl.ctx.Err() != nil {
			return cl.ctx.Err()
		}
		if cerr := cb.verify(err); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		cb.body.Close()
		cl.c.ui.status("finished applying clone bundle\n")
		_, err = exchange.Pull(cl.ctx, root, peer, cl.defaultURL, exchange.PullOptions{Options: cloneSessionOptions(cl.c, root), QuietBookmarks: true})
		remote.flush(cl.c.ui)
		if err != nil {
			return pullError(cl.ctx, cl.c, err, root)
		}
		return nil
	})
}

// pullAfterMount reports whether a mount can take a clone bundle: the
// rest is pulled through the mount once it is up, so not when the mount
// is served in the foreground (the command serves it until unmounted).
func (cl *cloner) pullAfterMount() bool {
	return !cl.c.opts.Bool("foreground") && !noDaemon
}

// cloneBundleMount fills the mount's cache from a stream v2 clone bundle
// as it downloads (no copy on disk), checked against its manifest entry;
// runClone pulls the rest once the cache is mounted.
func (cl *cloner) cloneBundleMount(cb *cloneBundle) error {
	defer cb.body.Close()
	r := cb.reader()
	_, err := cl.apply(true, map[string]string{}, func(s streamclone.Sink, o streamclone.Options) (*streamclone.Result, error) {
		return streamclone.ApplyBundle(cl.ctx, r, s, o)
	})
	if cerr := cb.verify(err); cerr != nil {
		return cerr
	}
	if err != nil {
		return applyError(cl.ctx, cl.c.ui, err)
	}
	cl.c.ui.status("finished applying clone bundle\n")
	return nil
}

// pullIntoMount pulls what the clone bundle lacked into the mounted
// repository.
func (cl *cloner) pullIntoMount() error {
	peer, remote, err := openPeer(cl.ctx, cl.c, cl.pullSource)
	if err != nil {
		return err
	}
	defer peer.Close()
	defer remote.flush(cl.c.ui)
	_, err = exchange.Pull(cl.ctx, cl.destAbs, peer, cl.defaultURL, exchange.PullOptions{Options: cloneSessionOptions(cl.c, cl.destAbs), QuietBookmarks: true})
	remote.flush(cl.c.ui)
	if err != nil {
		return pullError(cl.ctx, cl.c, err, cl.destAbs)
	}
	return nil
}
