package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
)

func init() {
	register(&command{
		name:     "bundle",
		synopsis: "[-R REPO] -t packed1|v2 FILE",
		help: `write a stream clone bundle of the whole repository

-t packed1 (hg's "none-packed1") writes what "hg debugcreatestreamclonebundle"
writes, which "hg debugapplystreamclonebundle" applies to an empty
repository. -t v2 (hg's "none-v2;stream=v2") writes what
"hg bundle -a -t 'none-v2;stream=v2'" writes, which "hg unbundle" applies to
an empty repository and "hgfs clone" and "hg clone" accept as clone bundles.

The file list is taken under the repository lock, as hg does; the data is
then copied without holding it. Phases are carried (v2) when the
repository is not publishing (phases.publish=false).`,
		options: []option{
			{'t', "type", optString, "", "bundle type: packed1 or v2"},
		},
		run: runBundle,
	})
}

// bundleType maps hg's bundle specs for stream bundles to "packed1" or
// "v2" (mercurial/bundlecaches.py parsebundlespec: compression "none",
// version "packed1", or "v2" with the parameter stream=v2).
func bundleType(spec string) (string, bool) {
	base, params, _ := strings.Cut(spec, ";")
	base = strings.TrimPrefix(base, "none-")
	switch base {
	case "packed1":
		return "packed1", params == ""
	case "v2":
		if params == "" {
			return "v2", true
		}
		for _, p := range strings.Split(params, ";") {
			if p != "stream=v2" {
				return "", false
			}
		}
		return "v2", true
	}
	return "", false
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
		return abortf("unsupported bundle type: %s", c.opts.String("type")).withHint("hgfs writes stream bundles only: packed1 (none-packed1) or v2 (none-v2;stream=v2)")
	}
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	st, err := store.Open(root)
	if err != nil {
		return abortf("%v", err)
	}
	publishing, err := c.ui.cfg.Bool("phases", "publish", true)
	if err != nil {
		return abortf("%v", err)
	}
	dest := c.abs(args[0])
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return abortf("%v", errorsCause(err))
	}
	release, err := store.Lock(ctx, st.Dir, store.LockOptions{Timeout: 10 * time.Minute})
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
		err = streamclone.GenerateV2With(ctx, st, w, streamclone.GenerateOptions{Publishing: publishing, ObsMarkers: true})
	}
	w.once.Do(release)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dest)
		return abortf("writing %s: %v", args[0], err)
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
