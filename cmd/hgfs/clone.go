package main

// hgfs clone: a stream clone from hg serve (HTTP), ssh, a local
// repository or a stream bundle file, into a new directory.
//
// The negotiation is hg's (exchange._pullbundle2, streamclone.py): with
// --stream (or a server advertising stream-preferred), a server whose
// bundle2 capability lists stream=v2 is asked for a getbundle with
// stream=1 and cg=0; otherwise one advertising "stream" or "streamreqs"
// gets the legacy stream_out. Without a stream, the clone pulls
// changegroups into a new repository (clone_cg.go).
//
// Failure leaves nothing that looks like a repository: the DirSink stages
// everything under DEST/.hg.partial and renames it to DEST/.hg only when
// every file is written; on error or interrupt it removes what it made
// (DEST itself if it created it).

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/exchange"
	"github.com/hgfs/hgfs/internal/hugeheap"
	"github.com/hgfs/hgfs/internal/readahead"
	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
	"github.com/hgfs/hgfs/worktree"
)

func init() {
	register(&command{
		name:     "clone",
		norepo:   true,
		synopsis: "[OPTION]... SOURCE [DEST]",
		help: `make a copy of an existing repository

    Create a copy of the repository SOURCE in the new directory DEST (by
    default the base name of SOURCE). SOURCE may be an http(s):// URL of
    hg serve or hgweb, an ssh:// URL, a local repository, or a bundle file:
    a stream clone bundle (packed1 from 'hg debugcreatestreamclonebundle',
    or 'hg bundle -a -t "none-v2;stream=v2"') or a changegroup bundle
    ('hg bundle -a').

    SOURCE may also be a bundle's URL: s3://BUCKET/KEY (fetched by the
    helper hgfs-s3 with the S3 settings of 'hgfs help clonebundles':
    hgfs.s3-*, AWS_*), or an
    http(s):// URL. An http(s) URL with a query (a pre-signed URL) is a
    bundle; one whose path ends in .hg, .hgbundle or .bundle is fetched
    as a bundle first, any other is asked for a server's capabilities
    first, as hg does; if the first try gets an answer that is not what it
    wanted, the other is tried. The bundle is applied as it downloads,
    and the clone's default path is the URL (without its password).

    As with hg, a network clone applies changegroups (the same path as
    'hgfs pull' into an empty repository) unless --stream is given or the
    server prefers streaming (server.preferuncompressed); --stream copies
    the store files as they are, which is the fast way to clone a large
    repository. A local repository's store is copied, as hg does, unless it
    has secret changesets, is publishing with hidden changesets, is locked
    or --pull is given: then it is pulled (without its secret and hidden
    changesets). A publishing repository's copy is all public. If
    streaming is requested but the server does not allow it, or needs a
    repository format hgfs lacks, the clone warns and applies changegroups.

    The clone then checks out a working copy, as hg does: the revision
    -u/--updaterev names, else the "@" bookmark, else the tip of branch
    default (see hgfs help update); -U/--noupdate leaves it empty. A clone
    into a mount checks out too, straight into the cache before it is
    mounted, and virtually: each regular file names its revision instead
    of holding its bytes, which are read from the store when read and
    copied into the cache when the file is first written ([hgfs]
    virtual-checkout = false writes them instead). -r/--rev clones
    only the given changesets and their ancestors, -b/--branch BRANCH or
    SOURCE#BRANCH the heads of the named branch (a #REV that names no
    branch is a revision), as hg does: by changegroup, not with --stream
    or into a mount, from a server or a local repository (served by
    hgfs's own server in this process), not a bundle. The clone checks
    out the first of them, and its default path keeps the #BRANCH, so
    that pulls follow the branch.

    Clone bundles: a network clone of every head (no -r) into a
    directory uses the bundles a server advertises
    (.hg/clonebundles.manifest), as hg does: the first entry hgfs can apply (changegroup bundles; packed1 and v2 stream
    bundles; only stream ones with --stream), after those
    ui.clonebundleprefers prefers, is downloaded (without the server's
    credentials) and applied, then the rest is pulled from the server. A
    failed download aborts the clone unless ui.clonebundlefallback is true;
    ui.clonebundles=false skips the bundles. A clone into a mount does
    not use them.

    With --mount, the store goes into a new hgfs cache (--cache DIR, or
    one under [hgfs] cache / $XDG_CACHE_HOME/hgfs) instead of files on
    disk, and the cache is then mounted at DEST as "hgfs mount" does:
    in the background once the mount answers, or in this process with
    --foreground. "hgfs unmount DEST" ends it; the cache stays and can be
    mounted again with "hgfs mount CACHE DEST".

    Returns 0 on success.`,
		options: append([]option{
			{'U', "noupdate", optBool, "", "the clone will include an empty working directory (only a repository)"},
			{'u', "updaterev", optString, "", "revision, tag, or branch to check out"},
			{'r', "rev", optList, "", "do not clone everything, but include this changeset and its ancestors"},
			{'b', "branch", optList, "", "do not clone everything, but include this branch's changesets and their ancestors"},
			{0, "pull", optBool, "", "use pull protocol to copy metadata"},
			{0, "stream", optBool, "", "clone with minimal data processing"},
			{0, "uncompressed", optBool, "", "an alias to --stream (DEPRECATED)"},
			{'e', "ssh", optString, "", "specify ssh command to use"},
			{0, "remotecmd", optString, "", "specify hg command to run on the remote side"},
		}, mountCloneOptions...),
		run: runClone,
	})
}

// cloneSource is what SOURCE names.
type cloneSource int

const (
	sourceRemote cloneSource = iota
	sourceLocalRepo
	sourceBundle
	sourceS3 // an s3://BUCKET/KEY bundle (clone_url.go)
)

func runClone(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return &usageError{msg: "invalid arguments"}
	}
	// A "#BRANCH" is split off the source (branchrevs.go); the default
	// path keeps it, so that pulls follow the same branch.
	source, hashBranch := splitBranch(args[0])
	kind, localPath, err := classifySource(c, source)
	if err != nil {
		return err
	}

	// hg's default URL for the clone: the absolute path of a local source,
	// the URL without its password for a remote one.
	defaultURL := localPath
	if kind == sourceRemote || kind == sourceS3 {
		defaultURL = withoutPassword(args[0])
	} else if hashBranch != "" {
		defaultURL = c.abs(strings.TrimPrefix(args[0], "file://"))
	}

	dest, defaulted := "", false
	if len(args) == 2 {
		dest = args[1]
	} else {
		dest, defaulted = defaultDest(source), true
	}
	destAbs := c.abs(strings.TrimPrefix(dest, "file://"))

	cl := &cloner{c: c, ctx: ctx, dest: dest, destAbs: destAbs, defaultURL: defaultURL, defaulted: defaulted,
		revs: c.opts.List("rev"), branches: c.opts.List("branch"), hashBranch: hashBranch}
	if cl.partial() {
		if err := cl.checkPartial(kind); err != nil {
			return err
		}
	}
	if c.opts.Bool("mount") {
		if err := cl.checkDest(); err != nil {
			return err
		}
		if err := cl.prepareMount(); err != nil {
			return err
		}
	}
	unpace := func() {}
	if cl.mount != nil {
		hugeheap.Reserve(heapReserve)
		unpace = ingestHeap(c)
	}
	switch kind {
	case sourceRemote:
		if strings.HasPrefix(source, "ssh://") {
			err = cl.fromRemote(source)
		} else {
			err = cl.fromHTTP(source)
		}
	case sourceS3:
		err = cl.fromS3(source)
	case sourceLocalRepo:
		err = cl.fromLocal(localPath)
	case sourceBundle:
		err = cl.fromBundle(localPath)
	}
	if cl.mount != nil {
		// The working copy goes into the cache too, before it is
		// finished and mounted (clone_mount.go); after a clone bundle,
		// the rest is pulled through the mount once it is mounted, and
		// the working copy follows there, through the mount's files.
		bundled := cl.pullSource != ""
		var refused error
		if err == nil {
			refused, err = cl.mountCheckout(!bundled)
		}
		// Before the mount, which --foreground serves in this process.
		unpace()
		if err := cl.finishMount(err); err != nil || !bundled {
			if err != nil {
				return err
			}
			return refused
		}
		if err := cl.pullIntoMount(); err != nil || c.opts.Bool("noupdate") {
			return err
		}
		return cloneCheckout(ctx, c, destAbs, cl.checkoutRev())
	}
	if err != nil {
		return err
	}
	if c.opts.Bool("noupdate") {
		return nil
	}
	return cloneCheckout(ctx, c, destAbs, cl.checkoutRev())
}

// classifySource tells a remote URL, a local repository and a bundle file
// apart, as hg's peer lookup does.
func classifySource(c *cmdContext, source string) (cloneSource, string, error) {
	if wireproto.IsRemote(source) {
		return sourceRemote, "", nil
	}
	if isS3Source(source) {
		return sourceS3, "", nil
	}
	p := source
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	} else if i := strings.Index(p, "://"); i > 0 && !strings.ContainsAny(p[:i], "/\\") {
		return 0, "", abortf("repository %s not found", source).withHint("hgfs clones and pulls from http://, https://, ssh:// and local paths, and clones from s3:// and bundle files")
	}
	abs := c.abs(p)
	fi, err := os.Stat(abs)
	if err != nil {
		return 0, "", abortf("repository %s not found", source)
	}
	if fi.IsDir() {
		if hg, err := os.Stat(filepath.Join(abs, ".hg")); err != nil || !hg.IsDir() {
			return 0, "", abortf("repository %s not found", source)
		}
		return sourceLocalRepo, abs, nil
	}
	return sourceBundle, abs, nil
}

// defaultDest is hg.defaultdest: the base name of the source's path.
func defaultDest(source string) string {
	p := source
	if wireproto.IsRemote(source) {
		if strings.HasPrefix(source, "ssh://") {
			if loc, err := wireproto.ParseSSHURL(source); err == nil && loc.Path != "." {
				p = loc.Path
			} else {
				return ""
			}
		} else {
			u, err := url.Parse(source)
			if err != nil || u.Path == "" {
				return ""
			}
			p = u.Path
		}
	} else {
		p = strings.TrimPrefix(p, "file://")
	}
	if p == "" {
		return ""
	}
	// os.path.basename of the root is "" (filepath.Base says "/", or "\\"
	// on Windows).
	base := filepath.Base(filepath.Clean(p))
	if base == "." || len(base) == 1 && os.IsPathSeparator(base[0]) {
		return ""
	}
	return base
}

// hidePassword is urlutil.hidepassword: source as hg shows it (hgURL),
// its password, if any, "***".
func hidePassword(source string) string {
	u := parseHgURL(source)
	if u.passwd != "" {
		u.passwd = "***"
	}
	return u.String()
}

// withoutPassword is source as hg.clone records it for the clone's
// default path: as hg writes URLs (hgURL), without the password.
func withoutPassword(source string) string {
	u := parseHgURL(source)
	u.passwd = ""
	return u.String()
}

// cloner carries one clone's state.
type cloner struct {
	c           *cmdContext
	ctx         context.Context
	dest        string // as the user named it, for messages
	destAbs     string
	defaultURL  string
	defaulted   bool         // dest was derived from the source
	mount       *mountTarget // --mount: the cache being filled
	revs        []string     // --rev: clone only these and their ancestors
	branches    []string     // --branch: and the heads of these branches
	hashBranch  string       // the source's #BRANCH
	revNodes    []string     // --rev looked up on the peer (hex)
	destChecked bool
	// pullSource is the server a mount filled from a clone bundle pulls
	// the rest from once mounted.
	pullSource string
	// sizes are the working files' sizes a mount's stream gave, for its
	// virtual checkout (ingestSizes).
	sizes *worktree.Sizes
}

// checkDest applies hg's destination rules before anything is created.
// Like hg.clone it runs once the source is open, so a source error comes
// alone, without the "destination directory" line.
func (cl *cloner) checkDest() error {
	if cl.destChecked {
		return nil
	}
	cl.destChecked = true
	if cl.defaulted && cl.dest != "" {
		cl.c.ui.status("destination directory: %s\n", cl.dest)
	}
	if cl.dest == "" {
		return abortf("empty destination path is not valid")
	}
	fi, err := os.Lstat(cl.destAbs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return abortf("%s: %v", cl.dest, errorsCause(err))
	}
	if !fi.IsDir() {
		return abortf("destination '%s' already exists", cl.dest)
	}
	if err := streamclone.CheckDest(cl.destAbs); err != nil {
		if errors.Is(err, streamclone.ErrDestNotEmpty) {
			return abortf("destination '%s' is not empty", cl.dest)
		}
		return abortf("%s: %v", cl.dest, errorsCause(err))
	}
	return nil
}

// apply runs one apply function into a new DirSink at dest, with the
// status lines and progress bar hg shows (announce: print "N files to
// transfer" and "transferred" lines, as hg does for network and bundle
// clones but not for local copies).
func (cl *cloner) apply(announce bool, extra map[string]string, fn func(streamclone.Sink, streamclone.Options) (*streamclone.Result, error)) (*streamclone.Result, error) {
	inner, err := cl.newSink()
	if err != nil {
		return nil, err
	}
	bar := newProgress(cl.c.ui, "clone")
	sink := &cloneSink{Sink: inner, ui: cl.c.ui, announce: announce, bar: bar, extra: extra}
	if cl.mount != nil {
		// Finished after the checkout (mountCheckout).
		sink.deferFinish = true
	}
	sink.extra[".hg/hgrc"] = fmt.Sprintf(clonedHgrc, cl.defaultURL)
	opt := streamclone.Options{
		Progress: bar.update,
		Output: func(text string) {
			for _, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
				cl.c.ui.status("remote: %s\n", strings.TrimSuffix(l, "\n"))
			}
		},
	}
	if cl.ingestSizes() {
		cl.sizes = worktree.NewSizes()
		opt.Whole = cl.sizes.Observe
	}
	if cl.mount == nil {
		defer dirApplyHeap(cl.c)()
	}
	res, err := fn(sink, opt)
	if cl.sizes != nil {
		cl.sizes.Wait()
		cl.c.ui.debugf("%d working file sizes learnt from the stream\n", cl.sizes.Len())
	}
	bar.done()
	if err != nil {
		return nil, err
	}
	if announce && cl.mount == nil {
		cl.reportOrphans()
	}
	if announce {
		elapsed := time.Since(sink.start).Seconds()
		if elapsed <= 0 {
			elapsed = 0.001
		}
		cl.c.ui.status("transferred %s in %.1f seconds (%s/sec)\n",
			formatBytes(float64(res.Bytes)), elapsed, formatBytes(float64(res.Bytes)/elapsed))
	}
	return res, nil
}

// reportOrphans warns of the orphans a stream brought, as the "clone"
// transaction hg applies a stream in does before it reports the
// transfer (scmutil.registersummarycallback's reportnewinstabilities,
// registered for every transaction, with markers enabled): the
// repository had none before. A repository that does not open is left
// to the checks after the clone.
func (cl *cloner) reportOrphans() {
	if createMarkers, _, _ := cl.c.ui.cfg.Evolution(); !createMarkers {
		return
	}
	r, err := repo.Open(cl.destAbs)
	if err != nil {
		return
	}
	defer r.Close()
	n := 0
	for rev := 0; rev < r.Changelog().Len(); rev++ {
		if r.Orphan(rev) {
			n++
		}
	}
	if n > 0 {
		cl.c.ui.warn("%d new orphan changesets\n", n)
	}
}

// clonedHgrc is the .hg/hgrc hg writes into a clone (keep in sync with
// mercurial/ui.py samplehgrcs['cloned']).
const clonedHgrc = `# example repository config (see 'hg help config' for more info)
[paths]
default = %s

# path aliases to other clones of this repo in URLs or filesystem paths
# (see 'hg help config.paths' for more info)
#
# default:pushurl = ssh://jdoe@example.net/hg/jdoes-fork
# my-fork         = ssh://jdoe@example.net/hg/jdoes-fork
# my-clone        = /home/jdoe/jdoes-clone

[ui]
# name and email (local to this repository, optional), e.g.
# username = Jane Doe <jdoe@example.com>
`

// cloneSink adds what a clone writes besides the stream (.hg/hgrc,
// bookmarks fetched with listkeys) just before the applier finishes the
// sink, so they are staged and made visible with everything else; and it
// turns the applier's announcement of the stream's size into hg's status
// line and the progress bar's total.
type cloneSink struct {
	streamclone.Sink
	ui       *ui
	announce bool
	bar      *progressBar
	extra    map[string]string // sink name -> content
	start    time.Time
	// deferFinish leaves the inner sink unfinished: the caller writes
	// more into it (a mount's working copy), then finishes it.
	deferFinish bool
}

var _ streamclone.Expecter = (*cloneSink)(nil)

// Expect implements streamclone.Expecter.
func (s *cloneSink) Expect(files, bytes int64) {
	if s.announce {
		s.ui.status("%d files to transfer, %s of data\n", files, formatBytes(float64(bytes)))
		s.ui.out.Flush()
	}
	s.start = time.Now()
	s.bar.setTotal(files, bytes)
	if e, ok := s.Sink.(streamclone.Expecter); ok {
		e.Expect(files, bytes)
	}
}

// Finish writes the extra files, then finishes the directory.
func (s *cloneSink) Finish() error {
	names := make([]string, 0, len(s.extra))
	for n := range s.extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := s.Sink.Create(n, int64(len(s.extra[n])))
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, s.extra[n]); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	if s.deferFinish {
		return nil
	}
	return s.Sink.Finish()
}

// fromRemote clones from an http(s):// or ssh:// peer.
func (cl *cloner) fromRemote(source string) error {
	peer, remote, err := openPeer(cl.ctx, cl.c, source)
	if err != nil {
		return err
	}
	return cl.fromPeer(source, peer, remote)
}

// fromPeer clones from the peer opened for source.
func (cl *cloner) fromPeer(source string, peer wireproto.Peer, remote *remoteOutput) error {
	ctx := cl.ctx
	u := cl.c.ui
	defer remote.flush(u)
	defer peer.Close()
	// The branches become revisions before the destination is looked
	// at, as in hg.clone.
	revs, err := addBranchRevs(ctx, peer, cl.hashBranch, cl.branches, cl.revs, nil)
	if err != nil {
		return err
	}
	cl.revs, cl.branches, cl.hashBranch = revs, nil, ""
	if err := cl.checkDest(); err != nil {
		return err
	}
	caps := peer.Capabilities()
	plan, err := exchange.PlanStream(caps)
	if err != nil {
		return abortf("%v", err)
	}

	// Clone bundles come first (exchange.pull runs
	// _maybeapplyclonebundle before any stream); a mount takes a stream
	// v2 bundle into its cache and pulls the rest once mounted.
	// hg skips clone bundles when heads were asked for
	// (exchange._maybeapplyclonebundle: pullop.heads).
	if len(cl.revs) == 0 && (cl.mount == nil || cl.pullAfterMount()) {
		cb, err := cl.pickCloneBundle(peer, cl.c.opts.Bool("stream") || cl.c.opts.Bool("uncompressed") || cl.mount != nil)
		if err != nil {
			return err
		}
		if cb != nil && cl.mount != nil {
			cl.pullSource = source
			return cl.cloneBundleMount(cb)
		}
		if cb != nil {
			return cl.cloneBundleClone(peer, remote, cb)
		}
	}
	// --pull only turns down a server's preference (hg.clone's stream=False).
	wantStream := cl.c.opts.Bool("stream") || cl.c.opts.Bool("uncompressed") || cl.mount != nil ||
		!cl.c.opts.Bool("pull") && caps.Has("stream-preferred") && len(cl.revs) == 0
	if !wantStream {
		return cl.pullClone(peer, remote)
	}
	// Where the server's stream cannot be applied, hg warns and applies
	// changegroups; a mount is filled from a stream only.
	switch {
	case plan.Disabled:
		if cl.mount != nil {
			return noStreamError()
		}
		u.warn("warning: stream clone requested but server has them disabled\n")
		return cl.pullClone(peer, remote)
	case len(plan.Missing) > 0:
		if cl.mount != nil {
			return abortf("unable to apply stream clone: unsupported format: %s", strings.Join(plan.Missing, ", ")).
				withHint("a mount is filled from a stream, and this repository's format is not one hgfs can copy; clone without --mount")
		}
		u.warn("warning: stream clone requested but client is missing requirements: %s\n", strings.Join(plan.Missing, ", "))
		u.warn("(see https://www.mercurial-scm.org/wiki/MissingRequirement for more information)\n")
		return cl.pullClone(peer, remote)
	}

	stream, err := exchange.OpenStream(ctx, peer, plan, func() { u.status("streaming all changes\n") })
	if err != nil {
		return peerError(ctx, err)
	}
	defer stream.Body.Close()
	body, stopAhead := cl.readAhead(peer, stream.Body)
	defer stopAhead()
	if plan.Kind == exchange.StreamV2 {
		_, err = cl.apply(true, map[string]string{}, func(s streamclone.Sink, o streamclone.Options) (*streamclone.Result, error) {
			return streamclone.ApplyBundle(ctx, body, s, o)
		})
		return applyError(ctx, u, err)
	}
	// The v1 stream carries no bookmarks: they are written with it.
	extra := map[string]string{}
	if len(stream.Bookmarks) > 0 {
		content, err := formatBookmarks(stream.Bookmarks)
		if err != nil {
			return abortf("%v", err)
		}
		final := store.NewStreamCloneRequirements(store.DefaultRequirements(), store.NewRequirements(orRevlogv1(plan.Requirements)...)).List()
		extra[".hg/"+store.BookmarksFile(store.NewRequirements(final...))] = content
	}
	_, err = cl.apply(true, extra, func(s streamclone.Sink, o streamclone.Options) (*streamclone.Result, error) {
		o.Requirements = plan.Requirements
		return streamclone.ApplyV1(ctx, body, s, o)
	})
	return applyError(ctx, u, err)
}

// Read-ahead of a stream from an HTTP server (HGFS_TUNE's readahead):
// 128 buffers of 256 KiB, 32 MiB at most. Measured with `go run ./bench
// -tune readahead -run 'clone --stream from hg serve' -n 5`: the
// 20,000-file clone 1.32 s against 1.71 s without, hg serve's own send
// time being 0.97-1.05 s; 5.7 MiB more peak RSS (docs/ARCHITECTURE.md).
// At 250,000 files the buffers fill; 32 of them (8 MiB) fixed cut peak
// RSS from 162 to 120 MiB but looked slower in each of five alternated
// pairs on a noisy disk, which the growing bound's runs below did not
// bear out.
//
// The bound starts at readAheadStart buffers (8 MiB) and doubles, up to
// readAheadBuffers, each time the buffers were all full and then all
// drained (HGFS_TUNE's readaheadgrow, readahead.NewGrowing): a clone
// whose applier is slower than the server throughout keeps them full,
// and more of them only hold more of the stream. Measured (2026-12-06,
// one binary, the bound fixed at 32 MiB against growing from 8, two
// alternated `go run ./bench -run 'clone --stream from hg serve' -n 5`
// runs of each): large revlogs 284 and 258 ms against 237 and 247,
// peak RSS 50.2 against 26.2 MiB (the bound did not grow); 20,000
// files 576 and 571 ms against 550 and 569, 25.6-25.9 MiB either way
// (its 4 MB stream fits either bound). At 250,000 files, by hand on
// tmpfs (3 alternated pairs): 70 against 40 MB, 6.1-6.2 against
// 6.0-6.7 s.
const (
	readAheadBuffer  = 256 << 10
	readAheadStart   = 32
	readAheadBuffers = 128
)

// readAhead returns what the applier reads a stream response from: body
// read ahead on a goroutine of its own when the peer is an HTTP server,
// whose response ends with the stream (an ssh peer's does not: its
// connection carries the next command's answer), and body itself
// otherwise; stop ends the read-ahead, before body is closed.
//
// A clone into a cache reads the response itself: its sink waits for no
// disk (the committer writes behind it), so there is no wait for the
// buffers to hide, and they cost a copy of every byte and, where hg
// serve sends faster than the applier takes, 32 MiB of memory.
// Measured (2026-12-05, one binary, alternated clones -U --mount from hg
// serve, HGFS_TUNE=-readahead against the default): large revlogs 338
// against 366 ms median and peak RSS 18 against 52 MB (20 pairs; three
// runs before it, 342/357, 307/340, 317/340 ms), 20,000 files 491.5
// against 491.9 ms (20 pairs), real history 126 against 129 ms.
func (cl *cloner) readAhead(peer wireproto.Peer, body io.Reader) (r io.Reader, stop func()) {
	if _, ok := peer.(*wireproto.HTTPPeer); !ok || cl.mount != nil || !cl.c.ui.tune.Enabled(tune.ReadAhead) {
		return body, func() {}
	}
	start := readAheadBuffers
	if cl.c.ui.tune.Enabled(tune.ReadAheadGrow) {
		start = readAheadStart
	}
	ra := readahead.NewGrowing(body, readAheadBuffer, start, readAheadBuffers)
	return ra, func() {
		cl.c.ui.debugf("read ahead of the stream: %d buffers of %d KiB at most\n", ra.Buffers(), readAheadBuffer>>10)
		ra.Close()
	}
}

func orRevlogv1(reqs []string) []string {
	if reqs == nil {
		return []string{"revlogv1"}
	}
	return reqs
}

func noStreamError() error {
	return abortf("source does not support stream clones").withHint("a clone into a mount is filled from a stream and the server does not allow streaming (server.uncompressed); clone without --mount")
}

// formatBookmarks renders the bookmarks a server listed (name -> hex
// node) as the bookmarks file holds them (store.Bookmarks.Format). Names
// and nodes come from the server: a newline would forge a line, so both
// are checked.
func formatBookmarks(books map[string]string) (string, error) {
	for n := range books {
		if !store.ValidBookmarkName(n) {
			return "", fmt.Errorf("invalid bookmark name %q from the server", n)
		}
	}
	marks, err := bundle2.DecodeBookmarkKeys(books)
	if err != nil {
		return "", err
	}
	content, err := store.Bookmarks(marks).Format()
	return string(content), err
}

// remoteOutput collects the remote side's messages (ssh stderr, already
// "remote: "-prefixed) and peer warnings. The ssh peer writes from its own
// goroutine, so the text is buffered and printed by the command's
// goroutine (flush) at the end of each step, never concurrently with it.
type remoteOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *remoteOutput) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *remoteOutput) flush(u *ui) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf.Len() > 0 {
		u.warn("%s", r.buf.String())
		r.buf.Reset()
	}
}

// peerError turns a wire protocol failure into hg's message.
func peerError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var re *wireproto.RemoteError
	switch {
	case wireproto.IsNoSuitableResponse(err):
		return abortf("no suitable response from remote hg")
	case errors.As(err, &re):
		a := abortf("%s", re.Error())
		if re.Hint != "" {
			a = a.withHint("%s", re.Hint)
		}
		return a
	}
	return abortf("%v", err)
}

// applyError turns an apply failure into hg's message. A server's
// error:abort part reads as in exchange._pullbundle2: "remote: abort: msg"
// then "abort: pull failed on remote" with the server's hint.
func applyError(ctx context.Context, u *ui, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *abortError
	if errors.As(err, &ae) {
		return err
	}
	var re *bundle2.RemoteError
	var ue *store.UnsupportedError
	switch {
	case errors.As(err, &re) && re.Kind == "error:abort":
		u.warn("remote: abort: %s\n", re.Message)
		a := abortf("pull failed on remote")
		if re.Hint != "" {
			a = a.withHint("%s", re.Hint)
		}
		return a
	case errors.Is(err, streamclone.ErrForbidden):
		return abortf("operation forbidden by server")
	case errors.Is(err, streamclone.ErrRemoteLock):
		return abortf("locking the remote repository failed")
	case errors.As(err, &ue):
		return abortf("%s", ue.Error()).withHint("%s", ue.Hint())
	}
	return abortf("%v", err)
}

// fromBundle clones from a bundle file.
func (cl *cloner) fromBundle(path string) error {
	if err := cl.checkDest(); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return abortf("%s: %v", path, errorsCause(err))
	}
	defer f.Close()
	return cl.fromBundleReader(path, cl.c.abs(path), f)
}

// fromBundleReader clones from the bundle read from r, a file or a
// download (named name in messages, full where hg names it absolute): a
// stream clone bundle (packed1 or v2) is applied as a stream, a
// changegroup bundle (hg bundle -a) into a new repository. r is read
// once, front to back: what OpenBundle reads to tell the two apart is
// replayed to the stream's applier.
func (cl *cloner) fromBundleReader(name, full string, r io.Reader) error {
	if err := cl.checkDest(); err != nil {
		return err
	}
	head := &headRecorder{r: r, on: true}
	b, perr := changegroup.OpenBundle(head)
	head.on = false
	if !errors.Is(perr, changegroup.ErrStreamBundle) {
		head.buf = nil
		if b != nil {
			defer b.Close()
		}
		if cl.mount != nil {
			return abortf("%s: not a stream clone bundle", full).withHint("a mounted clone is filled from stream bundles only ('hg bundle -a -t \"none-v2;stream=v2\"' or 'hg debugcreatestreamclonebundle')")
		}
		if perr != nil {
			return bundleError(name, perr)
		}
		return cl.bundleClone(name, b)
	}
	stream := io.MultiReader(bytes.NewReader(head.buf), r)
	_, err := cl.apply(true, map[string]string{}, func(s streamclone.Sink, o streamclone.Options) (*streamclone.Result, error) {
		return streamclone.ApplyBundle(cl.ctx, stream, s, o)
	})
	if errors.Is(err, streamclone.ErrNotStream) {
		return abortf("%s: not a stream clone bundle", full)
	}
	return applyError(cl.ctx, cl.c.ui, err)
}

// fromLocal clones a local repository as hg.clone does. Its store is
// copied (streamed as a v2 bundle, stream2 plus its bookmarks as a
// listkeys part, through a pipe into the applier) under the source's
// store lock, taken without waiting, unless hg would pull instead: when
// the source has secret changesets (a copy would carry them), is
// publishing with hidden changesets (localrepo.cancopy), is locked, or
// --pull is given (localPullClone). A mount is always filled by the copy.
func (cl *cloner) fromLocal(root string) error {
	ctx := cl.ctx
	if cl.partial() {
		// Only some changesets: pulled from the repository as from a
		// server (hg's clone pulls from its local peer then too).
		peer, remote, err := localPeer(ctx, cl.c, root)
		if err != nil {
			return err
		}
		return cl.fromPeer(root, peer, remote)
	}
	st, err := store.Open(root)
	if err != nil {
		return localRepoError(err)
	}
	st.Walkers = cl.c.ui.storeWalkers()
	if err := cl.checkDest(); err != nil {
		return err
	}
	if samePath(st.Root, cl.destAbs) {
		return abortf("destination '%s' is not empty", cl.dest)
	}
	// The source's own configuration decides what it shares, as hg's
	// srcrepo does with its .hg/hgrc: a publishing repository's copy
	// gets no phaseroots, so every changeset in it is public.
	srcCfg, err := sourceConfig(cl.c, st.Root)
	if err != nil {
		return err
	}
	publishing, err := srcCfg.GetBool(config.PhasesPublish)
	if err != nil {
		return abortf("%v", err)
	}
	secret, err := st.HasSecret()
	if err != nil {
		return abortf("%v", err)
	}
	hidden := false
	if publishing && !secret {
		if hidden, err = hasHidden(st); err != nil {
			return err
		}
	}
	_, exchangeMarkers, err := srcCfg.Evolution()
	if err != nil {
		return abortf("%v", err)
	}
	stream := cl.c.opts.Bool("stream") || cl.c.opts.Bool("uncompressed")
	src := localSource{publishing: publishing, exchangeMarkers: exchangeMarkers, stream: stream}
	pull := cl.c.opts.Bool("pull")
	if cl.mount != nil {
		if secret || hidden {
			what := "hidden"
			if secret {
				what = "secret"
			}
			return abortf("cannot clone %s into a mount: it has %s changesets", st.Root, what).
				withHint("a mount is filled by copying the store, which would carry them; clone without --mount")
		}
		pull = false
	}
	if secret || hidden || pull {
		return cl.localPullClone(st.Root, src)
	}
	books, err := readLocalBookmarks(st)
	if err != nil {
		return abortf("%v", err)
	}
	var release func()
	if cl.mount != nil {
		// A mount cannot be filled by a pull: wait for the lock.
		release, err = lockStore(ctx, cl.c.ui, st.Dir, "repository "+st.Root)
		if err != nil {
			return err
		}
	} else {
		// hg takes the lock without waiting and pulls if it is held.
		release, err = store.Lock(ctx, st.Dir, store.LockOptions{})
		var le *store.LockError
		if errors.As(err, &le) {
			cl.c.ui.debugf("%s: %v; pulling instead of copying\n", st.Root, err)
			return cl.localPullClone(st.Root, src)
		}
		if err != nil {
			return abortf("%v", err)
		}
	}
	defer release()

	pr, pw := io.Pipe()
	genDone := make(chan error, 1)
	go func() {
		err := writeLocalBundle(ctx, st, publishing, books, pw)
		pw.CloseWithError(err)
		genDone <- err
	}()
	reqs := localCloneRequirements(st.Requirements)
	_, err = cl.apply(false, map[string]string{}, func(s streamclone.Sink, o streamclone.Options) (*streamclone.Result, error) {
		o.DefaultRequirements = reqs
		return streamclone.ApplyBundle(ctx, pr, s, o)
	})
	// Unblock the generator if the applier stopped early.
	pr.CloseWithError(errors.New("clone stopped"))
	genErr := <-genDone
	if err != nil {
		if genErr != nil && !errors.Is(genErr, io.ErrClosedPipe) && ctx.Err() == nil && genErr.Error() != "clone stopped" {
			return abortf("reading %s: %v", root, genErr)
		}
		return applyError(ctx, cl.c.ui, err)
	}
	return nil
}

// localCloneRequirements is localrepo.clone_requirements: a local copy
// keeps every store requirement of the source (its layout, persistent
// nodemap) and takes the working directory ones a new repository gets.
// As the applier's defaults, the stream's format requirements (a subset
// of the source's) change nothing.
func localCloneRequirements(src store.Requirements) []string {
	wd, _, _ := store.DefaultRequirements().Split()
	_, srcStore, _ := src.Union(store.NewRequirements(store.ReqShareSafe)).Split()
	return wd.Union(srcStore).List()
}

// localRepoError renders a failure to open a local source repository.
func localRepoError(err error) error {
	var ue *store.UnsupportedError
	if errors.As(err, &ue) {
		return abortf("%s", ue.Error()).withHint("%s", ue.Hint())
	}
	return abortf("%v", err)
}

// hasHidden reports whether the source hides changesets (obsolete ones),
// which keeps hg from copying a publishing repository.
func hasHidden(st *store.Store) (bool, error) {
	if fi, err := os.Stat(filepath.Join(st.Dir, "obsstore")); err != nil || fi.Size() == 0 {
		return false, nil
	}
	r, err := repo.Open(st.Root)
	if err != nil {
		return false, localRepoError(err)
	}
	defer r.Close()
	for rev := 0; rev < r.Changelog().Len(); rev++ {
		if r.Hidden(rev) {
			return true, nil
		}
	}
	return false, nil
}

// sourceConfig is the configuration a local source repository is opened
// with: the global hgrc files, its own .hg/hgrc, then --config, which wins
// (hg's srcrepo.ui). The cwd's repository, if any, plays no part.
func sourceConfig(c *cmdContext, root string) (*configSet, error) {
	cfg, err := config.Load(os.LookupEnv)
	if err != nil {
		return nil, abortf("%v", err)
	}
	if err := cfg.ReadFile(filepath.Join(root, ".hg", "hgrc")); err != nil {
		return nil, abortf("%v", err)
	}
	copyOverrides(c, cfg)
	return cfg, nil
}

func samePath(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// writeLocalBundle writes the bundle2 a local clone applies: the store as
// a stream2 part (obsstore and caches included, and phaseroots unless the
// source is publishing, as hg's local copy does: streamclone._v2_walk)
// and the bookmarks as a listkeys part.
func writeLocalBundle(ctx context.Context, st *store.Store, publishing bool, books map[string]string, w io.Writer) error {
	bw, err := bundle2.NewWriter(w)
	if err != nil {
		return err
	}
	if err := streamclone.WriteStream2Part(ctx, bw, st, streamclone.GenerateOptions{Publishing: publishing, ObsMarkers: true}); err != nil {
		return err
	}
	if len(books) > 0 {
		if err := bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "bookmarks"}}, nil, bundle2.EncodeKeys(books)); err != nil {
			return err
		}
	}
	return bw.Close()
}

// readLocalBookmarks reads the source's bookmarks (store.ReadBookmarks)
// as the hex nodes of a listkeys part; malformed lines are skipped.
func readLocalBookmarks(st *store.Store) (map[string]string, error) {
	marks, _, err := st.ReadBookmarks()
	if err != nil || len(marks) == 0 {
		return nil, err
	}
	books := make(map[string]string, len(marks))
	for name, node := range marks {
		books[name] = hex.EncodeToString(node[:])
	}
	return books, nil
}

// lockTimeout is how long a repository lock another process holds is
// waited for: ui.timeout seconds, as hg's lock.trylock (a value that is
// not an integer is its default).
func lockTimeout(cfg *configSet) time.Duration {
	timeout, _ := cfg.GetInt(config.UITimeout)
	return time.Duration(timeout) * time.Second
}

// storeLockOptions waits for a repository's store lock as hg does: up
// to ui.timeout seconds, printing hg's "waiting for lock" message; desc
// is hg's, "repository <root>".
func storeLockOptions(u *ui, desc string) store.LockOptions {
	return store.LockOptions{
		Timeout: lockTimeout(u.cfg),
		Waiting: func(holder string) {
			// lock.trylock's printwarning.
			if host, pid, ok := strings.Cut(holder, ":"); ok {
				u.warn("waiting for lock on %s held by process '%s' on host '%s'\n", desc, pid, host)
			} else {
				u.warn("waiting for lock on %s held by '%s'\n", desc, holder)
			}
		},
	}
}

// lockStore takes a repository's store lock as hg does (store.Lock),
// waiting as storeLockOptions and printing hg's timeout messages.
func lockStore(ctx context.Context, u *ui, storeDir, desc string) (release func(), err error) {
	release, err = store.Lock(ctx, storeDir, storeLockOptions(u, desc))
	var le *store.LockError
	switch {
	case err == nil:
		return release, nil
	case errors.As(err, &le) && le.Err == store.ErrLocked:
		return nil, abortf("%s: timed out waiting for lock held by '%s'", desc, le.Holder)
	case errors.As(err, &le):
		return nil, abortf("could not lock %s: %v", desc, le.Err)
	}
	return nil, err
}

// dirOptions reads the directory sink's settings: the writers from [hgfs]
// clone-writers, the background closer from [worker], as hg's
// backgroundfilecloser does; defaults are streamclone.DefaultDirOptions
// (declared in config/items.go).
func dirOptions(cfg *configSet) (streamclone.DirOptions, error) {
	o := streamclone.DefaultDirOptions()
	var err error
	if o.BackgroundClose, err = cfg.GetBool(config.WorkerBackgroundClose); err != nil {
		return o, abortf("%v", err)
	}
	if o.Writers, err = cfg.GetInt(config.HgfsCloneWriters); err != nil {
		return o, abortf("%v", err)
	}
	if o.Writers < 0 || o.Writers > streamclone.MaxWriters {
		return o, abortf("%s must be between 0 and %d", config.HgfsCloneWriters.Key(), streamclone.MaxWriters)
	}
	for _, it := range []struct {
		dst *int
		key config.Known
	}{
		{&o.MinFileCount, config.WorkerBackgroundCloseMinFiles},
		{&o.MaxQueue, config.WorkerBackgroundCloseMaxQueue},
		{&o.ThreadCount, config.WorkerBackgroundCloseThreads},
	} {
		if *it.dst, err = cfg.GetInt(it.key); err != nil {
			return o, abortf("%v", err)
		}
		if *it.dst < 1 && it.dst != &o.MinFileCount {
			return o, abortf("%s must be at least 1", it.key.Key())
		}
	}
	return o, nil
}
