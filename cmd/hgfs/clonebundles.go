package main

// hgfs clonebundles refresh: the repository's clone bundles written,
// put in an S3-compatible object store and listed in
// .hg/clonebundles.manifest (package s3bundles), which hgfs serve and
// hg serve's clonebundles extension then advertise.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/s3bundles"
	"github.com/hgfs/hgfs/store"
)

func init() {
	register(&command{
		name:     "clonebundles",
		bigHeap:  true,
		synopsis: "refresh [-R REPO] --to s3://BUCKET/PREFIX [--dry-run]",
		help: `publish the repository's clone bundles in an S3-compatible object store

"refresh" writes three bundles of the repository as it is now: a stream
bundle (none-v2;stream=v2), a packed1 stream bundle for old clients, and a
zstd-v2 changegroup bundle for clients whose repository format differs.
It uploads them under s3://BUCKET/PREFIX (in parts, each checksummed; an
object already holding the same bytes is not sent again), then replaces
.hg/clonebundles.manifest at once with their URLs, in that order.
"hgfs serve" and "hg serve" advertise the manifest; "hg clone" and
"hgfs clone" download the bundle from the store and pull the rest.

URLs are pre-signed for hgfs.s3-url-expiry (7 days at most: refresh more
often), or, with hgfs.s3-public-url, that base URL (a public-read bucket
or a CDN) followed by the object's key. The bundles a replaced manifest
listed are deleted by the first refresh after hgfs.s3-grace (24h), so
downloads that started before the replacement finish;
.hg/clonebundles.s3state remembers them.

The store: hgfs.s3-endpoint, hgfs.s3-region, hgfs.s3-access-key and
hgfs.s3-secret-key, else AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL),
AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_SESSION_TOKEN from the environment. --dry-run checks the store and
prints what a refresh would upload and delete, changing nothing.

hgfs reaches the store through its helper hgfs-s3, installed beside hgfs
(or on PATH, or named by the HGFS_S3_HELPER environment variable).`,
		options: []option{
			{0, "to", optString, "", "where the bundles go: s3://BUCKET/PREFIX"},
			{0, "dry-run", optBool, "", "print what would be done, change nothing"},
		},
		run: runCloneBundles,
	})
}

// cloneBundleKind is a bundle refresh writes: its object kind, the type
// 'hgfs bundle' writes it with, and its COMPRESSION.
type cloneBundleKind struct {
	kind, typ, compression string
}

// refreshKinds are the bundles in manifest order: the fast stream first,
// then packed1 for clients that know no stream=v2 spec, then the
// changegroup for clients whose repository format the streams do not
// fit.
var refreshKinds = []cloneBundleKind{
	{"stream-v2", "v2", "none"},
	{"packed1", "packed1", "none"},
	{"zstd-v2", "HG20ZS-02", "zstd"},
}

// spec is the BUNDLESPEC of the kind for a store with the streamed
// requirements reqs, as 'hg debugbundle --spec' prints it.
func (k cloneBundleKind) spec(reqs []string) string {
	quoted := bundle2.Quote("requirements=" + strings.Join(reqs, ","))
	switch k.typ {
	case "v2":
		return "none-v2;stream=v2;" + quoted
	case "packed1":
		return "none-packed1;" + quoted
	}
	return "zstd-v2"
}

func runCloneBundles(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 1 || args[0] != "refresh" {
		return &usageError{msg: "invalid arguments"}
	}
	to := c.opts.String("to")
	if to == "" {
		return abortf("no destination given").withHint("use --to s3://BUCKET/PREFIX")
	}
	target, err := s3bundles.ParseTarget(to)
	if err != nil {
		return abortf("%v", err)
	}
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	cfg, err := s3Config(c.ui.cfg)
	if err != nil {
		return err
	}
	// The store, its credentials and its bucket are checked before any
	// bundle is written.
	if err := s3bundles.RunRefresh(ctx, s3bundles.Request{Op: s3bundles.OpCheck, Config: cfg, Target: target}, nil); err != nil {
		return abortf("%v", err)
	}
	heads, reqs, err := refreshSource(root)
	if err != nil {
		return err
	}
	hgDir := filepath.Join(root, ".hg")
	if c.opts.Bool("dry-run") {
		for _, k := range refreshKinds {
			c.ui.write("would upload %s bundle (BUNDLESPEC=%s) to %s/%s\n", k.kind, k.spec(reqs), target,
				s3bundles.ObjectName(heads, "*", k.kind))
		}
		c.ui.write("would replace .hg/%s\n", s3bundles.ManifestFile)
		due, kept, err := s3bundles.Pending(hgDir, cfg.Grace, time.Now())
		if err != nil {
			return abortf("%v", err)
		}
		for _, o := range due {
			c.ui.write("would delete %s\n", o)
		}
		for _, o := range kept {
			c.ui.write("would keep %s\n", o)
		}
		return nil
	}
	tmp, err := os.MkdirTemp(hgDir, "clonebundles-tmp-")
	if err != nil {
		return abortf("%v", err)
	}
	defer os.RemoveAll(tmp)
	var bundles []s3bundles.Bundle
	for _, k := range refreshKinds {
		path := filepath.Join(tmp, k.kind+".hg")
		c.ui.status("writing %s bundle\n", k.kind)
		if strings.HasPrefix(k.typ, "HG") {
			err = writeChangegroupBundle(ctx, c, root, k.typ, path)
		} else {
			err = writeStreamBundle(ctx, c, root, k.typ, path)
		}
		if err != nil {
			return err
		}
		bundles = append(bundles, s3bundles.Bundle{Path: path, Kind: k.kind, Spec: k.spec(reqs), Compression: k.compression})
	}
	req := s3bundles.Request{Op: s3bundles.OpRefresh, Config: cfg, Target: target, HgDir: hgDir, Bundles: bundles, Heads: heads}
	if err := s3bundles.RunRefresh(ctx, req, func(line string) { c.ui.status("%s", line) }); err != nil {
		return abortf("%v", err)
	}
	return nil
}

// refreshSource is what the manifest says of the repository at root:
// its heads (hex) and the requirements its stream bundles carry.
func refreshSource(root string) (heads, reqs []string, err error) {
	st, err := store.Open(root)
	if err != nil {
		return nil, nil, abortf("%v", err)
	}
	reqs = st.Requirements.Streamed().List()
	r, err := repo.Open(root)
	if err != nil {
		return nil, nil, abortf("%v", err)
	}
	defer r.Close()
	revs, err := r.Heads()
	if err != nil {
		return nil, nil, abortf("%v", err)
	}
	for _, rev := range revs {
		heads = append(heads, r.Changelog().Node(rev).String())
	}
	return heads, reqs, nil
}

// s3Config reads the hgfs.s3-* settings, the environment filling what
// they leave empty.
func s3Config(cfg *configSet) (s3bundles.Config, error) {
	c := s3bundles.Config{
		Endpoint:  cfg.Get(config.HgfsS3Endpoint),
		Region:    cfg.Get(config.HgfsS3Region),
		AccessKey: cfg.Get(config.HgfsS3AccessKey),
		SecretKey: cfg.Get(config.HgfsS3SecretKey),
		PublicURL: cfg.Get(config.HgfsS3PublicURL),
	}
	c.FillFromEnv(os.Getenv)
	for _, d := range []struct {
		k   config.Known
		dst *time.Duration
	}{{config.HgfsS3URLExpiry, &c.URLExpiry}, {config.HgfsS3Grace, &c.Grace}, {config.HgfsS3Timeout, &c.Timeout}} {
		v := cfg.Get(d.k)
		n, err := time.ParseDuration(v)
		if err != nil || n < 0 {
			return c, abortf("%s is not a duration ('%s')", d.k.Key(), v)
		}
		*d.dst = n
	}
	return c, nil
}
