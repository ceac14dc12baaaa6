package main

import (
	"context"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

func init() {
	register(&command{
		name:     "log",
		aliases:  []string{"history"},
		synopsis: "[-r REV]... [-l NUM]",
		help: `show revision history of the repository

Prints changesets newest first in hg's default template (with -v the
files and full description, with --debug every field). -r selects
revisions: numbers, nodes or unique prefixes, tip, null, ., tags,
bookmarks, branch names, and ranges A:B. Hidden (obsolete) changesets
are not shown.`,
		options: []option{
			{'r', "rev", optList, "", "show the specified revision or revset"},
			{'l', "limit", optInt, "", "limit number of changes displayed"},
		},
		run: runLog,
	})
}

func runLog(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 0 {
		return abortf("hgfs log does not support file arguments")
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	var revs []int
	if specs := c.opts.List("rev"); len(specs) > 0 {
		seen := map[int]bool{}
		for _, spec := range specs {
			rs, err := r.LookupRange(spec)
			if err != nil {
				return lookupAbort(err)
			}
			for _, rev := range rs {
				if !seen[rev] {
					seen[rev] = true
					revs = append(revs, rev)
				}
			}
		}
	} else {
		vis, err := r.Visible()
		if err != nil {
			return abortf("%v", err)
		}
		for i := len(vis) - 1; i >= 0; i-- {
			revs = append(revs, vis[i])
		}
	}
	if c.opts.Changed("limit") {
		if n := c.opts.Int("limit"); n <= 0 {
			return abortf("limit must be positive")
		} else if n < len(revs) {
			revs = revs[:n]
		}
	}
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeChangeset(c.ui, r, rev); err != nil {
			return abortf("%v", err)
		}
	}
	return nil
}

// singleRev resolves a -r argument to one revision as scmutil.revsingle
// does: the last of the set it names.
func singleRev(r *repo.Repo, spec string) (int, error) {
	revs, err := r.LookupRange(spec)
	if err != nil {
		return 0, lookupAbort(err)
	}
	if len(revs) == 0 {
		return 0, abortf("empty revision set")
	}
	return revs[len(revs)-1], nil
}

// revManifest resolves -r (default ".") to one revision and reads its
// manifest, as cat and manifest do.
func revManifest(c *cmdContext, r *repo.Repo) (int, []revlog.ManifestEntry, error) {
	spec := c.opts.String("rev")
	if spec == "" {
		spec = "."
	}
	rev, err := singleRev(r, spec)
	if err != nil {
		return 0, nil, err
	}
	m, err := r.Manifest(rev)
	if err != nil {
		return 0, nil, abortf("%v", err)
	}
	return rev, m, nil
}

// writeChangeset prints rev in hg log's form for the ui's verbosity.
func writeChangeset(u *ui, r *repo.Repo, rev int) error {
	level := hgfmt.Normal
	switch {
	case u.debug:
		level = hgfmt.Debug
	case u.verbose:
		level = hgfmt.Verbose
	}
	b, err := hgfmt.AppendChangeset(nil, r, rev, level)
	if err != nil {
		return err
	}
	_, err = u.out.Write(b)
	return err
}
