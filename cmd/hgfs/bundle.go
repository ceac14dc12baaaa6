package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
)

func init() {
	register(&command{
		name:     "bundle",
		bigHeap:  true,
		synopsis: "[-R REPO] [-a] -t TYPE FILE",
		help: `write a bundle of the whole repository

Stream bundles: -t packed1 (hg's "none-packed1") writes what
"hg debugcreatestreamclonebundle" writes, which "hg debugapplystreamclonebundle"
applies to an empty repository. -t v2 (hg's "none-v2;stream=v2") writes what
"hg bundle -a -t 'none-v2;stream=v2'" writes, which "hg unbundle" applies to
an empty repository and "hgfs clone" and "hg clone" accept as clone bundles.
The file list is taken under the repository lock, as hg does; the data is
then copied without holding it. Phases are carried (v2) when the
repository is not publishing (phases.publish=false). A stream cannot
hide secret changesets: as hg, hgfs refuses a v2 stream bundle of a
repository that has some unless server.uncompressedallowsecret is set
(and any with server.uncompressed=false), and writes packed1 with a
warning. A v2 stream bundle of a repository with obsolescence markers
is refused unless experimental.evolution.bundle-obsmarker is set.

Changegroup bundles: -t none-v1, gzip-v1, none-v2, zstd-v2 or
'none-v2;cg.version=03' write every visible changeset of the repository
(hidden ones left out, secret ones in, as "hg bundle -a"), with the
stored deltas, for "hg unbundle" or "hgfs unbundle". bzip2 compression is
not written. -a is accepted for compatibility: hgfs always bundles the
whole repository.`,
		options: []option{
			{'t', "type", optString, "", "bundle type: packed1, v2, none-v1, gzip-v1, none-v2, zstd-v2"},
			{'a', "all", optBool, "", "bundle all changesets in the repository (always on)"},
		},
		run: runBundle,
	})
}

// bundleType maps hg's bundle specs (bundle2.ParseSpec) to what hgfs
// writes: "packed1" and "v2" are stream bundles; "HG10UN", "HG10GZ",
// "HG20-02" and "HG20-03" changegroup bundles. "v2" alone means the
// stream bundle, as it always has in hgfs; hg's full "none-v2" is a
// changegroup bundle.
func bundleType(spec string) (string, bool) {
	forceStream := false
	switch {
	case spec == "packed1":
		return "packed1", true
	case spec == "v2" || strings.HasPrefix(spec, "v2;"):
		spec, forceStream = "none-"+spec, true
	}
	s, err := bundle2.ParseSpec(spec)
	if err != nil {
		return "", false
	}
	version := ""
	for _, p := range s.Params {
		switch {
		case p.Name == "stream" && p.Value == "v2":
		case p.Name == "cg.version" && (p.Value == "02" || p.Value == "03") && s.Version != "v1":
			version = p.Value
		default:
			return "", false
		}
	}
	switch {
	case s.WireVersion == "s1":
		return "packed1", s.Compression == "none" && len(s.Params) == 0
	case s.Version == "v1":
		return "HG10" + s.WireCompression, s.WireCompression == "UN" || s.WireCompression == "GZ"
	case s.Stream == "v2" || forceStream:
		return "v2", s.Compression == "none" && (version == "" || version == "02")
	case s.Compression != "none" && s.Compression != "zstd" || s.Version == "v3" || s.Version == "bundle2":
		return "", false
	}
	if version == "" {
		version = "02"
	}
	comp := ""
	if s.Compression == "zstd" {
		comp = "ZS"
	}
	return "HG20" + comp + "-" + version, true
}

func runBundle(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 1 {
		return &usageError{msg: "invalid arguments"}
	}
	typ, ok := bundleType(c.opts.String("type"))
	if !ok {
		if !c.opts.Changed("type") {
			return abortf("a bundle type is required").withHint("use -t packed1 or -t v2")
		}
		return abortf("unsupported bundle type: %s", c.opts.String("type")).withHint("hgfs writes packed1, v2 (none-v2;stream=v2), none-v1, gzip-v1, none-v2 and zstd-v2 bundles")
	}
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	// hg bundle -a has nothing to write without a visible changeset, be
	// it a stream; debugcreatestreamclonebundle (packed1) writes anyway.
	if typ != "packed1" {
		if n, err := visibleCount(root); err != nil {
			return err
		} else if n == 0 {
			c.ui.status("no changes found\n")
			return errNothing
		}
	}
	if strings.HasPrefix(typ, "HG") {
		return writeChangegroupBundle(ctx, c, root, typ, args[0])
	}
	return writeStreamBundle(ctx, c, root, typ, args[0])
}

// writeStreamBundle writes a stream bundle (typ "packed1" or "v2") of
// the repository at root into the file name, removing it on failure.
func writeStreamBundle(ctx context.Context, c *cmdContext, root, typ, name string) error {
	st, err := store.Open(root)
	if err != nil {
		return abortf("%v", err)
	}
	st.Walkers = c.ui.storeWalkers()
	publishing, err := c.ui.cfg.GetBool(config.PhasesPublish)
	if err != nil {
		return abortf("%v", err)
	}
	var obsMarkers bool
	if typ == "packed1" {
		if err := warnSecretStream(c, st); err != nil {
			return err
		}
	} else if obsMarkers, err = allowStreamBundle(c, st); err != nil {
		return err
	}
	dest := c.abs(name)
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return abortf("%v", errorsCause(err))
	}
	release, err := store.Lock(ctx, st.Dir, store.LockOptions{Timeout: lockTimeout(c.ui.cfg)})
	if err != nil {
		f.Close()
		os.Remove(dest)
		return abortf("%v", err)
	}
	// The generators list the files before writing anything: the lock is
	// held for the snapshot and released at the first write.
	w := &releaseOnWrite{w: f, release: release}
	switch typ {
	case "packed1":
		err = streamclone.WritePacked1(ctx, st, w)
	default:
		err = streamclone.GenerateV2With(ctx, st, w, streamclone.GenerateOptions{Publishing: publishing, ObsMarkers: obsMarkers})
	}
	w.once.Do(release)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dest)
		return abortf("writing %s: %v", name, err)
	}
	return nil
}

// allowStreamBundle makes the checks hg bundle makes before a v2 stream
// (bundle2.addpartbundlestream2), with the settings it reads, and
// returns whether the stream carries the obsstore. The receiver of the
// file is taken to accept obsolescence markers (format V1) only with
// experimental.evolution.bundle-obsmarker. With it, hg 6.3 also adds an
// obsmarkers part holding markers the streamed obsstore already has,
// which hg 6.3 itself cannot unbundle without obsolescence enabled; hg 7
// does not, nor does hgfs.
func allowStreamBundle(c *cmdContext, st *store.Store) (obsMarkers bool, err error) {
	var uncompressed, allowSecret, bundleMarkers bool
	for _, s := range []struct {
		k   config.Known
		dst *bool
	}{
		{config.ServerUncompressed, &uncompressed},
		{config.ServerUncompressedAllowSecret, &allowSecret},
		{config.EvolutionBundleObsmarker, &bundleMarkers},
	} {
		if *s.dst, err = c.ui.cfg.GetBool(s.k); err != nil {
			return false, abortf("%v", err)
		}
	}
	ok, err := streamclone.Allowed(st, uncompressed, allowSecret)
	if err != nil {
		return false, abortf("%v", err)
	}
	if !ok {
		return false, refusedStream(streamclone.ErrNotAllowed)
	}
	var accepted []string
	if bundleMarkers {
		accepted = []string{"V1"}
	}
	obsMarkers, err = streamclone.StreamObsMarkers(st, accepted)
	var r *streamclone.Refusal
	if errors.As(err, &r) {
		return false, refusedStream(r)
	}
	if err != nil {
		return false, abortf("%v", err)
	}
	return obsMarkers, nil
}

// refusedStream is hg's abort for a stream it refuses to generate.
func refusedStream(r *streamclone.Refusal) *abortError {
	a := abortf("%s", r.Msg)
	if r.Hint != "" {
		a = a.withHint("%s", r.Hint)
	}
	return a
}

// warnSecretStream is hg debugcreatestreamclonebundle's warning: a
// packed1 bundle is written whatever the settings, secret changesets
// included.
func warnSecretStream(c *cmdContext, st *store.Store) error {
	secret, err := st.HasSecret()
	if err != nil {
		return abortf("%v", err)
	}
	if secret {
		c.ui.warn("(warning: stream clone bundle will contain secret revisions)\n")
	}
	return nil
}

type releaseOnWrite struct {
	w       io.Writer
	release func()
	once    sync.Once
}

func (r *releaseOnWrite) Write(p []byte) (int, error) {
	r.once.Do(r.release)
	return r.w.Write(p)
}

// writeChangegroupBundle writes a changegroup bundle of every visible
// revision (hg bundle -a, which works on the "visible" view: hidden
// changesets are left out, secret ones are not), removing the file on
// failure.
func writeChangegroupBundle(ctx context.Context, c *cmdContext, root, typ, name string) error {
	r, err := repo.Open(root)
	if err != nil {
		return abortf("%v", err)
	}
	defer r.Close()
	visible, err := r.Visible()
	if err != nil {
		return abortf("%v", err)
	}
	opt := changegroup.BundleOptions{Type: typ}
	if t, v, ok := strings.Cut(typ, "-"); ok && strings.HasPrefix(t, "HG20") {
		opt.Type, opt.Version, opt.Compression = "HG20", v, strings.TrimPrefix(t, "HG20")
		opt.NbChanges = len(visible)
	}
	c.ui.status("%d changesets found\n", len(visible))
	dest := c.abs(name)
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return abortf("%v", errorsCause(err))
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := changegroup.NewBundleWriter(bw, opt)
	if err == nil {
		if len(visible) == r.Changelog().Len() {
			err = changegroup.Generate(ctx, r, w)
		} else {
			// hg's filtered repository takes the slow path (linkrevs of
			// hidden changesets moved to visible ones), which
			// GenerateSet is; with nothing hidden it sends what
			// Generate does.
			include := make([]bool, r.Changelog().Len())
			for _, rev := range visible {
				include[rev] = true
			}
			err = changegroup.GenerateSet(ctx, r, w, include)
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dest)
		return abortf("writing %s: %v", name, err)
	}
	return nil
}

// visibleCount is the number of visible changesets of the repository at
// root.
func visibleCount(root string) (int, error) {
	r, err := repo.Open(root)
	if err != nil {
		return 0, abortf("%v", err)
	}
	defer r.Close()
	visible, err := r.Visible()
	if err != nil {
		return 0, abortf("%v", err)
	}
	return len(visible), nil
}
