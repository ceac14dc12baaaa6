// Package streamclone reads and writes Mercurial's stream clone formats:
// a raw copy of a repository's store files, which is how large
// repositories are cloned fast. It applies a stream into a Sink (a plain
// directory, hgfs's cache, a test recorder) and generates streams from a
// local store. It opens no sockets: wireproto hands it readers and writers.
//
// # Terminology
//
//   - Store name: a store file's path in Mercurial's internal, unencoded
//     form ("data/Foo.txt.i", "00changelog.i", "phaseroots"). Streams name
//     files this way (v1 additionally applies encodedir); the destination
//     layout's encoding (fncache + dotencode for any clone made here)
//     turns it into the on-disk name.
//   - Sink name: a slash-separated path relative to the repository root,
//     always under ".hg/": ".hg/store/data/_foo.txt.i", ".hg/cache/...".
//   - v1: the body of the stream_out wire command (v1.go). packed1: the
//     same entries in a "HGS1" bundle file with a header carrying the
//     requirements (packed1.go). v2: the payload of the bundle2 part
//     "stream2", which also carries phaseroots, obsstore and .hg/cache
//     files (v2.go), in the "HG20" container package bundle2 reads and
//     writes (with the bookmarks and listkeys parts that come with it).
//   - Streamed requirements: the source's requirements that fix the store
//     format (STREAM_FIXED_REQUIREMENTS); the clone's requirements are the
//     local defaults with those replaced (NewStreamCloneRequirements).
//
// # Formats
//
// Each format file opens with its byte layout. The parts accompanying
// stream2 in a getbundle reply, and what happens to each, are listed in
// bundle.go; in short, hg 6.3's `hg clone --stream` receives stream2, a
// bookmarks part and a listkeys(bookmarks) part; `hg bundle -t
// 'none-v2;stream=v2'` writes stream2 alone. Phases travel as the
// phaseroots store file (only from non-publishing sources: a publishing
// source's clone sees everything public), never as parts.
//
// Besides the streamed files an apply writes what hg's clone writes:
// .hg/store/fncache (the data/ and meta/ names in the stream's order; hg
// writes a set),
// .hg/bookmarks (or .hg/store/bookmarks with bookmarksinstore), the dummy
// .hg/00changelog.i that locks out pre-requirements clients, and the
// requirements (.hg/requires, .hg/store/requires with share-safe), last.
// Persistent-nodemap files (00changelog.n, .nd) are dropped unless the
// clone has that requirement, as hg's post_stream_cleanup does. A v1
// stream carries no phaseroots: the caller fetches phases (listkeys) if
// it wants drafts to stay drafts, as hg does. .hg/hgrc ([paths] default)
// and the working directory are the caller's business.
//
// Generation (generate.go) takes store.Walk's snapshot of names and sizes
// first and sends exactly that many bytes per file. Locking is the
// caller's: hold the repository lock while the snapshot is taken if
// writers may be active (revlogs are append-only, so a file appended to
// meanwhile is cut at its recorded size and stays consistent, as in hg).
// GenerateV2 and WritePacked1 produce byte-identical output to hg 6.3's
// `hg bundle -a -t 'none-v2;stream=v2'` and `hg debugcreatestreamclonebundle`,
// and GenerateV1 to hg serve's stream_out (tested).
//
// # Errors
//
// Streams are untrusted. Every failure wraps a sentinel (errors.go):
// ErrCorrupt for malformed data (truncation, sizes or counts that lie,
// bad framing), with ErrUnsafeName for names that are absolute, contain
// "..", NUL or newlines, or are not files a stream may carry (only
// revlogs, phaseroots and obsstore in the store, single-component names
// in the cache: .hg/hgrc or .hg/store/requires are unreachable);
// ErrUnsupportedRequirement (hg's "unable to apply stream clone:
// unsupported format: ..."), checked before anything is written;
// ErrUnsupportedPart for unknown mandatory bundle2 parts or parameters
// ("missing support for ..."); ErrRemote for error:* parts
// (*bundle2.RemoteError) and unknown v1 status codes (*RemoteError);
// ErrForbidden and ErrRemoteLock for v1 statuses 1 and 2. Errors of the
// bundle2 framing and of the bookmarks and listkeys parts keep package
// bundle2's words ("malformed bundle2 data: ...") and match these
// sentinels too. No allocation is sized by an unchecked field: names
// are bounded (64 KiB), headers bounded (1 MiB), file data is streamed.
// An apply either finishes the sink (success) or aborts it (any error,
// including context cancellation); it never calls Finish after an error.
//
// # Concurrency
//
// Generation reads ahead on its own goroutines (generate_read.go); they
// are stopped and waited for before Generate*/Write return.
//
// An apply runs on the caller's goroutine and calls the Sink
// sequentially: Create (CreateStore for store files, with their logical
// names, when the sink is a StoreCreator: one journaling writes into an
// existing repository), Write..., Close, then the next file. DirSink hands
// small files whole to a pool of writer goroutines (DirOptions.Writers,
// at most 4 MiB held) and, where closing is slow, closes large ones on a
// pool of closing goroutines (mirroring hg's [worker] backgroundclose
// settings); both are fed in batches through bounded queues, and a full
// queue or a spent budget blocks the applier (back-pressure, bounded
// memory and open descriptors). Finish and Abort wait for both pools.
//
// # Durability
//
// DirSink stages everything under dest/.hg.partial and renames it to
// dest/.hg in Finish, after all files are closed: until then no
// repository is visible at dest, and hg refuses the directory. A failed
// or cancelled apply calls Abort, which removes the staging directory
// (and dest if the sink created it; an existing empty dest stays empty).
// After a crash .hg.partial may remain; the next clone into dest refuses
// it as non-empty. With DirOptions.Durable, files are fsynced on the
// writing or closing goroutines and directories before the rename, and dest after
// it; by default nothing is synced, like hg's own stream clone. For sinks
// without staging the applier writes the dummy .hg/00changelog.i before
// any stream file and .hg/requires last, so a half-written clone is one
// hg refuses ("unknown version (65535) in revlog 00changelog").
//
// Memory stays flat in the size of the store: applying copies file data
// through one 256 KiB buffer, and into a DirSink at most 4 MiB of whole
// small files waits for the writers; generating reads small files (≤64 KiB) ahead
// in batches of at most 256 KiB on 2 goroutines, with at most 4 batches
// waiting (under 2 MiB per stream), and large files through one 256 KiB
// buffer or the destination's ReadFrom (sendfile for an HTTP response).
// What grows with the number of files is the set of store names kept for
// the fncache and for duplicate detection (nameSet: the names
// front-coded, and 8 to 16 bytes each for the set).
package streamclone
