package main

// Clones that apply changegroups instead of streaming the store: hg's
// default for network sources (a pull into a new, empty repository), and
// the way to clone from a changegroup bundle file.
//
// The repository is built under DEST/.hg.partial (a whole repository root:
// DEST/.hg.partial/.hg) and renamed to DEST/.hg only once the pull's
// transaction has committed, so an interrupted clone leaves no DEST/.hg
// (hg leaves a repository with an abandoned journal instead).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/exchange"
	"github.com/hgfs/hgfs/internal/hugeheap"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
)

// changegroupClone makes the empty repository, runs fill on its staging
// root and moves the result into place.
func (cl *cloner) changegroupClone(fill func(root string) error) error {
	if err := cl.checkDest(); err != nil {
		return err
	}
	hugeheap.Reserve(heapReserve)
	created := false
	if _, err := os.Lstat(cl.destAbs); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	stage := filepath.Join(cl.destAbs, ".hg.partial")
	cleanup := func() {
		os.RemoveAll(stage)
		if created {
			os.Remove(cl.destAbs)
		}
	}
	if err := exchange.Init(stage, store.DefaultRequirements().List(), fmt.Sprintf(clonedHgrc, cl.defaultURL)); err != nil {
		cleanup()
		return abortf("%v", err)
	}
	if err := fill(stage); err != nil {
		cleanup()
		return err
	}
	if err := os.Rename(filepath.Join(stage, ".hg"), filepath.Join(cl.destAbs, ".hg")); err != nil {
		cleanup()
		return abortf("%v", err)
	}
	if err := os.Remove(stage); err != nil {
		return abortf("%v", err)
	}
	return nil
}

// pullClone clones from a remote peer with a changegroup.
func (cl *cloner) pullClone(peer wireproto.Peer, remote *remoteOutput) error {
	// A server that streams says what its repository needs: tree
	// manifests arrive as tree groups hgfs cannot write, so the pull is
	// refused by name before anything is fetched.
	if v, _ := peer.Capabilities().Get("streamreqs"); v != "" {
		for _, r := range strings.Split(v, ",") {
			if r == store.ReqTreemanifest {
				a := abortf("the source repository requires %s, which hgfs cannot write from changegroups", r)
				if len(streamclone.MissingRequirements(strings.Split(v, ","))) == 0 {
					a = a.withHint("clone it with --stream, which copies it as it is")
				}
				return a
			}
		}
	}
	return cl.changegroupClone(func(root string) error {
		heads, err := cl.revHeads(peer)
		if err != nil {
			return err
		}
		_, err = exchange.Pull(cl.ctx, root, peer, cl.defaultURL, exchange.PullOptions{Options: cloneSessionOptions(cl.c, root), QuietBookmarks: true, Heads: heads})
		remote.flush(cl.c.ui)
		if err != nil {
			return pullError(cl.ctx, cl.c, err, root)
		}
		return nil
	})
}

// bundleClone clones from the changegroup bundle b, named name (hg clone
// FILE).
func (cl *cloner) bundleClone(name string, b *changegroup.Bundle) error {
	return cl.changegroupClone(func(root string) error {
		s, err := exchange.Begin(cl.ctx, root, "unbundle\nbundle:"+name, cloneSessionOptions(cl.c, root))
		if err != nil {
			return sessionError(err, root)
		}
		cl.c.ui.status("requesting all changes\n")
		if _, err := s.ApplyBundle(cl.ctx, b, exchange.BookmarksApply); err != nil {
			return bundleError(name, err)
		}
		if err := s.Commit(); err != nil {
			return abortf("%v", err)
		}
		return nil
	})
}

// cloneSessionOptions are a clone's: the pull's messages, but the
// transaction's rollback notices are pointless for a clone that is
// removed anyway. Its warnings stay: hg's clone reports new orphans as
// its pull does.
func cloneSessionOptions(c *cmdContext, root string) exchange.Options {
	o := sessionOptions(c, root)
	o.QuietRollback = true
	return o
}

// localPullClone clones a local repository by pulling from it, as hg.clone
// does when it cannot copy the store: the source has secret changesets
// (a copy would carry them), is publishing with hidden changesets
// (cancopy), is locked, or --pull asks for it. What is pulled is the
// source's served view (neither secret nor hidden changesets), with its
// phases (all public from a publishing source) and the bookmarks on
// changesets it carries, as hg's local peer sends them. A stream asked
// for is refused with hg's warning: its local peer advertises neither
// "stream" nor "streamreqs" (streamclone.canperformstreamclone).
// Obsolescence markers come along when both sides exchange them (the
// local peer's bundle2 caps carry "obsmarkers" when the source enables
// exchange): the markers relevant to what is pulled, sorted, as
// exchange._getbundleobsmarkerpart sends them.
func (cl *cloner) localPullClone(root string, src localSource) error {
	publishing, stream := src.publishing, src.stream
	ctx := cl.ctx
	if stream {
		cl.c.ui.warn("warning: stream clone requested but server has them disabled\n")
	}
	r, err := repo.Open(root)
	if err != nil {
		return localRepoError(err)
	}
	defer r.Close()
	vis, err := r.Visible()
	if err != nil {
		return abortf("%v", err)
	}
	clog := r.Changelog()
	served := make([]bool, clog.Len())
	nserved := 0
	for _, rev := range vis {
		if rev >= 0 && rev < len(served) && r.Phase(rev) < repo.Secret {
			served[rev] = true
			nserved++
		}
	}
	// The public heads: a publishing source's every served head, else
	// the heads of what it has public (phases.binaryencode's public set).
	public := make([]bool, len(served))
	for rev, ok := range served {
		public[rev] = ok && (publishing || r.Phase(rev) == repo.Public)
	}
	hasChild := make([]bool, len(served))
	for rev := range served {
		if public[rev] {
			p1, p2 := r.Parents(rev)
			for _, p := range []int{p1, p2} {
				if p >= 0 {
					hasChild[p] = true
				}
			}
		}
	}
	var phaseHeads []changegroup.PhaseHead
	for rev := range served {
		if public[rev] && !hasChild[rev] {
			phaseHeads = append(phaseHeads, changegroup.PhaseHead{Phase: exchange.Public, Node: r.Node(rev)})
		}
	}
	books, err := r.Bookmarks()
	if err != nil {
		return abortf("%v", err)
	}
	marks := map[string][20]byte{}
	for name, n := range books {
		if rev, ok := clog.Rev(n); ok && served[rev] {
			marks[name] = n
		}
	}

	return cl.changegroupClone(func(stage string) error {
		cl.c.ui.status("requesting all changes\n")
		if nserved == 0 {
			// Everything is secret: hg's pull gets an empty changegroup
			// and its transaction leaves nothing.
			return nil
		}
		opt := cloneSessionOptions(cl.c, stage)
		opt.WLock = true
		s, err := exchange.Begin(ctx, stage, "pull\n"+cl.defaultURL, opt)
		if err != nil {
			return sessionError(err, stage)
		}
		// The bundle hg's local peer would send for the pull: the
		// changegroup, then phase-heads and bookmarks parts.
		pr, pw := io.Pipe()
		genDone := make(chan error, 1)
		go func() {
			w, err := changegroup.NewBundleWriter(pw, changegroup.BundleOptions{
				Version: changegroup.Version3, NbChanges: nserved, PhaseHeads: phaseHeads, Bookmarks: marks,
			})
			if err == nil {
				err = changegroup.GenerateSet(ctx, r, w, served)
			}
			pw.CloseWithError(err)
			genDone <- err
		}()
		err = cl.applyLocalPull(s, pr, func() error {
			if !opt.ExchangeMarkers || !src.exchangeMarkers {
				return nil
			}
			return addLocalMarkers(s, r, served)
		})
		pr.CloseWithError(errors.New("clone stopped"))
		genErr := <-genDone
		if err != nil {
			if genErr != nil && ctx.Err() == nil && genErr.Error() != "clone stopped" {
				return abortf("reading %s: %v", root, genErr)
			}
			return err
		}
		return nil
	})
}

// localSource is what a local clone learnt of its source.
type localSource struct {
	publishing      bool // phases.publish in the source's configuration
	exchangeMarkers bool // the source exchanges obsolescence markers
	stream          bool // --stream was asked for
}

// addLocalMarkers adds the source's markers relevant to the served
// changesets to the session.
func addLocalMarkers(s *exchange.Session, r *repo.Repo, served []bool) error {
	data, err := fs.ReadFile(r.Store.FS(), "obsstore")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, all, err := store.ParseObsstore(data)
	if err != nil {
		return fmt.Errorf("obsstore: %w", err)
	}
	var nodes [][]byte
	for rev, ok := range served {
		if ok {
			n := r.Node(rev)
			nodes = append(nodes, n[:])
		}
	}
	markers := store.RelevantMarkers(all, nodes)
	if len(markers) == 0 {
		return nil
	}
	store.SortMarkers(markers)
	return s.AddObsMarkers(markers)
}

// applyLocalPull applies the bundle of a local pull, then what more
// returns, and commits.
func (cl *cloner) applyLocalPull(s *exchange.Session, r io.Reader, more func() error) error {
	b, err := changegroup.OpenBundle(r)
	if err != nil {
		s.Abort()
		return abortf("%v", err)
	}
	defer b.Close()
	if _, err := s.ApplyBundle(cl.ctx, b, exchange.BookmarksApply); err != nil {
		if cl.ctx.Err() != nil {
			return cl.ctx.Err()
		}
		return abortf("%v", err)
	}
	if err := more(); err != nil {
		s.Abort()
		return abortf("%v", err)
	}
	if err := s.Commit(); err != nil {
		return abortf("%v", err)
	}
	return nil
}
