package main

// Branches as clone and pull sources name them, as hg does: "-b BRANCH"
// (--branch, repeatable) and a source's "#BRANCH" fragment
// (http://host/repo#stable, ../repo#stable) ask for the heads of those
// named branches and their ancestors, found in the source's branchmap;
// a "#REV" that names no branch is taken as a revision. A clone checks
// out the first of what they name. And a local repository as a peer, so
// that what needs a server's lookups (-r, -b) works from a path too.

import (
	"context"
	"io"
	"path/filepath"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/wireproto"
)

// splitBranch is urlutil.parseurl: source without its "#BRANCH"
// fragment, and BRANCH (unquoted as hg's url class does). A source
// without a fragment, or with an empty one, comes back unchanged.
func splitBranch(source string) (loc, branch string) {
	u := parseHgURL(source)
	if u.fragment == "" {
		return source, ""
	}
	branch = u.fragment
	u.fragment, u.hasFragment = "", false
	return u.String(), branch
}

// addBranchRevs is hg's addbranchrevs (urlutil.add_branch_revs in hg
// 7): revs, then the heads of each of branches, newest first, then
// those of hashBranch, or hashBranch itself as a revision where the
// peer has no such branch. A peer without the branchmap capability
// takes hashBranch as a revision and refuses branches. dirBranch names
// the branch "." stands for; nil where there is no working directory
// (a clone). The revisions come back as names for the peer to look up.
func addBranchRevs(ctx context.Context, peer wireproto.Peer, hashBranch string, branches, revs []string, dirBranch func() (string, error)) ([]string, error) {
	if hashBranch == "" && len(branches) == 0 {
		return revs, nil
	}
	out := append([]string(nil), revs...)
	if !peer.Capabilities().Has("branchmap") {
		if len(branches) > 0 {
			return nil, abortf("remote branch lookup not supported")
		}
		return append(out, hashBranch), nil
	}
	bm, err := peer.Branchmap(ctx)
	if err != nil {
		return nil, peerError(ctx, err)
	}
	primary := func(branch string) (bool, error) {
		if branch == "." {
			if dirBranch == nil {
				return false, abortf("dirstate branch not accessible")
			}
			if branch, err = dirBranch(); err != nil {
				return false, abortf("%v", err)
			}
		}
		heads, ok := bm[branch]
		if !ok {
			return false, nil
		}
		for i := len(heads) - 1; i >= 0; i-- {
			out = append(out, heads[i])
		}
		return true, nil
	}
	for _, b := range branches {
		ok, err := primary(b)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, abortf("unknown branch '%s'", b)
		}
	}
	if hashBranch != "" {
		ok, err := primary(hashBranch)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, hashBranch)
		}
	}
	return out, nil
}

// workingBranch is the branch "." names in a repository's pull: its
// working directory's (.hg/branch).
func workingBranch(root string) func() (string, error) {
	return func() (string, error) { return dirstate.ReadBranch(filepath.Join(root, ".hg")) }
}

// localPeer opens the repository at root as a peer: hgfs's server for
// it, run in this process on pipes, with the configuration the
// repository is opened with as a source (sourceConfig: its own
// .hg/hgrc decides what it publishes and shares, as hg's localpeer's
// repository does). A clone or pull then does what it does from a
// server, and gets what hg gets from the path: the served changesets
// (no secret or hidden one), their phases and bookmarks.
func localPeer(ctx context.Context, c *cmdContext, root string) (wireproto.Peer, *remoteOutput, error) {
	cfg, err := sourceConfig(c, root)
	if err != nil {
		return nil, nil, err
	}
	sc, err := serverConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	sc.StoreWalkers = c.ui.storeWalkers()
	remote := &remoteOutput{}
	// What the server logs reads as a remote server's stderr does over
	// ssh.
	sc.ErrorLog = writerFunc(func(p []byte) (int, error) {
		remote.Write([]byte("remote: " + termSafe(string(p))))
		return len(p), nil
	})
	srv, err := wireproto.NewServer(root, sc)
	if err != nil {
		return nil, nil, localRepoError(err)
	}
	u := c.ui
	peer, err := wireproto.DialLocal(ctx, root, func(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
		return srv.ServeSSH(ctx, in, out, errOut, shutdownGrace)
	}, wireproto.Options{
		Stderr: remote,
		Quiet:  u.quiet,
		Debugf: func(f string, a ...any) { u.debugf(f, a...) },
	})
	remote.flush(u)
	if err != nil {
		return nil, nil, peerError(ctx, err)
	}
	return peer, remote, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
