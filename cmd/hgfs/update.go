package main

import (
	"context"

	"github.com/hgfs/hgfs/worktree"
)

func init() {
	register(&command{
		name:     "update",
		aliases:  []string{"up", "checkout", "co"},
		bigHeap:  true,
		synopsis: "[-C|-c] [[-r] REV]",
		help: `update working directory (or switch revisions)

    Update the repository's working directory to the specified changeset
    (by default the tip of the working directory's branch), as hg update
    does: only the files that differ are written or removed, by several
    writers at once, and the dirstate records every file so that hg
    status reads none back.

    hgfs does not merge: a working directory with uncommitted changes is
    refused unless -C/--clean discards them (hg would carry changes that
    do not conflict over to the new revision; use hg update for that).
    -c/--check refuses uncommitted changes too, as in hg.

    Use null as the changeset to remove the working directory (like
    hgfs clone -U).

    Subrepositories and largefiles are refused: use hg update.

    Returns 0 on success.`,
		options: []option{
			{'C', "clean", optBool, "", "discard uncommitted changes (no backup)"},
			{'c', "check", optBool, "", "require clean working directory"},
			{'r', "rev", optString, "", "revision"},
		},
		run: runUpdate,
	})
}

func runUpdate(ctx context.Context, c *cmdContext, args []string) error {
	rev := c.opts.String("rev")
	if len(args) > 1 || len(args) == 1 && rev != "" {
		if len(args) == 1 {
			return abortf("please specify just one revision")
		}
		return &usageError{msg: "invalid arguments"}
	}
	if len(args) == 1 {
		rev = args[0]
	}
	if c.opts.Bool("clean") && c.opts.Bool("check") {
		return abortf("cannot specify both --clean and --check")
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	target := -2
	if rev == "" {
		// The tip of the working directory's branch (hg's destupdate
		// when the branch has one head and no bookmark is active).
		branch := "default"
		if wp, err := r.WorkingParent(); err == nil && wp >= 0 {
			if branch, err = branchOf(r, wp); err != nil {
				return err
			}
		}
		if target, err = r.Lookup(branch); err != nil {
			return lookupAbort(err)
		}
	} else if target, err = r.Lookup(rev); err != nil {
		return lookupAbort(err)
	}
	return runCheckout(ctx, c, r, target, worktree.Options{Clean: c.opts.Bool("clean"), Check: c.opts.Bool("check")})
}
