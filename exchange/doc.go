// Package exchange adds history to a local repository: it applies
// changegroups (from bundle files, from a server's getbundle reply) into
// the repository's revlogs inside a Mercurial-compatible transaction, and
// runs the pull that fetches them (discovery, getbundle, phases,
// bookmarks). It is what `hgfs unbundle`, `hgfs pull` and a non-stream
// `hgfs clone` share.
//
// It owns the order of a pull or an apply and what is printed of it; it
// must not decode wire or file formats itself (changegroup, streamclone,
// wireproto and store do) nor write a file outside its Session's
// transaction.
//
// The specification is Mercurial 6.3: changegroup.py (cg1unpacker.apply,
// _addchangegroupfiles), exchange.py (pull, _pullbundle2, readbundle),
// bundle2.py (part handlers), phases.py (registernew, advanceboundary),
// bookmarks.py, setdiscovery.py, scmutil.registersummarycallback and
// commands.postincoming for what is printed.
//
// # Terminology
//
//   - Session: a locked repository with an open transaction and the revlog
//     writers of one apply (Begin ... Commit or Abort).
//   - Changegroup: the changelog, manifest and filelog deltas of a set of
//     changesets (package changegroup decodes them).
//   - Linkrev: the changelog revision a manifest or file revision belongs
//     to; changegroups carry it as the changeset's node (linknode), mapped
//     here through the changelog written first.
//   - Phase roots: the store file phaseroots ("<phase> <hex node>" lines);
//     a changeset's phase is the highest phase of the roots among its
//     ancestors (itself included), public when there is none.
//
// # Order of writes and what readers see
//
// The changelog is written first (its revision numbers are the linkrevs of
// everything else) but reaches its file last: the changelog writer is
// opened with Delay, so its buffered revisions are flushed only at Commit,
// after every manifest and filelog revision is on disk. A reader that
// ignores the lock therefore never sees a changeset whose manifest or files
// are missing, as with hg's delayed changelog (changelog.delayupdate).
// Manifests and filelogs are buffered and flushed when their group ends
// (filelogs) or at Commit (manifest), data file before index. Each revlog
// has one writer per session: a file whose revisions come in several
// groups (twice in one changegroup, or in several changegroup parts of a
// bundle) continues in the writer its first group left pending.
//
// The manifest group and the file groups are applied on worker goroutines
// (Options.FileWorkers, GOMAXPROCS by default; filegroups.go): the
// session's goroutine reads the changegroup and copies each group's
// deltas into a job, bounded in number and bytes, and retires the jobs in
// changegroup order, so the batches, the fncache and the first error are
// those of applying the groups one after the other on one goroutine,
// which FileWorkers 1 does.
//
// fncache, phaseroots and bookmarks are rewritten at Commit with temporary
// file plus rename, each first backed up in the transaction, so a rollback
// restores them. With persistent-nodemap, the changelog's and manifest's
// nodemaps are written after the changelog (nodemap.go): a new data file,
// journaled as new, and the docket, backed up; the old data files are
// removed once the transaction is closed.
//
// Obsolescence markers (obsmarkers.go) are appended to the obsstore at
// Commit, journaled with its size before like a revlog, when the
// repository creates markers (Options.CreateMarkers); the summary names
// them, the changesets they obsoleted and the new orphan and
// phase-divergent changesets, as scmutil's summary callbacks do.
//
// # Errors
//
// Any error aborts the session: the transaction plays back (revlogs
// truncated to their size before it, new files removed, backups restored)
// and the repository is as before. So do a cancelled context (checked at
// every delta, every file group, between the filelogs of a batched flush
// and just before the transaction closes: a signal stops a bundle of
// 20,000 one-revision files within a file) and a panic: every exported
// entry point recovers it, aborts, releases the locks and panics again
// with the same value, so the caller still sees a bug rather than an
// ordinary error (hgfs reports "internal error"), and no journal or lock
// is left for `hg recover` to clean up. A panic in a group or flush
// worker is raised again on the session's goroutine. A crash instead leaves the
// journal, which `hgfs recover` or `hg recover` plays back.
//
// Bad changegroups name what is wrong: a delta whose base or parent is
// unknown, a revision whose text does not match its node, a linknode that
// is not a changeset of the repository or the changegroup, an empty file
// group, truncation, a revision flag whose processor the repository lacks
// (ellipsis and extstored, which only the narrow and lfs extensions read:
// hg's "missing processor for flag").
//
// # Concurrency
//
// A Session is used by one goroutine. The store lock keeps other writers
// (hg or hgfs) out for its whole life.
package exchange
