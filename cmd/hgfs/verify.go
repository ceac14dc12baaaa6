package main

import (
	"context"
	"os"

	"github.com/hgfs/hgfs/internal/gcpace"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/verify"
)

func init() {
	register(&command{
		name:     "verify",
		bigHeap:  true,
		synopsis: "", // hg verify's: --full is listed with the options only
		options: []option{
			{0, "full", optBool, "", "perform more checks (EXPERIMENTAL)"},
		},
		help: `verify the integrity of the repository

Checks, as hg verify does, that every revlog's index is sane, that every
revision of the changelog and filelogs reconstructs and hashes to its
node, that linkrevs point at the changesets that introduced them, that
changesets, manifests and filelogs agree with each other, and that the
fncache lists exactly the store's filelogs. As hg does, a manifest
revision stored as a delta is read as its delta only (the files it
names); manifests stored whole are rebuilt and hashed. With --full,
every manifest revision is also rebuilt, hashed and parsed, as
hg verify --full does. Filelogs are checked in parallel, and read,
with the manifests, while the changelog is checked
(HGFS_TUNE=-verifyahead: one after the other).
Problems are printed to stderr in hg's words, naming the file and
revision; the exit status is 1 if any integrity error was found.`,
		run: runVerify,
	})
}

// verifyGCPercent and verifyGCFloor pace the garbage collector for hgfs
// verify (the verifygc trick; internal/tune says why): each collection
// lets the heap grow by 30% of the live heap, but by at least 4 MiB, the
// runtime's own smallest target at the default GOGC.
const (
	verifyGCPercent = 30
	verifyGCFloor   = 4 << 20
)

func runVerify(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 0 {
		return &usageError{"invalid arguments"}
	}
	if c.ui.tune.Enabled(tune.VerifyGC) && os.Getenv("GOGC") == "" {
		defer gcpace.Pace(verifyGCPercent, verifyGCFloor)()
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := verify.Repo(ctx, r, verify.Options{
		Status: func(line string) { c.ui.status("%s", line) },
		Warn:   func(line string) { c.ui.warn("%s", line) },
		Full:   c.opts.Bool("full"),
		Ahead:  c.ui.tune.Enabled(tune.VerifyAhead),
	})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return abortf("%v", err)
	}
	c.ui.status("checked %d changesets with %d changes to %d files\n", res.Changesets, res.Changes, res.Files)
	if res.Warnings > 0 {
		c.ui.warn("%d warnings encountered!\n", res.Warnings)
		if res.FncacheWarned {
			c.ui.warn("hint: run \"hg debugrebuildfncache\" to recover from corrupt fncache\n")
		}
	}
	if res.Errors > 0 {
		c.ui.warn("%d integrity errors encountered!\n", res.Errors)
		if res.FirstBad >= 0 {
			c.ui.warn("(first damaged changeset appears to be %d)\n", res.FirstBad)
		}
		return &exitError{code: 1}
	}
	return nil
}
