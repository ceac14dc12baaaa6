// Package fuseuring serves a FUSE connection's requests over io_uring
// (the kernel's FUSE_OVER_IO_URING, Linux 6.14+, when the fuse module's
// enable_uring parameter is set) instead of read(2) and writev(2) on
// /dev/fuse.
//
// The kernel keeps one queue per possible CPU and hands a request to the
// queue of the CPU its caller runs on. Each queue here is one io_uring
// owned by one OS thread pinned to that CPU, with a few entries (a
// header buffer and a payload buffer each) registered with the kernel.
// A request arrives as a completion for an entry; its reply is written
// into the same buffers and committed with the command that also fetches
// the entry's next request: one io_uring_enter per request where
// /dev/fuse takes a read and a writev, and the thread that answers runs
// where the caller waits.
//
// A queue's thread answers inline the requests that never wait for the
// kernel (LOOKUP, GETATTR, CREATE, WRITE, READ...); the others run on
// goroutines and hand their answer back through an eventfd the ring
// reads, since a notification to the kernel may wait for a request
// queued behind it (inline).
//
// Requests are decoded and answered by go-fuse's ProtocolServer on the
// same RawFileSystem the go-fuse Server serves; that Server still mounts,
// negotiates INIT (with CAP_OVER_IO_URING) and carries what the kernel
// keeps on /dev/fuse: FORGET, INTERRUPT and the notifications.
//
// Linux only; elsewhere the package is empty.
package fuseuring
