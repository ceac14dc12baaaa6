// Package hgview is the model of the read-only .hgfs/ views every hgfs
// mount shows: a repository's revisions and revlogs as plain files, for
// cat, grep -r, diff -r, hexdump, wc and find. It knows nothing of FUSE:
// package mount adapts it (views_linux.go) to both mount kinds.
//
// # Terminology
//
// The view's root is the mount's .hgfs directory (the mount adds its own
// "stats" beside what is described here):
//
//	rev/REV/PATH         the file PATH of changeset REV, as `hg cat -r REV PATH`
//	revlogs/STOREPATH/index  the `hg debugindex --debug` table of that revlog
//	revlogs/STOREPATH/N  revision N as `hg debugdata` prints it
//	log heads tags bookmarks branches  `hg log`, `hg heads`, ... default output
//	tag/NAME bookmark/NAME branch/NAME  links to ../rev/FULLNODE (names.go)
//
// REV is anything `hg log -r` takes for one changeset that is a file
// name: a number (negative ones count from the end), a full or
// abbreviated node, "tip", "null", a tag, a bookmark, a branch name
// (its tip). "." is not offered: a view has no working directory.
// Listing rev/ shows visible changeset numbers only; every other form is found by
// lookup. STOREPATH is the revlog's .i path inside the store exactly as
// stored (encoded), so rev/ and revlogs/ name different things: the
// filelog of "README" is revlogs/data/_r_e_a_d_m_e.i. revlogs/ shows the
// changelog, the manifest log and the data/, meta/ and dh/ directories;
// other store files (fncache, phaseroots, undo and journal files) are not
// revlogs and are not shown.
//
// A changeset's tree exists only as its flat manifest: directories are
// the path prefixes in it, executable files (flag x) have mode 0555,
// symlinks (flag l) are symlinks whose target is the file's content,
// everything else is 0444. Every node of a changeset has the changeset's
// date as its mtime.
//
// # Names and what moves
//
// REV is resolved when rev/REV is looked up, and the node that lookup
// returns is bound to the changeset it named: its inode number is a hash
// of (REV, changeset node, path), so rev/tip/a and rev/5/a are different
// inodes, and once tip moves a new lookup of rev/tip gives new numbers
// while the old ones keep showing the old changeset. Such bound nodes
// and revlog revisions are Fixed (Attr.Fixed): the kernel may cache them
// for long. rev/FULLNODE is fixed too; the entry rev/SYMBOL for any other
// form, the index files and the text files are not.
//
// Names (tags, bookmarks, branches) follow mercurial/tags.py,
// bookmarks.py, branchmap.py and scmutil.revsymbol over the visible
// repository (mercurial/repoview.py, phases and obsolescence markers), as
// hg shows it without --hidden: hidden changesets are not listed and not
// found. Package repo computes all of this (repo.OpenFS reads the
// repository through the fs.FS the view is given, so a cache mount's
// repository, which lives in fsnode, is read the same way as a directory);
// this package adds only the tree, inode numbers, caching and change
// detection. The text files and revlog index tables are formatted by
// package hgfmt, as the hgfs commands format theirs.
//
// The view follows the repository: before it resolves a symbol or
// generates a text file it stats the changelog, bookmarks,
// bookmarks.current, localtags, phaseroots, obsstore and dirstate, and
// reopens (a new snapshot) when any changed. Revlogs only grow, so nodes bound to older snapshots stay
// valid; a snapshot is closed when replaced and no longer in use.
//
// Inode numbers live above Options.RootIno, in the upper half of the
// 64-bit space that mounts reserve for virtual nodes: fixed numbers for
// the root's entries (RootIno+1 is left to the mount's stats), hashes
// from 2^63+2^62 for the rest. Adapters that address nodes by number
// (the raw FUSE adapter) Remember each node they hand to the kernel and
// Forget it as the kernel does; a hash collision between two live nodes
// is an error, never a silent alias.
//
// # Laziness and memory
//
// Nothing is reconstructed until asked for. A file's size is its content
// length, so GetAttr reconstructs it (Filelog sizes are not recorded
// without the copy metadata header, which must be read to strip); the
// result goes to a byte-bounded LRU cache (Options.CacheBytes, default 64
// MiB) shared with parsed manifests and revlog revisions, so the read
// that follows a stat costs nothing. ReadDir never reconstructs files;
// Node.ListsFixed tells adapters which directories (a changeset's tree)
// they may list with attributes, which does. Prefetch reconstructs the
// files one level below such a directory in the background, bounded per
// request, so that a walk finds the next level cached (prefetch.go).
//
// # Cost of a tree walk
//
// A first grep -r of a changeset's tree reconstructs each file from its
// own filelog: one open and read of the .i (and, if split, of the .d at
// the chunk's offset), an index parse and a delta chain; the manifest is
// parsed once per changeset (cached). The repository's .hg is read
// through sysio.DirFS, whose ReadFile opens, sizes, reads and closes
// with plain system calls, about a third less than os.ReadFile's work
// per revlog; the prefetcher reads a level's indexes 64 at a time
// through io_uring instead (batch_linux.go). Open revlogs
// are not kept: a walk opens each filelog once, for the GetAttr that
// sizes the file, and the read that follows finds the text in the
// cache. What a walk costs beyond this is the adapter's FUSE round trips
// (see package mount).
//
// revlogs/STOREPATH opens the revlog with its data file's on-disk name:
// swapping the index's suffix is wrong for hashed names (dh/...), whose
// digest covers the suffix, so those are mapped back to their logical
// names through the fncache (dataNames, rebuilt when the fncache
// changes) and the logical .d is encoded; rev/ knows its logical paths
// and encodes both names directly.
//
// # What this package owns, and what it must not do
//
// It owns the views' names, inodes, laziness and caching; it does not
// own any format. Revisions are read through package repo (a manifest
// by node with Repo.ReadManifest, a file's content with repo.FileContent,
// changesets with Repo.Changeset) and revlog (Revision, the index), and
// printed through hgfmt: it never parses a changeset, manifest or file
// metadata itself, and never writes to the repository.
//
// # Errors
//
// Tree operations return syscall.Errno values for what a filesystem
// reports (ENOENT for unknown names and symbols, ENOTDIR, EISDIR,
// EINVAL from Readlink of a non-symlink); damaged revlogs surface as the
// revlog package's errors, which adapters map to EIO. ErrUnknownRevision
// and ErrAmbiguous (repo's sentinels) are internal to lookups (both,
// and hidden changesets, become ENOENT);
// ErrUnsupported refuses shared repositories, whose store is outside
// the .hg directory the view is given.
//
// # Concurrency
//
// A View is safe for concurrent use. Nodes are immutable values. The
// snapshot, the node table and the cache each have their own lock, held
// only for map operations; revlog reads go through package revlog, which
// locks per revlog.
package hgview
