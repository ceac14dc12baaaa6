package main

// The working-copy checkout shared by clone and update: package worktree
// does the work; this file chooses the revision a clone checks out, runs
// the checkout with a progress bar and prints hg's summary line.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/wireproto"
	"github.com/hgfs/hgfs/worktree"
)

// checkoutOptions are worktree's options from the configuration: the
// writers of [hgfs] clone-writers, the wlock wait of ui.timeout.
func checkoutOptions(c *cmdContext, bar *progressBar) (worktree.Options, error) {
	w, err := c.ui.cfg.GetInt(config.HgfsCloneWriters)
	if err != nil {
		return worktree.Options{}, abortf("%v", err)
	}
	o := worktree.Options{Writers: w}
	if bar != nil {
		o.Total = func(n int) { bar.setTotal(int64(n), 0) }
		o.Progress = bar.update
	}
	return o, nil
}

// runCheckout moves the working copy of r to rev and prints hg's
// summary line.
func runCheckout(ctx context.Context, c *cmdContext, r *repo.Repo, rev int, opt worktree.Options) error {
	bar := newProgress(c.ui, "updating")
	base, err := checkoutOptions(c, bar)
	if err != nil {
		return err
	}
	opt.Writers, opt.Total, opt.Progress = base.Writers, base.Total, base.Progress
	if opt.Lock.Waiting == nil {
		opt.Lock = storeLockOptions(c.ui, "working directory of "+r.Root)
	}
	restore := checkoutHeap(c, r)
	res, err := worktree.Update(ctx, r, rev, opt)
	restore()
	bar.done()
	if err != nil {
		return checkoutError(ctx, c, err, opt)
	}
	c.ui.status("%d files updated, 0 files merged, %d files removed, 0 files unresolved\n", res.Updated, res.Removed)
	return nil
}

// smallCheckout is the size of the newest manifest (its recorded full
// length) under which a checkout counts as small for checkoutHeap.
const smallCheckout = 256 << 10

// checkoutHeap tunes the heap for a checkout of r (HGFS_TUNE's
// checkoutgc) and returns what undoes it. A small checkout (the newest
// manifest under smallCheckout) runs with GOGC 400: its live heap is a
// few MB, and fewer collections cost little memory there (on the
// real-history store, 6-7 collections became 2, peak RSS +3-5 MB). A
// larger one keeps GOGC, so that peak RSS stays flat in repository
// size. hgfs update does not ask for huge pages (it is not a bigHeap
// command): on the 20,000-file store an update between distant
// revisions, which writes 61 files, took 3-5 MB more peak RSS with
// hugeheap.Reserve (39-42 MB against 36-38) and was no faster, and a
// whole checkout was no faster either (its time is the kernel's file
// creation).
func checkoutHeap(c *cmdContext, r *repo.Repo) func() {
	if !c.ui.tune.Enabled(tune.CheckoutGC) {
		return func() {}
	}
	size := int64(-1)
	if ml, err := r.Manifestlog(); err == nil && ml.Len() > 0 {
		size = ml.Entry(ml.Len() - 1).RawLen
	}
	if size < 0 || size >= smallCheckout {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	return func() { debug.SetGCPercent(old) }
}

// checkoutError renders a checkout failure in hg's words.
func checkoutError(ctx context.Context, c *cmdContext, err error, opt worktree.Options) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *worktree.UnsupportedError
	switch {
	case errors.Is(err, worktree.ErrDirty):
		a := abortf("uncommitted changes").wrap(err)
		if !opt.Check {
			a = a.withHint("commit or update --clean to discard changes")
		}
		return a
	case errors.Is(err, worktree.ErrMerge):
		return abortf("outstanding uncommitted merge").wrap(err)
	case errors.As(err, &ue):
		return abortf("%s", ue.Error()).wrap(err)
	}
	var un *worktree.UntrackedError
	if errors.As(err, &un) {
		for _, p := range un.Paths {
			c.ui.warn("%s: untracked file differs\n", p)
		}
		return abortf("%s", un.Error()).wrap(err)
	}
	var le *store.LockError
	if errors.As(err, &le) && le.Err == store.ErrLocked {
		return abortf("working directory: timed out waiting for lock held by '%s'", le.Holder).wrap(err)
	}
	return abortf("%v", err).wrap(err)
}

// cloneCheckout checks out the clone at root as hg.clone does: -u REV,
// else the active or "@" bookmark, else the tip of branch default, else
// tip; it prints "updating to branch B" (or "updating to bookmark @")
// and activates the bookmark it updated to.
func cloneCheckout(ctx context.Context, c *cmdContext, root, updateRev string) error {
	r, err := repo.Open(root)
	if err != nil {
		return abortf("%v", err)
	}
	defer r.Close()
	rev, book, status, err := cloneTarget(r, updateRev)
	if err != nil {
		return err
	}
	c.ui.status("%s", status)
	if err := runCheckout(ctx, c, r, rev, worktree.Options{}); err != nil {
		var ue *worktree.UnsupportedError
		if errors.As(err, &ue) {
			return abortf("%s", ue.Error()).withHint("the clone is complete, without a working copy: run 'hg update' in %s", root).wrap(err)
		}
		return err
	}
	if book != "" {
		if err := os.WriteFile(filepath.Join(root, ".hg", "bookmarks.current"), []byte(book), 0o666); err != nil {
			return abortf("%v", err)
		}
	}
	return nil
}

// cloneTarget is hg.clone's choice of the revision to check out.
func cloneTarget(r *repo.Repo, updateRev string) (rev int, book, status string, err error) {
	marks, err := r.Bookmarks()
	if err != nil {
		return 0, "", "", abortf("%v", err)
	}
	rev = -2
	if updateRev != "" {
		rev, err = r.Lookup(updateRev)
		if err != nil {
			return 0, "", "", lookupAbort(err)
		}
		if _, ok := marks[updateRev]; ok {
			book = updateRev
		}
	} else if n, ok := marks["@"]; ok {
		if rv, ok := r.Changelog().Rev(n); ok {
			rev, book = rv, "@"
			branch, err := branchOf(r, rev)
			if err != nil {
				return 0, "", "", err
			}
			if branch == "default" {
				return rev, book, "updating to bookmark @\n", nil
			}
			return rev, book, "updating to bookmark @ on branch " + branch + "\n", nil
		}
	}
	if rev == -2 {
		if rev, err = r.Lookup("default"); err != nil {
			if rev, err = r.Lookup("tip"); err != nil {
				return 0, "", "", lookupAbort(err)
			}
		}
	}
	branch, err := branchOf(r, rev)
	if err != nil {
		return 0, "", "", err
	}
	return rev, book, "updating to branch " + branch + "\n", nil
}

func branchOf(r *repo.Repo, rev int) (string, error) {
	if rev == revlog.NullRev {
		return "default", nil
	}
	cs, err := r.Changeset(rev)
	if err != nil {
		return "", abortf("%v", err)
	}
	return cs.Branch(), nil
}

// checkPartial refuses what a clone of some changesets (--rev,
// --branch, #BRANCH) cannot do: it pulls their ancestors from a peer (a
// remote one, or a local repository served in this process) as the
// heads of a getbundle; a stream copies the whole store, a mount is
// filled from a stream, and a bundle is applied whole.
func (cl *cloner) checkPartial(kind cloneSource) error {
	what := "--rev ancestors"
	if len(cl.revs) == 0 {
		what = "a branch's changesets"
	}
	switch c := cl.c; {
	case c.opts.Bool("stream") || c.opts.Bool("uncompressed"):
		return abortf("cannot clone only %s with --stream", what).withHint("a stream copies the whole store; clone without --stream")
	case c.opts.Bool("mount"):
		return abortf("cannot clone only %s into a mount", what).withHint("a mount is filled from a stream, which copies the whole store")
	case kind == sourceBundle || kind == sourceS3:
		return abortf("hgfs clone cannot clone only %s from a bundle", what).withHint("clone the whole bundle, or use hg clone on a bundle file")
	}
	return nil
}

// partial reports whether the clone takes only some changesets: --rev,
// --branch or a #BRANCH.
func (cl *cloner) partial() bool {
	return len(cl.revs) > 0 || len(cl.branches) > 0 || cl.hashBranch != ""
}

// revHeads looks the --rev revisions up on the peer (hex nodes for the
// getbundle's heads), as hg.clone does; nil without --rev.
func (cl *cloner) revHeads(peer wireproto.Peer) ([]string, error) {
	var heads []string
	for _, rev := range cl.revs {
		n, err := peer.Lookup(cl.ctx, rev)
		if err != nil {
			return nil, peerError(cl.ctx, err)
		}
		heads = append(heads, n)
	}
	cl.revNodes = heads
	return heads, nil
}

// checkoutRev is the revision the clone checks out: -u, else the first
// --rev (hg.clone's checkout = revs[0]), else hg's default choice.
func (cl *cloner) checkoutRev() string {
	if u := cl.c.opts.String("updaterev"); u != "" {
		return u
	}
	if len(cl.revNodes) > 0 {
		return cl.revNodes[0]
	}
	return ""
}
