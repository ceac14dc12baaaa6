package main

// hgfs clone of a bundle at a URL, for machines that know where a bundle
// is but have no server to clone from: an s3://BUCKET/KEY object (fetched
// with the S3 client, hgfs.s3-* and AWS_* as 'hgfs clonebundles refresh'
// reads them) or an http(s):// URL. The download is applied as it
// arrives, as a bundle file is (fromBundleReader): a stream bundle
// (packed1, v2) straight into the new store or a mount's cache, a
// changegroup bundle into a new repository; nothing is copied to disk
// first. A failed download leaves nothing, as any failed clone.
//
// Which http(s) URLs are bundles: hg treats every http(s) source of clone
// and pull as a server (only 'hg unbundle URL' fetches a bundle). hgfs
// keeps that and adds, in this order:
//
//   - a URL with a query string (a pre-signed S3 URL, say) is a bundle:
//     hg's peer refuses such URLs ("unsupported URL component"), so it
//     cannot name a server;
//   - a URL whose path ends in .hg, .hgbundle or .bundle is fetched as a
//     bundle first, any other URL is asked for the server's capabilities
//     first, as hg does;
//   - if that first try answers but not as it should (an HTTP error
//     status, a page that is not hg's wire protocol, a body that does not
//     start with a bundle's magic: HG10, HG20 or HGS1), the other is
//     tried; if both fail, the first try's error is reported. A
//     connection failure is reported at once.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/hgfs/hgfs/s3bundles"
	"github.com/hgfs/hgfs/wireproto"
)

// bundleMagics are the first four bytes of the bundles hgfs clones from
// (changegroup.OpenBundle's formats).
var bundleMagics = []string{"HG10", "HG20", "HGS1"}

// bundleSuffixes are the path endings that make an http(s) URL a bundle
// first (the names hg's docs and 'hg bundle' users give bundle files).
var bundleSuffixes = []string{".hg", ".hgbundle", ".bundle"}

// notBundleError is a download that is not a Mercurial bundle.
type notBundleError struct {
	url  string
	head []byte
}

func (e *notBundleError) Error() string {
	return fmt.Sprintf("%s is not a Mercurial bundle (it starts with %q)", e.url, e.head)
}

// isS3Source reports whether source names an S3 object.
func isS3Source(source string) bool { return strings.HasPrefix(source, "s3://") }

// bundleURLShape says how an http(s) URL is tried: bundleFirst for a
// bundle's file name or a query, bundleOnly for a query.
func bundleURLShape(source string) (bundleFirst, bundleOnly bool) {
	u, err := url.Parse(source)
	if err != nil {
		return false, false
	}
	if u.RawQuery != "" {
		return true, true
	}
	ext := strings.ToLower(path.Ext(u.Path))
	for _, s := range bundleSuffixes {
		if ext == s {
			return true, false
		}
	}
	return false, false
}

// fromHTTP clones from an http(s) URL: a server or a bundle, told apart
// as the file's comment says.
func (cl *cloner) fromHTTP(source string) error {
	bundleFirst, bundleOnly := bundleURLShape(source)
	if bundleFirst {
		body, berr := cl.openBundleURL(source)
		if berr == nil {
			return cl.fromBundleURL(source, body)
		}
		if bundleOnly || !tryOther(cl, berr) {
			return bundleURLError(source, berr)
		}
		cl.c.ui.debugf("%s: %v; trying it as a server\n", source, berr)
		peer, remote, err := dialPeer(cl.ctx, cl.c, source)
		if err != nil {
			cl.c.ui.debugf("%s: %v\n", source, err)
			return bundleURLError(source, berr)
		}
		return cl.fromPeer(source, peer, remote)
	}
	peer, remote, perr := dialPeer(cl.ctx, cl.c, source)
	if perr == nil {
		return cl.fromPeer(source, peer, remote)
	}
	if !tryOther(cl, perr) {
		return peerError(cl.ctx, perr)
	}
	cl.c.ui.debugf("%s: %v; trying it as a bundle\n", source, perr)
	body, err := cl.openBundleURL(source)
	if err != nil {
		cl.c.ui.debugf("%s: %v\n", source, err)
		return peerError(cl.ctx, perr)
	}
	return cl.fromBundleURL(source, body)
}

// tryOther reports whether a failed first try leaves the other to try:
// not when the host did not answer or the clone was interrupted.
func tryOther(cl *cloner, err error) bool {
	var ce *wireproto.ConnError
	return cl.ctx.Err() == nil && !errors.As(err, &ce)
}

// openBundleURL starts the download of an http(s) bundle (as a clone
// bundle's, wireproto.OpenCloneBundle: only the URL's own credentials)
// and checks that it starts as a bundle.
func (cl *cloner) openBundleURL(source string) (io.ReadCloser, error) {
	body, err := wireproto.OpenCloneBundle(cl.ctx, source, nil)
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(body, 64<<10)
	head, err := r.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		body.Close()
		return nil, err
	}
	for _, m := range bundleMagics {
		if string(head) == m {
			return struct {
				io.Reader
				io.Closer
			}{r, body}, nil
		}
	}
	body.Close()
	return nil, &notBundleError{url: hidePassword(source), head: head}
}

// bundleURLError words a failed bundle download as a clone bundle's is
// (hg's "HTTP error fetching bundle"), but as the clone's abort.
func bundleURLError(source string, err error) error {
	var he *wireproto.HTTPError
	var nb *notBundleError
	switch {
	case errors.As(err, &nb):
		return abortf("%v", err)
	case errors.As(err, &he):
		return abortf("HTTP error fetching bundle %s: %s", hidePassword(source), he.Error())
	}
	return abortf("error fetching bundle %s: %s", hidePassword(source), fetchReason(err))
}

// fromS3 clones from the bundle object s3://BUCKET/KEY.
func (cl *cloner) fromS3(source string) error {
	loc, err := s3bundles.ParseTarget(source)
	if err != nil {
		return abortf("%v", err).withHint("hgfs clones s3://BUCKET/KEY objects")
	}
	cfg, err := s3Config(cl.c.ui.cfg)
	if err != nil {
		return err
	}
	body, err := s3bundles.Fetch(cl.ctx, cfg, loc)
	if err != nil {
		if cl.ctx.Err() != nil {
			return cl.ctx.Err()
		}
		return abortf("%v", err)
	}
	return cl.fromBundleURL(source, body)
}

// fromBundleURL clones from the download body of the bundle at source.
// The download must end where the bundle does: a connection cut short
// fails the apply, which removes what it wrote.
func (cl *cloner) fromBundleURL(source string, body io.ReadCloser) error {
	defer body.Close()
	if cl.partial() {
		return cl.checkPartial(sourceBundle)
	}
	name := hidePassword(source)
	cl.c.ui.debugf("cloning from the bundle at %s\n", name)
	dl := &download{r: body}
	err := cl.fromBundleReader(name, name, dl)
	if err != nil && dl.err != nil && cl.ctx.Err() == nil {
		// The download's failure, not the bundle reader's view of it
		// ("stream ended unexpectedly").
		return abortf("error fetching bundle %s after %d bytes: %s", name, dl.n, fetchReason(dl.err))
	}
	return err
}

// download counts what is read from a bundle's download and keeps its
// first error other than EOF (a connection cut, a body shorter than its
// Content-Length).
type download struct {
	r   io.Reader
	n   int64
	err error
}

func (d *download) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	if err != nil && err != io.EOF && d.err == nil {
		d.err = err
	}
	return n, err
}
