// Package repo reads a Mercurial repository as a whole: the changelog,
// manifest log and filelogs of its store (through package store and
// package revlog), and the names that point into them — tags, bookmarks,
// branches, the working directory parent — so that commands can resolve a
// revision symbol the way hg does and walk what it names.
//
// It only reads: writing history is package exchange's. Store formats
// (revlogs, phaseroots, bookmarks, obsstore, requirements) are parsed by
// revlog and store, never here; repo parses only .hgtags and localtags,
// which are tags.py's and used nowhere else.
//
// # Terminology
//
// A rev is a changelog revision number (0-based, -1 is the null revision);
// a node is its 20-byte hash. A symbol is what a user types to name a
// changeset: a rev number (negative ones count back from the end), a full
// or abbreviated hex node, "tip", "null", ".", a bookmark, a tag, or a
// branch name. Phases (public, draft, secret) come from the store's
// phaseroots file; obsolescence markers from its obsstore. A changeset is
// hidden when it is obsolete, not public, and neither pinned (working
// directory parent, bookmark, local tag) nor an ancestor of a visible
// changeset — hg's "visible" view, which is what hg log shows by default.
//
// Lookup follows mercurial/scmutil.py revsymbol: special names, then rev
// numbers, then full nodes, then names (bookmarks, tags, branches, in that
// order, as mercurial/namespaces.py registers them), then node prefixes.
// Tags follow mercurial/tags.py: the .hgtags file of every head, oldest
// head first, merged so that the tipmost definition wins unless the other
// supersedes it, then .hg/localtags.
//
// Open takes a repository root on disk; OpenFS takes any fs.FS of a .hg
// directory (a FUSE cache's view, os.DirFS), which is how package hgview
// reads the repository of a mount. Everything is read through that
// fs.FS and the store's (store.OpenFS), so both behave the same; only
// Repo.Root and the store's paths are empty for OpenFS. Branches gives
// hg's branchmap (heads, closed heads, branch tips) over the visible
// changesets; ActiveBookmark reads bookmarks.current.
//
// # What this package owns, and what it must not do
//
// It owns reading typed revisions out of a repository: a changeset by
// number (Changeset), the manifest a changeset or a node names
// (Manifest, ReadManifest), a file's content by manifest entry without
// its copy metadata (FileData, and FileContent for a filelog a caller
// opened itself, as hgview does). Everyone else (hgview, hgfmt, cmd/hgfs)
// goes through these rather than pairing Revision with a revlog parser.
// The text formats themselves are package revlog's (ParseChangeset,
// ParseManifest, ParseFileMeta): this package never splits a changeset,
// a manifest line or a metadata header by hand, and never rebuilds a
// revision other than through revlog.Revlog. verify reads texts itself
// (it must report each failure in hg's words), and exchange reads its
// own writers' (a new head closing a branch), but both parse them with
// revlog's parsers too. It only reads: adding history is package
// exchange's.
//
// # Errors
//
// Lookup failures are *LookupError values wrapping ErrUnknownRevision,
// ErrAmbiguous or ErrHidden, whose messages are hg's ("unknown revision
// 'x'", "ambiguous revision identifier: x"). Damaged revlogs surface as
// the revlog package's errors, wrapped with the file they came from.
// Unparseable names files (.hgtags lines, bookmarks) are skipped as hg
// skips them.
//
// # Concurrency
//
// A Repo is safe for concurrent use once opened: the changelog and
// manifest log are opened once, names and phases are computed once on
// first use (sync.Once), and filelogs are opened per call. Close releases
// the revlogs; callers must not use the Repo afterwards.
package repo
