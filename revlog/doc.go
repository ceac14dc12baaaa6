// Package revlog reads and appends to Mercurial revlogs: the append-only
// files (.i index, optional .d data) in which Mercurial stores every
// version of the changelog, the manifests and each tracked file.
//
// The specification is Mercurial 6.3's own source: mercurial/revlog.py,
// revlogutils/constants.py and flagutil.py, pure/parsers.py, pure/mpatch.py,
// changelog.py, manifest.py, utils/storageutil.py, and `hg help
// internals.revlogs`. Each format file here opens with a layout comment
// and a "keep in sync" note naming its reference.
//
// # Terminology
//
//   - Revision (rev): the position of an entry in the index, 0-based.
//     NullRev (-1) is the implicit empty revision every root descends from.
//   - Node: a revision's 20-byte identity, SHA-1(min(p1,p2), max(p1,p2),
//     raw text) over its parents' nodes (HashRevision).
//   - Index entry: 64 bytes giving a revision's chunk location and lengths,
//     flags, delta base, link revision, parents and node (index.go). Entry
//     0's first 4 bytes carry the header: version 1 and the inline and
//     generaldelta format flags.
//   - Inline revlog: chunks are interleaved with entries in the .i file
//     (small revlogs); split revlog: chunks live in the .d file.
//   - Chunk: the stored bytes of a revision, compressed or not
//     (compress.go); decompressed it is a full text (a snapshot) or a
//     delta.
//   - Delta: a list of hunks that turn the delta parent's text into this
//     revision's (patch.go, the mpatch format). With generaldelta the
//     delta parent is the entry's base field; without it, the previous
//     revision, back to the chain base.
//   - Delta chain: the revisions whose chunks rebuild a text, from a full
//     snapshot (or, with generaldelta, the empty text) up to the revision.
//   - Raw text: what the chunks rebuild, what `hg debugdata` prints and
//     what the node hashes. This package returns raw text and parses the
//     three kinds of content above it: changesets (changelog.go), flat
//     manifests (manifest.go) and file revisions with their copy metadata
//     header (filelog.go).
//   - Revision flags: censored (a tombstone replaced the text; reading it
//     fails), hascopiesinfo (changesets), and two whose processors hg
//     takes from extensions: ellipsis (narrow) and extstored (lfs, whose
//     raw text is a pointer to a blob). Those processors would exempt the
//     raw text from its node check; this package has neither and, as hg
//     without the extensions, refuses to read or add such a revision
//     (*FlagError). No flag skips a hash check.
//   - Link revision: the changelog revision that introduced an entry.
//
// # What this package owns, and what it must not do
//
// It is the one home of the revlog format and of the three text formats
// stored in it: loading and checking an index (loadIndex), rebuilding
// and checking a revision's text (inner.go: delta chains, chunk bounds,
// decompression, revision flags, lengths and node hashes, for reading
// and writing alike), appending, and parsing changesets
// (ParseChangeset), manifest lines (ParseManifest) and file metadata
// headers (ParseFileMeta). No other package walks a delta chain, checks
// a node or splits such a text itself.
//
// It knows nothing of a repository: store names and their encoding,
// which revlog holds what, phases, tags, transactions are the business
// of packages store, repo and exchange, which hand it file names and a
// Journal. Reading a typed revision out of a repository (a changeset by
// number, the manifest a changeset names, a file's content by node) is
// package repo's (Repo.Changeset, Repo.ReadManifest, repo.FileContent):
// this package has no typed changelog, manifest log or filelog wrapper.
// Such wrappers once stood here unused while repo and hgview read the
// same things their own way; they were deleted rather than adopted,
// because repo opens revlogs with store-encoded data names and every
// caller passes a plain *Revlog, so the parsers above plus repo's three
// readers are one home per concept with the least code.
//
// # Untrusted input
//
// Revlog bytes are untrusted. Open parses the whole index and checks every
// entry before any is used (the "unchecked revision" discipline of
// Mercurial's Rust hg-core): parents must be NullRev or earlier revisions,
// delta bases earlier revisions or the entry itself, lengths non-negative.
// Afterwards revision numbers from the index can index slices and delta
// chains terminate. Chunk positions are checked against the file size
// when read; decompression is bounded by the recorded lengths (a full
// snapshot by its raw length, a delta by a generous multiple, all by
// MaxTextLen), and no buffer is sized by a recorded length beyond what the
// compressed input can produce. Every hunk of a delta is validated against
// the text it applies to. Text lengths are checked against the index and
// texts against their nodes, whatever their flags.
//
// # Errors
//
// Sentinel errors, for errors.Is:
//   - ErrCorrupt: the bytes contradict the format. Revlog-level failures
//     come as a *CorruptError giving the file, revision (or -1) and byte
//     offset (or -1); parse failures of changesets, manifests and file
//     metadata wrap ErrCorrupt directly (they know no file).
//   - ErrUnsupported: a valid revlog this package does not read: version 0,
//     the experimental revlogv2 (0xDEAD) and changelogv2 (0xD34D), unknown
//     header flags, unknown revision flags, unknown compression markers.
//     The message names the file. A revision flagged ellipsis or extstored
//     gives a *FlagError wrapping it, whose message and hint are hg's
//     ("missing processor for flag '0x2000'"); its fields name the file
//     and revision.
//   - ErrNotFound, ErrAmbiguous: lookups.
//   - ErrCensored: reading a censored revision (its hash cannot match).
//   - ErrBadDelta: wrapped inside CorruptError when a delta is malformed.
//
// I/O errors from the fs.FS pass through wrapped with the file name.
//
// # Performance
//
// Open reads the index with one read and decodes it; nothing else happens
// until asked: the .d file is opened on the first chunk read, the node map
// is built on the first Rev lookup. A delta chain's chunks are read with
// as few ReadAt calls as the layout allows, its deltas are folded into one
// hunk list (mpatch_fold's approach) and applied once, so rebuilding a
// text costs its length plus its deltas' sizes times log(chain length),
// never chain length times text length. The last few verified texts are
// cached, so reading revisions in order applies about one delta each.
// Reading and writing rebuild texts with the same code (inner.go, as
// hg-core's InnerRevlog): a Revlog over its files, a Writer over its
// files and the bytes it has not written yet, each with its own cache
// (a Writer remembers the texts it adds, so the next delta's base is
// usually a cache hit). Both load an index with loadIndex, so a corrupt
// revlog is refused by both in the same words; a Writer checks at open
// what a Revlog checks on first read (an inline chunk's position), as it
// appends after them.
// zlib readers (klauspost/compress's, faster than the standard
// library's) are pooled and one zstd decoder is shared by all revlogs
// (the package's only package-level state: caches with no observable
// effect).
//
// # Concurrency
//
// A *Revlog is safe for concurrent use by multiple goroutines. The index
// is immutable after Open; a mutex guards the data file handle, the node
// map and the text cache; chunk reads (ReadAt) and decompression run
// outside the lock. The data file's ReadAt must be safe for concurrent
// use, as *os.File's is. Texts returned by Revision and RawChunk may be
// shared with the cache or the index and must not be modified.
//
// Close releases the data file; calls after Close fail with fs.ErrClosed
// (index accessors keep working: the index is in memory).
//
// # Writing
//
// A Writer (write.go) appends revisions, given as full texts or as
// deltas from a changegroup, choosing the stored delta as hg does
// (deltas.go), computing deltas when needed (diff.go) and compressing
// chunks (compress_write.go). The texts it needs (delta bases, revisions
// to diff against, pending or on disk) are rebuilt and checked as a
// Revlog rebuilds them. Arguments to AddDelta are untrusted and
// checked like revlog bytes: unknown bases and parents give
// ErrUnknownBase, the ellipsis and extstored flags a *FlagError, a text
// that does not hash to its node a *CorruptError; a rejected revision
// leaves nothing behind. Writes are buffered: bytes
// reach the files when the buffer fills, at Flush or at Close, data (.d)
// before index (.i), without fsync (durability is the transaction's: the
// Journal hooks are called where hg calls tr.add and tr.replace). A
// Writer is for one goroutine.
//
// nodemap.go writes persistent nodemaps (requirement persistent-nodemap)
// as hg without Rust does, the whole trie each time (NodemapData), with
// their docket (NodemapDocket); package exchange puts them on disk at the
// end of a transaction. ParseNodemapDocket and NodemapLookup read them
// back, for tests and checks: they are untrusted like any revlog bytes.
//
// # Not supported
//
// Revlog version 0,
// revlogv2 and changelogv2 (with their docket files and sidedata) are not
// read, and persistent nodemaps are written (nodemap.go) but not used for
// lookups (they are an optional cache; this package builds its own node
// map). Neither are lfs revisions (extstored:
// in a repository with the lfs requirement hg loads lfs by itself and
// reads their blobs from the lfs store) nor narrow's ellipsis
// revisions: both are refused as above.
package revlog
