// Package worktree checks out a revision into a working directory, as
// `hg update` does for a clean working copy: the files of the target
// manifest written with hg's flags (`l` a symlink whose target is the
// file's content, `x` the exec bits hg's util.setflags gives), the files
// of the old manifest that the new one lacks removed (and directories
// left empty by that), and the dirstate (package dirstate) recording the
// new parent and each file's mode, size and mtime so that `hg status` is
// clean without reading a file back.
//
// On Windows, as hg there, symlinks are written as files holding their
// target and exec bits are neither set nor compared.
//
// # Speed
//
// Only what differs between the two manifests is written or removed.
// Each file's filelog is opened and its revision reconstructed once, by
// one of Options.Writers goroutines (internal/batchpool, the pool the
// stream clone's directory sink uses) which also write it; directories
// are created once each, beforehand, by the calling goroutine. On Unix
// a writer reads the filelog's index and creates, writes and fstats the
// file with plain system calls (file_unix.go): an os.File's fcntl and
// epoll_ctl calls were a quarter of a 20,000-file checkout's. Removed
// files are unlinked by the writers too, and their directories tried
// once each, deepest first, after the files (hg tries every parent
// again after each file). A writer reads a filelog's index into a
// recycled buffer (buffers.go; SetPooling turns that off) and, as
// rebuilding a text in package revlog does with its delta chain's
// buffers, puts it back once the file is written: the content may
// alias it until then. Memory is bounded: the manifests, one entry per
// file to write, and at most one file's content and one recycled
// buffer of at most 1 MiB per writer.
//
// The dirty check is hg status's, on the writers: each file lstat'ed
// through a descriptor of its directory (one path component per file,
// as hg's listdir-and-fstatat walk), and where size and mtime cannot
// vouch, the content compared by hg's rule (repo.SameFileData: the
// file hashed with the revision's parents, the revision reconstructed
// only when that fails). A file found clean that way gets its mtime
// recorded when it is reliable (hg status's fixup), so a working copy
// written faster than the clock's second (every file's mtime
// ambiguous) is read back once, by the next update, not by every one:
// on the 20,000-file store that was a move between distant revisions
// reading and reconstructing all 20,000 files to write 61. With
// dirstate-v2, the written files' mtimes are filtered as hg 7 does
// (NowAfterTick, dirstate.Reliable), so most need no reading back at
// all.
//
// # What is refused
//
// Subrepositories (.hgsub, .hgsubstate) and largefiles (.hglf/) need
// hg's extensions and logic: a manifest with them is refused by name
// before anything is touched. A working directory with a merge in
// progress, or with uncommitted changes (detected as hg's status does:
// size, mode and mtime against the dirstate, contents compared when
// those cannot tell), is refused unless Clean is set: hgfs does not
// merge. So is an update over untracked files that differ from the ones
// it writes (merge._checkunknownfiles), unless Clean.
//
// # Interruption
//
// Update follows merge.update: it holds the wlock, writes .hg/updatestate
// (the target's hex node) before touching any file and removes it when
// done, and writes the dirstate last. Before touching the files of an
// existing working copy it rewrites the dirstate with every file it is
// about to change marked "possibly dirty" (no mtime), so an interrupted
// update leaves a dirstate that claims no file clean that is not: `hg
// status` compares those, and `hg update -C` (or hgfs's) repairs the
// working copy. A checkout into a new clone writes no dirstate until the
// end: an interrupted one has the null parent, and `hg update` takes the
// files already written, which equal the ones it would write.
package worktree
