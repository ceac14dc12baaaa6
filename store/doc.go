// Package store knows a Mercurial repository's layout: the requirements
// files, where revlogs live and how their names are encoded on disk, the
// fncache, and which files a stream clone carries. It never parses revlog
// contents (package revlog does).
//
// The specification is Mercurial 6.3's mercurial/store.py,
// requirements.py, localrepo.py (makestore, _readrequires,
// ensurerequirementsrecognized), streamclone.py and cacheutil.py; the
// tests compare against what real hg writes.
//
// # Terminology
//
//   - Store path (or "unencoded name"): how Mercurial names a store file
//     internally and on a v2 stream: "data/<tracked path>.i",
//     "data/<tracked path>.d", "meta/<dir>/00manifest.i", "00changelog.i",
//     "phaseroots".
//   - On-disk path: the store path after the layout's encoding, relative
//     to the store directory.
//   - Layout: one of four, selected by requirements (see Layout):
//     basic (no "store": revlogs under .hg, EncodeDir names), encoded
//     ("store": .hg/store, reversible EncodeFilename), fncache ("fncache":
//     HybridEncode without dotencode) and dotencode (what hg creates by
//     default: HybridEncode with dotencode).
//   - fncache: .hg/store/fncache, the list of data/ and meta/ store paths
//     of a fncache store; needed because long names are hashed ("dh/...")
//     and cannot be decoded.
//
// # API at a glance
//
//   - Requirements: ReadRequirements, ParseRequirements, Check (hg's
//     rules), CheckReadable (hgfs's), Split (which file each goes to),
//     Streamed / NewStreamCloneRequirements (what a stream clone keeps),
//     DefaultRequirements (hg init's).
//   - Layout: LayoutFor(requirements), Encode, StoreDir, RepoPath.
//   - Store: Open (a path), OpenFS (any fs.FS of a .hg directory: a
//     cache mount's view; shares refused with ErrShared), FS, CacheFS, Encode, FilelogIndex, Fncache, Walk (revlogs, in
//     stream order), SnapshotFiles (phaseroots, obsstore), CacheFiles
//     (.hg/cache files a v2 stream carries).
//   - Bookmarks: the bookmarks file (bookmarks.go): BookmarksFile (where
//     the requirements put it), Store.ReadBookmarks, ParseBookmarks
//     (bmstore's tolerance), Bookmarks.Format (bmstore._write),
//     ValidBookmarkName, Store.MalformedBookmarkWarning.
//   - Obsolescence markers (obsstore.go): ParseObsstore (formats 0 and
//     1, an obsstore file or an obsmarkers part), EncodeObsMarkers,
//     ObsMarker.Key (hg's marker equality).
//   - The repository lock: Lock (mercurial/lock.py's symlink lock, stale
//     locks broken, waits bounded; lock.go), LockPrefix.
//   - Pure functions: EncodeDir, DecodeDir, EncodeFilename,
//     DecodeFilename, HybridEncode, ParseFncache, FormatFncache.
//   - Untrusted names: ValidateName, ValidateStreamName,
//     ValidateCacheName.
//
// # Stream order
//
// Walk returns what streamclone.py generatev1 sends and what _v2_walk
// lists first: store.py walk() minus empty files. A v2 stream then adds
// SnapshotFiles(publishing, obsmarkers) and CacheFiles, in that order;
// File.Volatile marks the entries v2 copies whole under the lock. The
// tests compare the three lists, names, sizes and order, with the packed1
// bundle of `hg debugcreatestreamclonebundle` and the stream2 part of
// `hg bundle --type none-v2;stream=v2`, in all four layouts.
//
// # Encodings
//
// encode.go states the encodings; they match store.py byte for byte
// (including its C twin for dotencode), which the tests check against
// the files hg creates for a table of awkward names (uppercase, '_', '~',
// Windows-reserved names, trailing dots and spaces, directories named
// "foo.i" or "a.hg", non-ASCII, paths long enough to be hashed) in all
// four layouts. Hashed names are not reversible, so a fncache store is
// walked through its fncache; the other layouts are walked on disk and
// decoded.
//
// Mercurial's own quirks are kept on purpose: the encoded layout decodes
// EncodeDir twice when walking (so a directory literally named "x.hg.hg"
// is streamed under the wrong name, as hg does), and top-level files are
// listed in reverse (type, name) order (00manifest before 00changelog, and
// .d before .i).
//
// # Requirements
//
// ReadRequirements mirrors hg: .hg/requires (missing means none), plus
// the store's requires with share-safe, through .hg/sharedpath for a
// share. Names hg 6.3 does not know give *UnsupportedError with hg's own
// message ("repository requires features unknown to this Mercurial: a b")
// and hint; a malformed name gives ErrCorruptRequires. Open also refuses
// the formats hg knows but hgfs does not read (treemanifest,
// exp-revlogv2.2, exp-changelog-v2) with "repository requires features
// unsupported by hgfs: treemanifest" and a hint to use hg; callers print
// both as "abort: ..." plus "(hint: ...)".
//
// # Untrusted input
//
// Names arriving on a stream are untrusted: ValidateName rejects
// anything that is not a clean relative slash path (absolute, "..", ".",
// empty components, NUL, newline, carriage return, backslash, Windows
// drive); ValidateStreamName further restricts store names to what hg's
// generators send (revlog files under data/, meta/ or at the top, plus
// phaseroots and obsstore), so that a basic-layout repository, whose
// store is .hg itself, cannot be given an hgrc; ValidateCacheName allows
// single-component cache names. The requires and fncache files of a local
// repository are parsed without trusting them either: malformed content
// is an error, never a panic. The encoding functions accept any bytes.
//
// # Errors
//
// Sentinels in errors.go (ErrNotRepository, ErrUnsupportedRequirement,
// ErrCorruptRequires, ErrCorruptFncache, ErrUndecodable, ErrShared,
// ErrLocked, ErrBadStoreName)
// are wrapped with the path or name involved; use errors.Is, and
// errors.As for *UnsupportedError.
//
// # Concurrency
//
// Everything here is a pure function or reads the directory when called;
// a *Store is immutable after Open and safe for concurrent use. Walk
// takes no lock: a stream server that needs a consistent snapshot must
// hold the repository lock (Lock: .hg/store/lock) around Walk and the
// reads, as hg does; files that vanish between listing and stat are
// skipped.
package store
