package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/exchange"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/txn"
	"github.com/hgfs/hgfs/wireproto"
)

func init() {
	register(&command{
		name:     "pull",
		bigHeap:  true,
		synopsis: "[-R REPO] [-f] [-r REV]... [-b BRANCH]... [SOURCE]",
		help: `pull changes from the specified source

    Pull changes from a remote repository (hg serve or hgweb over http(s)://,
    or ssh://) or a local one into the local repository, as 'hg pull' does: discovery with
    the remote's heads and known commands, then one getbundle carrying a
    changegroup, phase heads and bookmarks, applied in a transaction under
    the repository lock. SOURCE defaults to the repository's [paths]
    default. Changesets arrive public from a publishing server, else in the
    phases the server reports. Remote bookmarks are added or moved forward;
    a diverged one is stored as NAME@N.

    A local repository is served to the pull by hgfs's own server, in
    this process, with that repository's configuration: what it sends is
    what it would send as 'hgfs serve', the changesets hg pulls from the
    path.

    A bundle file is pulled from as hg does, as the repository with the
    bundle's changesets on top: what it adds that the repository lacks
    arrives draft (or as the bundle's phase-heads say, as hg 7 has it),
    and its bookmarks and markers are not read. -r must then leave none
    of those changesets out (hg would regenerate the part asked for;
    hgfs applies the file as it is).

    -r REV pulls REV and its ancestors; -b BRANCH, or SOURCE#BRANCH, the
    heads of the named branch and their ancestors (a #REV that names no
    branch is a revision; -b . is the working directory's branch), as hg
    does. Obsolescence markers come too where both sides exchange
    them (experimental.evolution here, the server's obsmarkers capability).
    hgfs does not update the working directory (-u is refused).

    Returns 0 on success, 1 if an update had unresolved files.`,
		options: []option{
			{'u', "update", optBool, "", "update to new branch head if new descendants were pulled (not supported)"},
			{'f', "force", optBool, "", "run even when remote repository is unrelated"},
			{'r', "rev", optList, "", "a remote changeset intended to be added"},
			{'b', "branch", optList, "", "a specific branch you would like to pull"},
			{'e', "ssh", optString, "", "specify ssh command to use"},
			{0, "remotecmd", optString, "", "specify hg command to run on the remote side"},
		},
		run: runPull,
	})
}

func runPull(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 1 {
		return &usageError{msg: "invalid arguments"}
	}
	if c.opts.Bool("update") {
		return abortf("hgfs does not update working directories").withHint("run 'hg update' after pulling")
	}
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	// Without SOURCE, [paths] default of the command's configuration
	// (a .hg/hgrc whose owner is not trusted does not count), else the
	// path "default", as hg's get_pull_paths.
	source := "default"
	if len(args) == 1 {
		source = args[0]
	} else if p := c.ui.cfg.Get(config.PathsDefault); p != "" {
		// A relative path in [paths] is relative to the repository's
		// root, as ui.fixconfig makes it.
		source = p
		if !wireproto.IsRemote(p) && !strings.Contains(p, "://") && !filepath.IsAbs(p) {
			source = filepath.Join(root, p)
		}
	}
	source, hashBranch := splitBranch(source)
	c.ui.status("pulling from %s\n", hidePassword(source))
	kind, local, err := classifySource(c, source)
	if err != nil {
		return err
	}
	var peer wireproto.Peer
	var remote *remoteOutput
	switch kind {
	case sourceRemote:
		peer, remote, err = openPeer(ctx, c, source)
	case sourceLocalRepo:
		peer, remote, err = localPeer(ctx, c, local)
	case sourceBundle:
		peer, err = openBundlePeer(root, local, source)
		remote = &remoteOutput{}
	default:
		return abortf("repository %s not found", source)
	}
	if err != nil {
		return err
	}
	defer peer.Close()
	defer remote.flush(c.ui)

	revs, err := addBranchRevs(ctx, peer, hashBranch, c.opts.List("branch"), c.opts.List("rev"), workingBranch(root))
	if err != nil {
		return err
	}
	var heads []string
	for _, rev := range revs {
		n, err := peer.Lookup(ctx, rev)
		if err != nil {
			return peerError(ctx, err)
		}
		heads = append(heads, n)
	}
	res, err := exchange.Pull(ctx, root, peer, hidePassword(source), exchange.PullOptions{
		Options:    sessionOptions(c, root),
		Heads:      heads,
		FromBundle: kind == sourceBundle,
		Force:      c.opts.Bool("force"),
	})
	remote.flush(c.ui)
	if err != nil {
		return pullError(ctx, c, err, root)
	}
	if res.Nothing {
		return nil
	}
	return postIncoming(c, root, res.ModHeads)
}

// openPeer connects to a remote source with the --ssh/--remotecmd
// settings; remote collects what the server side prints.
func openPeer(ctx context.Context, c *cmdContext, source string) (wireproto.Peer, *remoteOutput, error) {
	peer, remote, err := dialPeer(ctx, c, source)
	if err != nil {
		return nil, nil, peerError(ctx, err)
	}
	return peer, remote, nil
}

// dialPeer is openPeer with the wire protocol's error as it is.
func dialPeer(ctx context.Context, c *cmdContext, source string) (wireproto.Peer, *remoteOutput, error) {
	u := c.ui
	sshCmd := c.opts.String("ssh")
	if sshCmd == "" {
		sshCmd = u.cfg.Get(config.UISSH)
	}
	remoteCmd := c.opts.String("remotecmd")
	if remoteCmd == "" {
		remoteCmd = u.cfg.Get(config.UIRemoteCmd)
	}
	remote := &remoteOutput{}
	peer, err := wireproto.Open(ctx, source, wireproto.Options{
		SSHCommand:    sshCmd,
		RemoteCommand: remoteCmd,
		Stderr:        remote,
		Quiet:         u.quiet,
		Debugf:        func(f string, a ...any) { u.debugf(f, a...) },
		QuickAck:      u.tune.Enabled(tune.QuickAck),
	})
	remote.flush(u)
	if err != nil {
		return nil, nil, err
	}
	return peer, remote, nil
}

// pullError renders a failed pull: session errors as hg's, remote ones as
// the clone's, anything else as an abort after the rollback notice.
func pullError(ctx context.Context, c *cmdContext, err error, root string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, txn.ErrAbandoned) || errors.Is(err, store.ErrLocked) {
		return sessionError(err, root)
	}
	return applyError(ctx, c.ui, err)
}
