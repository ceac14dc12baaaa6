// Package dirstate reads and writes Mercurial's dirstate: the working
// directory's parents and, for every file it tracks, the state and the
// mode, size and modification time it had when last known clean, so that
// `hg status` can tell a clean file by its lstat alone.
//
// Two formats, chosen by the repository's requirements:
//
//   - v1 (.hg/dirstate): the two parents (40 bytes), then for each file
//     ">cllll" (state, mode, size, mtime, name length) and the name, with
//     "\0copy-source" appended for copies (mercurial/pure/parsers.py
//     pack_dirstate). An mtime of -1 means "unknown, compare contents".
//   - v2 (requirement dirstate-v2): .hg/dirstate is a docket (marker,
//     parents padded to 32 bytes, 44 bytes of tree metadata, the data
//     size, the data file's id) naming .hg/dirstate.<id>, a tree of 44-byte
//     nodes, one per file and per directory, siblings sorted and contiguous
//     (mercurial/dirstateutils/v2.py, docket.py, `hg help
//     internals.dirstate-v2`). Mtimes keep their nanoseconds.
//
// Entries are hg's DirstateItem: tracked in the working directory, in
// the first parent, merge information from the second; mode and size if
// known; mtime if known. The v1 state letter and values are derived as
// DirstateItem._v1_* derive them.
//
// # Mtimes too close to the write
//
// A file whose mtime is in the same second as "now" (the mtime of a file
// created in .hg after the working files were written: timestamp.get_fs_now)
// could still be changed within that second without its mtime changing,
// so its mtime must not be recorded: the caller passes such entries
// without HasMtime, as merge.update does (`m[2][0] >= now_sec`), and
// status compares their contents. Ambiguous is that rule, in one place.
//
// # Untrusted input
//
// Readers take files another program wrote: every offset and length is
// checked against the data, a v2 tree is walked with an explicit stack
// and at most one visit per node the data can hold (a cycle of child
// pointers ends there), and the files read are bounded (MaxSize).
//
// Writers replace .hg/dirstate atomically (a temporary file renamed over
// it); v2 writes a new data file first, then the docket, then removes the
// data file the previous docket named. The caller holds the wlock
// (store.WLock).
package dirstate
