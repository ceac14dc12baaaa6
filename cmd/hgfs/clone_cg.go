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
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/exchange"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
)

// changegroupClone makes the empty repository, runs fill on its staging
// root and moves the result into place.
func (cl *cloner) changegroupClone(fill func(root string) error) error {
	if err := cl.checkDest(); err != nil {
		return err
	}
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
	if err := exchange.Init(stage, streamclone.DefaultRequirements(), fmt.Sprintf(clonedHgrc, cl.defaultURL)); err != nil {
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
	return cl.changegroupClone(func(root string) error {
		_, err := exchange.Pull(cl.ctx, root, peer, cl.defaultURL, exchange.PullOptions{Options: cloneSessionOptions(cl.c, root), QuietBookmarks: true})
		remote.flush(cl.c.ui)
		if err != nil {
			return pullError(cl.ctx, cl.c, err, root)
		}
		return nil
	})
}

// bundleClone clones from a changegroup bundle file (hg clone FILE).
func (cl *cloner) bundleClone(path string) error {
	return cl.changegroupClone(func(root string) error {
		f, err := os.Open(path)
		if err != nil {
			return abortf("%s: %v", path, errorsCause(err))
		}
		defer f.Close()
		b, err := changegroup.OpenBundle(f)
		if err != nil {
			return bundleError(path, err)
		}
		defer b.Close()
		s, err := exchange.Begin(cl.ctx, root, "unbundle\nbundle:"+path, cloneSessionOptions(cl.c, root))
		if err != nil {
			return sessionError(err, root)
		}
		cl.c.ui.status("requesting all changes\n")
		if _, err := s.ApplyBundle(cl.ctx, b, exchange.BookmarksApply); err != nil {
			return bundleError(path, err)
		}
		if err := s.Commit(); err != nil {
			return abortf("%v", err)
		}
		return nil
	})
}

// cloneSessionOptions are a clone's: the pull's messages, but the
// transaction's rollback notices are pointless for a clone that is
// removed anyway.
func cloneSessionOptions(c *cmdContext, root string) exchange.Options {
	o := sessionOptions(c, root)
	o.Warn = nil
	return o
}
