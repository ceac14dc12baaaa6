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
		synopsis: "list|rm|prune|gc [OPTION]... [CACHE]...",
		help: `manage hgfs caches

"hgfs cache list [-T json] [CACHE]..." lists the caches in the cache
directory ([hgfs] cache, else $XDG_CACHE_HOME/hgfs), or those named: each
one's path, what it was cloned from, its size on disk, its live data
(what its files hold; the rest is dead data, see gc) and where it is
mounted, or when it was last used.

"hgfs cache rm CACHE..." removes caches that are not mounted. Only hgfs
caches are removed: any other directory is refused.

"hgfs cache prune --unused-for DURATION [-n]" removes the caches of the
cache directory not mounted and not used (mounted or unmounted) for
DURATION (such as 720h or 30d); -n lists them without removing them.

"hgfs cache gc CACHE" gives back the space of the cache's dead bytes
(overwritten, truncated or deleted file contents): the live contents of
every data file at least a quarter dead are copied into a new data file
and the old files deleted, crash-safely, as a mount's background
compaction does ([hgfs] compact). The cache must not be mounted. Prints
the live and dead bytes before and after.

A CACHE is a cache's path, or its name in the cache directory when
nothing of that name is in the current directory.`,
		options: []option{
			{'T', "template", optString, "", "display with template (list: json only)"},
			{0, "unused-for", optString, "", "prune: remove caches unused for this long (720h, 30d)"},
			{'n', "dry-run", optBool, "", "prune: list what would be removed"},
		},
		norepo: true,
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) == 0 {
				return &usageError{msg: "invalid arguments"}
			}
			switch args[0] {
			case "gc":
				if len(args) != 2 {
					return &usageError{msg: "invalid arguments"}
				}
				return cacheGC(ctx, c, args[1])
			case "list", "ls":
				return cacheList(c, args[1:])
			case "rm", "remove":
				if len(args) < 2 {
					return &usageError{msg: "invalid arguments"}
				}
				return cacheRemove(c, args[1:])
			case "prune":
				if len(args) != 1 {
					return &usageError{msg: "invalid arguments"}
				}
				return cachePrune(c)
			}
			return abortf("unknown cache command '%s'", args[0]).withHint("hgfs cache list, rm, prune or gc")
		},
	})
}

func cacheGC(ctx context.Context, c *cmdContext, arg string) error {
	dir, err := cachePath(c, arg)
	if err != nil {
		return err
	}
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
