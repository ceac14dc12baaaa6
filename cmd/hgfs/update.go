package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/worktree"
)

func init() {
	register(&command{
		name:     "update",
		aliases:  []string{"up", "checkout", "co"},
		synopsis: "[-C|-c] [[-r] REV]",
		help: `update working directory (or switch revisions)

    Update the repository's working directory to the specified changeset
    (by default, as hg's: the active bookmark, else the highest open head
    of the working directory's branch that descends from its parent), as
    hg update does, activating or leaving bookmarks as hg does (an active
    bookmark is not moved forward: name a revision or use hg update): only the files that differ are written or removed, by several
    writers at once, and the dirstate records every file so that hg
    status reads none back.

    hgfs does not merge: a working directory with uncommitted changes is
    refused unless -C/--clean discards them (hg would carry changes that
    do not conflict over to the new revision; use hg update for that).
    -c/--check refuses uncommitted changes too, as in hg.

    Use null as the changeset to remove the working directory (like
    hgfs clone -U).

    In a mounted clone (hgfs clone --mount) the files that change are not
    written: the mount is told which revision each now shows, as the
    clone's virtual checkout did ([hgfs] virtual-checkout = false writes
    them).

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
	active, err := r.ActiveBookmark()
	if err != nil {
		return abortf("%v", err)
	}
	target := -2
	if rev == "" {
		// destutil.destupdate.
		wp, err := r.WorkingParent()
		if err != nil {
			return abortf("%v", err)
		}
		marks, err := r.Bookmarks()
		if err != nil {
			return abortf("%v", err)
		}
		if active != "" && (wp < 0 || r.Node(wp) != marks[active]) {
			c.ui.status("updating to active bookmark %s\n", active)
			rev = active
		} else {
			if target, err = updateDest(r, wp); err != nil {
				return err
			}
			if active != "" && target != wp {
				// hg would move the bookmark along, in a transaction.
				return abortf("hgfs update does not move the active bookmark %s", active).withHint("name a revision, or use hg update")
			}
		}
	}
	if rev != "" {
		if target, err = r.Lookup(rev); err != nil {
			return lookupAbort(err)
		}
	}
	setVirtual, daemon, err := mountVirtual(c, r.Root)
	if err != nil {
		return err
	}
	if err := runCheckout(ctx, c, r, target, worktree.Options{Clean: c.opts.Bool("clean"), Check: c.opts.Bool("check"), SetVirtual: setVirtual, Daemon: daemon}); err != nil {
		return err
	}
	if err := updateActiveBookmark(c, r, rev, active); err != nil {
		return err
	}
	if rev == "" && active == "" {
		return statusOtherHeads(c, r, target)
	}
	return nil
}

// updateDest is destutil._destupdatebranch: the highest open head of the
// working directory's branch that descends from its parent wp (wp
// itself when none does); from the null revision, the highest open head
// of any branch.
func updateDest(r *repo.Repo, wp int) (int, error) {
	branches, err := r.Branches()
	if err != nil {
		return 0, abortf("%v", err)
	}
	name := "default"
	if wp >= 0 {
		if name, err = branchOf(r, wp); err != nil {
			return 0, err
		}
	}
	best := -1
	for _, b := range branches {
		if wp < 0 && name == "default" || b.Name == name {
			for i, h := range b.Heads {
				if !b.Closed[i] && h > best && (wp < 0 || isAncestor(r, wp, h)) {
					best = h
				}
			}
		}
	}
	if best < 0 {
		return wp, nil
	}
	return best, nil
}

// isAncestor reports whether a is b or one of its ancestors.
func isAncestor(r *repo.Repo, a, b int) bool {
	seen := map[int]bool{}
	stack := []int{b}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == a {
			return true
		}
		if x < a || seen[x] {
			continue
		}
		seen[x] = true
		p1, p2 := r.Parents(x)
		stack = append(stack, p1, p2)
	}
	return false
}

// statusOtherHeads is destutil._statusotherbranchheads for an open head:
// at a head of a branch with other open heads, hg names where it went.
func statusOtherHeads(c *cmdContext, r *repo.Repo, at int) error {
	if at < 0 {
		return nil
	}
	name, err := branchOf(r, at)
	if err != nil {
		return err
	}
	branches, err := r.Branches()
	if err != nil {
		return abortf("%v", err)
	}
	onHead, others := false, 0
	for _, b := range branches {
		if b.Name != name {
			continue
		}
		for i, h := range b.Heads {
			switch {
			case h == at:
				onHead = true
				if b.Closed[i] {
					return nil // hg warns about closed heads instead
				}
			case !b.Closed[i]:
				others++
			}
		}
	}
	if !onHead || others == 0 {
		return nil
	}
	cs, err := r.Changeset(at)
	if err != nil {
		return abortf("%v", err)
	}
	desc, _, _ := strings.Cut(cs.Description, "\n")
	c.ui.status("updated to \"%s: %s\"\n", r.Node(at).Short(), desc)
	c.ui.status("%d other heads for branch \"%s\"\n", others, name)
	return nil
}

// updateActiveBookmark is the end of hg.updatetotally for a named
// revision: a bookmark's name activates it, anything else deactivates
// the active one.
func updateActiveBookmark(c *cmdContext, r *repo.Repo, rev, active string) error {
	if rev == "" {
		return nil
	}
	marks, err := r.Bookmarks()
	if err != nil {
		return abortf("%v", err)
	}
	current := filepath.Join(r.Root, ".hg", "bookmarks.current")
	if _, ok := marks[rev]; ok {
		if rev != active {
			c.ui.status("(activating bookmark %s)\n", rev)
		}
		if err := os.WriteFile(current, []byte(rev), 0o666); err != nil {
			return abortf("%v", err)
		}
		return nil
	}
	if active != "" {
		c.ui.status("(leaving bookmark %s)\n", active)
		if err := os.Remove(current); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return abortf("%v", err)
		}
	}
	return nil
}
