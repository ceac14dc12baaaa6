// Package bundle2 reads and writes Mercurial's bundle2 container ("HG20")
// and the small payloads that travel in it and beside it. It is the one
// home of:
//
//   - the stream header: magic, stream parameters, their Compression
//     (Reader, Writer; Decompress also serves HG10 bundle bodies);
//   - part headers (type, id, mandatory and advisory parameters) and the
//     chunked part payload, with out-of-band interruptions (Part,
//     PartWriter); error:* parts as *RemoteError, and the parameter check
//     of bundle2._gethandler (Part.UnknownParams);
//   - bundle specifications, hg's "none-v2;stream=v2" names of bundle
//     types (ParseSpec: bundlecaches.parsebundlespec, strict form);
//   - URL quoting of stream parameters and capabilities (Quote, Unquote:
//     Python's urllib.parse.quote with safe "/", and its lenient unquote);
//   - the binary "bookmarks" part (EncodeBookmarks, DecodeBookmarks:
//     bookmarks.binaryencode and binarydecode);
//   - pushkey data, the payload of "listkeys" parts and of the listkeys
//     wire command (EncodeKeys, DecodeKeys: pushkey.encodekeys and
//     decodekeys; DecodeBookmarkKeys for the bookmarks namespace).
//
// Each format has one decoder and one encoder, with one strictness:
// Mercurial 6.3's (mercurial/bundle2.py, bookmarks.py, pushkey.py are the
// specification). bundle2.go, bookmarks.go and pushkey.go open with
// their byte layouts; writer.go writes bundle2.go's.
//
// What it must not do: no I/O policy (it reads the io.Reader and writes
// the io.Writer it is given: no files, sockets, timeouts or retries), no
// repository access (no store, no changelog: whether a bookmark name is
// one a repository may hold, or a node one it has, is the caller's
// question), and no part semantics beyond framing: applying a
// changegroup, a stream2 part or phase heads belongs to the packages that
// know them (changegroup, streamclone, exchange).
//
// # Errors
//
// Input is untrusted. Decoders return errors, never panic, and bound what
// they allocate before the bytes arrive: stream parameter blocks and part
// headers to 1 MiB, bookmarks and listkeys payloads to MaxKeysPayload,
// zstd windows to MaxZstdWindow; payloads are streamed. Every error wraps
// a sentinel (errors.go): ErrMalformed ("malformed bundle2 data") for
// framing that contradicts the format and bookmarks parts that do not
// parse, ErrMalformedKeys ("malformed listkeys data") for pushkey data,
// ErrUnsupported for unknown mandatory stream parameters, compressions and
// interrupting parts ("missing support for ..."), ErrRemote for error:*
// parts (*RemoteError). Errors of the underlying reader pass through
// unchanged, so that callers can tell I/O failures from bad data.
//
// # Concurrency
//
// A Reader, its Parts and a Writer are used by one goroutine at a time;
// the functions are safe for concurrent use.
package bundle2
