// Package uring is the raw io_uring plumbing shared by the store walk
// (statx batches, store/walk_uring_linux.go), stream clone serving and
// the views' prefetcher (FileReader: openat, then read hard-linked to
// close; streamclone/generate_uring_linux.go, hgview/batch_linux.go):
// setting up a ring, mapping its queues, pushing submissions, reaping
// completions, and giving up safely when the kernel refuses.
//
// # Why
//
// Its callers make many small system calls on behalf of one request
// (20,000 stats, or 20,000 open/read/close triples, for a 20,000-file
// repository), and on a virtual machine each call's entry and exit cost
// more than its work. A ring submits a batch of them in one
// io_uring_enter. No liburing, no cgo: the few structures used are
// mirrored here from the kernel's UAPI (uring_linux.go, the one place
// for those constants).
//
// # Terminology
//
//   - Rings: an io_uring instance's submission and completion queues
//     mapped into our memory (Setup), of either submission size; Ring and
//     internal/fuseuring (FUSE's 128-byte commands) are built on it.
//   - Ring: one io_uring instance (New) on Rings, with the buffers it
//     owns, for batches of 64-byte submissions.
//   - SQE: a submission queue entry, one request (Openat, Read, Close,
//     Statx build them; Push queues them).
//   - CQE: a completion queue entry, one result: the request's UserData
//     and what the system call would have returned (-errno on failure).
//   - Run: one batch: io_uring_enter until every pushed request has
//     completed, each completion handed to a callback.
//   - Abandon: what a failed Run does to the ring (see Memory).
//
// # The contract: system calls are the reference
//
// The ring is only a faster way to make the same calls. Every caller
// keeps the plain system call path and uses it whenever the ring is
// missing (an old kernel, a sandbox or container refusing io_uring_setup,
// io_uring_disabled, or the program switched io_uring off with
// SetEnabled, as hgfs does for HGFS_TUNE=-uring), fails (a Run error:
// drop the ring, carry on with system calls), or gives a result the caller did not expect (a short
// read, a failed open, a statx without the asked-for field): that item is
// redone with system calls, whose results and errors are the ones
// reported. So nothing the ring does is ever visible in a result, only
// in time, and the tests of each caller compare the two paths.
//
// # Memory
//
// The kernel reads and writes our memory by address, behind the Go
// runtime's back. Two rules follow:
//
//   - Memory the kernel writes (read buffers, struct statx) must not be
//     Go heap memory: Buffer and StatxBuffer map it outside the heap. A
//     Go buffer could be freed and reused, or sit on a goroutine stack
//     that moves, while a request still targets it.
//   - Memory the kernel only reads (the NUL-terminated paths of Openat
//     and Statx) may be Go heap memory, but must stay alive until Run
//     returns (runtime.KeepAlive after Run), and must not be on the
//     stack: keep it in a heap-allocated slice that outlives the batch.
//
// After io_uring_enter fails, requests already submitted may still be in
// flight, and the kernel would go on writing into their buffers. So a
// failed Run abandons the ring: it closes the descriptor and unmaps the
// queues, but leaves the buffers mapped, for good (a few hundred KiB,
// once per failing ring, which in practice is never). Close after that
// keeps them mapped too; only a ring whose every Run succeeded unmaps
// its buffers.
//
// # Errors
//
// New says why there is no ring; its error wraps ErrUnavailable when
// the kernel or sandbox has no usable io_uring (and io_uring_setup's
// errno, if that failed: errors.Is(err, unix.ENOSYS), unix.EPERM...).
// Other New errors (mapping the queues) are unexpected but leave the
// caller in the same place: no ring, system calls. Run returns
// io_uring_enter's errno, wrapped. Requests' own failures are not errors of this package: they are
// the CQE's negative Res, for the caller to map or redo. Misuse (more
// requests than the ring was sized for, a path without its NUL, Push on
// a closed ring) panics: it is a bug in the caller, not a condition.
//
// # Concurrency
//
// A Ring is not safe for concurrent use: give each goroutine its own
// (streamclone has one per reader goroutine). Nothing is global.
//
// # Platforms
//
// Linux only (uring_linux.go). Callers select their ring code by file
// name (_linux.go) and keep a stub elsewhere, so this package needs no
// stand-in on other systems: there it holds this documentation only.
package uring
