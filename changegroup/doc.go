// Package changegroup decodes and encodes Mercurial changegroups (versions
// 01, 02 and 03) and reads the bundle files that carry them (HG10UN,
// HG10GZ, HG10BZ, HG20 with any compression). Applying a changegroup to a
// repository is package exchange's business; this package only frames and
// checks bytes. The specification is Mercurial's own source
// (mercurial/changegroup.py, exchange.py readbundle, bundle2.py, phases.py,
// bookmarks.py) and `hg help internals.changegroups`,
// `internals.bundle2`, `internals.bundles`.
//
// # Terminology
//
//   - Changegroup: the revisions a repository lacks, as three segments:
//     the changelog group, the manifest group, then one group per file
//     (cg3 adds a list of tree manifest groups, which is refused here).
//   - Group: the revisions of one revlog, in an order where each delta's
//     base comes earlier (or is already in the receiving repository).
//   - Delta: one revision: node, parents, the changeset it belongs to
//     (linknode), the delta base, revlog flags (cg3) and mpatch hunks. cg1
//     has no base field: the base is the previous node of the group, or p1
//     for the first; Reader resolves it so callers never see the
//     difference.
//   - Chunk: the framing unit, a big-endian int32 length counting itself,
//     then data; a zero length ends a group or a list.
//   - Bundle: a file holding a changegroup: HG10 (cg1, optionally zlib or
//     bzip2 compressed) or HG20 (bundle2 parts; the changegroup part names
//     its version, and phase-heads, bookmarks, listkeys parts may follow).
//
// Files: reader.go (Reader, the chunk framing), writer.go (Writer),
// bundle.go (OpenBundle and bundle2 part dispatch), bundlewriter.go
// (NewBundleWriter), parts.go (the phase-heads payload; package bundle2
// has the bundle2 framing and the bookmarks and listkeys payloads),
// generate.go (a changegroup of a whole local repository: Generate; of
// what a receiver having some changesets lacks of others, as a server
// answers a pull: GenerateOutgoing; of a set of changesets into an empty
// repository: GenerateSet). Generation streams: it holds node lists,
// at most two revision texts and a window of stored chunks read ahead
// (256 KiB), never the changegroup. Each stored chunk it sends is
// decompressed once, the changelog's too: the changesets are parsed
// from the texts rebuilt while their group is sent.
//
// # Errors
//
// ErrCorrupt: the input contradicts the format (truncation anywhere, a
// chunk length that lies, an unsafe file name, a compressed stream that
// does not decompress, data after the changegroup where hg forbids it).
// ErrUnsupported: valid input this package does not handle (cg4, tree
// manifests, unknown bundle versions or compressions, unknown mandatory
// bundle2 parts or parameters: hg's "missing support for ..."). Errors
// of package bundle2 (framing, bookmarks and listkeys payloads: "malformed
// bundle2 data: ...", "malformed listkeys data: ...") and of
// decompressors are mapped to these sentinels while keeping their message; errors of the underlying
// io.Reader pass through unchanged, so a network failure is not reported
// as a corrupt bundle. ErrStreamBundle marks stream clone bundles (HGS1,
// stream2), which a changegroup reader cannot apply. Error parts sent by
// a server come back as *bundle2.RemoteError. Decoders never panic
// and check each delta's framing but not its hunks or its hash: the
// revlog writer does, when it applies the delta.
//
// Memory: a chunk length is untrusted until its bytes arrive. Delta
// buffers grow at most 1 MiB ahead of the data actually read, file names
// are bounded (64 KiB), bookmarks and listkeys payloads too (256 MiB,
// bundle2.MaxKeysPayload), zstd windows to 64 MiB. A Reader reuses one buffer for all deltas, so Delta.Data is
// valid only until the next NextDelta call.
//
// # Concurrency
//
// Readers, Writers and Bundles are used by one goroutine at a time. A
// Bundle's parts share its stream: a part's readers are valid until the
// next NextPart call, which skips whatever the caller left unread.
package changegroup
