// Package sysio is hgfs's one layer of plain file I/O: the system calls
// the store, the revlog writer, stream clones and the views make on
// files and directories, with the retries and loops each needs, in one
// place.
//
// It owns:
//
//   - opening files and directories by path or relative to an open
//     directory descriptor (Open, Openat, OpenDir, OpenDirAt, and on
//     Linux OpenBeneath), and fstat/fstatat (Fstat, Fstatat);
//   - Dirs, the directory descriptors below a root that files are opened
//     or stat'ed relative to, each directory opened once;
//   - the EINTR retry, one helper (Retry) that every call here goes
//     through;
//   - the read and write loops: PreadFull, PwriteFull, WriteFull;
//   - whole-file reads with a size bound (ReadFile): a file larger than
//     the bound is refused with an error matching syscall.EFBIG, never
//     allocated;
//   - File, an open file as a plain descriptor (on unix) or an *os.File
//     (elsewhere), and DirFS, os.DirFS of a directory whose regular files
//     are plain descriptors and whose ReadFile opens, sizes, reads and
//     closes with four system calls;
//   - the platform split: the descriptor-level calls exist on unix only;
//     File, OpenFile, ReadFile and DirFS exist everywhere, with os's
//     calls where there is no unix.
//
// Why plain descriptors: os.Open and os.OpenFile add fcntl calls and a
// failed epoll registration per file, and os.ReadFile a second fstat and
// a read for the EOF; a store of 20,000 files opened once each would pay
// ~100,000 system calls for nothing.
//
// What it must not do: know anything of Mercurial (no store layout, no
// revlog names, no hg error messages: callers wrap the errors returned
// here with their own names); cache anything beyond the directory
// descriptors a caller's Dirs holds; add a system call or an allocation
// per file or per read beyond the calls named above. io_uring batches
// stay in internal/uring, whose callers fall back to this package.
//
// Errors from the descriptor-level functions are the bare errno (a
// unix.Errno), for the caller to wrap with the file's name; File, DirFS
// and ReadFile return *fs.PathError values as os does.
package sysio
