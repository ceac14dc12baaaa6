package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hgfs/hgfs/fsnode"
)

func init() {
	register(&command{
		name:     "cache",
		synopsis: "gc CACHE",
		help: `manage an hgfs cache

"hgfs cache gc CACHE" gives back the space of the cache's dead bytes
(overwritten, truncated or deleted file contents): the live contents of
every data file at least a quarter dead are copied into a new data file
and the old files deleted, crash-safely, as a mount's background
compaction does ([hgfs] compact). The cache must not be mounted. Prints
the live and dead bytes before and after.`,
		norepo: true,
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) != 2 || args[0] != "gc" {
				return &usageError{msg: "invalid arguments"}
			}
			return cacheGC(ctx, c, args[1])
		},
	})
}

func cacheGC(ctx context.Context, c *cmdContext, arg string) error {
	dir := c.abs(arg)
	opt, err := cacheOptions(c.ui.cfg)
	if err != nil {
		return err
	}
	opt.AutoCompact = false
	opt.LockTimeout = 100 * time.Millisecond
	fsys, err := fsnode.Open(dir, opt)
	if err != nil {
		if errors.Is(err, fsnode.ErrNotCache) {
			return abortf("%s is not an hgfs cache", arg)
		}
		a := abortf("%v", err)
		if strings.Contains(err.Error(), "in use") {
			a.withHint("unmount it first (hgfs unmount MOUNTPOINT)")
		}
		return a
	}
	before := fsys.Stats()
	st, err := fsys.CompactAll(ctx)
	after := fsys.Stats()
	if cerr := fsys.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return abortf("cache %s: %v", arg, err)
	}
	c.ui.status("before: %d live, %d dead bytes in %d data files\n", before.LiveBytes, before.DeadBytes, before.DataFiles)
	c.ui.status("removed %d data files (%d bytes), copied %d live bytes\n", st.FilesRemoved, st.BytesReclaimed, st.BytesCopied)
	c.ui.status("after: %d live, %d dead bytes in %d data files\n", after.LiveBytes, after.DeadBytes, after.DataFiles)
	return nil
}
