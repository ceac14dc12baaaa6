package main

import (
	"context"
	"errors"
	"strings"

	"github.com/hgfs/hgfs/fsnode"
)

func init() {
	register(&command{
		name:     "fsck",
		synopsis: "[--repair] CACHE",
		help: `check (and repair) an hgfs cache

Checks every index record, extent, directory entry and link count of the
cache, which must not be mounted, and reads every byte of file contents
to verify its checksum. Each problem is printed as "PATH: what"; damaged
contents as "PATH: data damaged (extent at offset N, ...)". With --repair,
what can be fixed is fixed and marked "(repaired)", and the checks run
again until nothing more is found: a second fsck is clean, or the
problems left are printed without "(repaired)". Damaged contents cannot
be repaired: the file is left as it is (reading the damaged part fails
with an I/O error); restore it from elsewhere or remove it. --repair
also upgrades a cache of an older format, as mounting it does.

The virtual files of a mounted clone's working copy (files that name
their revision instead of holding their bytes) are checked against the
repository in the cache: each names a file revision that exists, of
the file's size. --repair cannot give such a file its bytes back; it
is reported until removed or rewritten.

A damaged index file (pages its database cannot read) is reported as
"index.db: ..." lines, and the records that can still be read are
checked. --repair rebuilds the index from those records, keeping the
damaged file as index.db.damaged.

Returns 0 if the cache is clean (or every problem was repaired), 1 if
problems remain.`,
		options: []option{{0, "repair", optBool, "", "fix what can be fixed"}},
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) != 1 {
				return &usageError{msg: "invalid arguments"}
			}
			dir := c.abs(args[0])
			rep, err := fsnode.Fsck(dir, c.opts.Bool("repair"))
			if err != nil && rep == nil {
				a := abortf("%v", err)
				if errors.Is(err, fsnode.ErrNotCache) {
					a = abortf("%s is not an hgfs cache", args[0])
				} else if u := unfinishedClone(dir, err); u != nil {
					return u
				} else if strings.Contains(err.Error(), "in use") {
					a.withHint("unmount it first (hgfs unmount MOUNTPOINT)")
				}
				return a
			}
			remaining := 0
			for _, p := range rep.Problems {
				c.ui.write("%s\n", p)
				if !p.Repaired {
					remaining++
				}
			}
			if err == nil {
				for _, p := range checkVirtual(dir, rep.Virtual) {
					c.ui.write("%s\n", p)
					remaining++
				}
			}
			c.ui.status("checked %d inodes (%d directories, %d files, %d symlinks) in %d data files\n",
				rep.Inodes, rep.Dirs, rep.Files, rep.Symlinks, rep.DataFiles)
			if err != nil {
				return abortf("%v", err)
			}
			switch {
			case remaining > 0:
				c.ui.status("%d problems\n", remaining)
				return &exitError{code: 1}
			case len(rep.Problems) > 0:
				c.ui.status("%d problems repaired\n", len(rep.Problems))
			}
			return nil
		},
	})
}
