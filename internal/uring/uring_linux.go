package uring

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Linux UAPI this package speaks, in one place. Keep in sync with
// include/uapi/linux/io_uring.h.
const (
	// Opcodes (enum io_uring_op).
	OpOpenat = 18 // IORING_OP_OPENAT
	OpClose  = 19 // IORING_OP_CLOSE
	OpStatx  = 21 // IORING_OP_STATX
	OpRead   = 22 // IORING_OP_READ

	// SQEHardlink (IOSQE_IO_HARDLINK) links a request to the next one,
	// which then runs even if this one fails: a read hard-linked to its
	// file's close still closes the file.
	SQEHardlink = 1 << 3

	enterGetevents = 1          // IORING_ENTER_GETEVENTS
	offSQEs        = 0x10000000 // IORING_OFF_SQES
	featSingleMmap = 1 << 0     // IORING_FEAT_SINGLE_MMAP
)

// ErrUnavailable is wrapped by New's error when the kernel gives no
// usable ring: io_uring_setup failed (ENOSYS on an old kernel, EPERM in
// a sandbox or with io_uring_disabled; the errno is wrapped too) or the
// kernel lacks a feature used. The caller then makes the system calls.
var ErrUnavailable = errors.New("io_uring not available")

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// SQE is struct io_uring_sqe (64 bytes): one request. Build it with
// Openat, Read, Close or Statx, which know which field means what for
// each opcode.
type SQE struct {
	Opcode      uint8
	Flags       uint8 // SQEHardlink...
	Ioprio      uint16
	Fd          int32
	Off         uint64 // file offset; statx: the struct statx to fill
	Addr        uint64 // buffer or path
	Len         uint32 // buffer length; statx: the mask
	OpFlags     uint32 // open flags, rw flags, AT_ flags...
	UserData    uint64 // handed back in the completion
	BufIndex    uint16
	Personality uint16
	FileIndex   uint32
	Addr3       uint64
	pad         uint64
}

// CQE is struct io_uring_cqe: one completion.
type CQE struct {
	UserData uint64 // the request's SQE.UserData
	Res      int32  // the system call's result, or -errno
	Flags    uint32
}

// Compile-time checks of the layouts the kernel expects.
var (
	_ [64 - unsafe.Sizeof(SQE{})]struct{}
	_ [unsafe.Sizeof(SQE{}) - 64]struct{}
	_ [16 - unsafe.Sizeof(CQE{})]struct{}
	_ [unsafe.Sizeof(CQE{}) - 16]struct{}
)

// Ring is one io_uring instance with the buffers the kernel writes into
// (Buffer, StatxBuffer). Not safe for concurrent use.
type Ring struct {
	entries int    // requests in flight at most (New's argument)
	q       *Rings // its FD is -1 once closed

	bufs   [][]byte // anonymous mappings handed out by Buffer
	pend   int      // pushed, not yet reaped
	broken error    // the io_uring_enter failure that abandoned the ring
}

// New sets up a ring for up to entries requests between two Runs. The
// error says why there is none; it wraps ErrUnavailable when the kernel
// or sandbox has no usable io_uring.
func New(entries int) (*Ring, error) {
	if entries <= 0 || entries > 1<<15 {
		return nil, fmt.Errorf("uring: %d entries (want 1 to 32768)", entries)
	}
	if !Enabled() {
		return nil, fmt.Errorf("uring: %w: switched off (SetEnabled)", ErrUnavailable)
	}
	q, err := Setup(uint32(entries), 0)
	if err != nil {
		return nil, fmt.Errorf("uring: %w", err)
	}
	if q.SQEntries < uint32(entries) || q.CQEntries < uint32(entries) {
		q.Close()
		return nil, fmt.Errorf("uring: %w: kernel gave %d/%d entries for %d", ErrUnavailable, q.SQEntries, q.CQEntries, entries)
	}
	return &Ring{entries: entries, q: q}, nil
}

// Entries is New's argument: how many requests may be pushed between
// two Runs.
func (r *Ring) Entries() int { return r.entries }

// Buffer returns size bytes of memory outside Go's heap for the kernel
// to write into (read buffers, struct statx). It lives until Close, and
// for ever if a Run failed (see the package doc).
func (r *Ring) Buffer(size int) ([]byte, error) {
	if r.q.FD < 0 {
		return nil, errors.New("uring: Buffer on a closed ring")
	}
	if size <= 0 {
		return nil, fmt.Errorf("uring: buffer of %d bytes", size)
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("uring: mapping a %d-byte buffer: %w", size, err)
	}
	r.bufs = append(r.bufs, b)
	return b, nil
}

// StatxBuffer is Buffer for n struct statx.
func (r *Ring) StatxBuffer(n int) ([]unix.Statx_t, error) {
	b, err := r.Buffer(n * int(unsafe.Sizeof(unix.Statx_t{})))
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*unix.Statx_t)(unsafe.Pointer(&b[0])), n), nil
}

// Close releases the ring and its buffers, except after a failed Run:
// then requests may still be in flight, and the kernel would write into
// whatever memory came to occupy the buffers' pages, so they stay
// mapped (abandoned). Close can be called more than once.
func (r *Ring) Close() {
	if r.q.FD < 0 {
		return
	}
	if r.broken == nil {
		for _, b := range r.bufs {
			unix.Munmap(b)
		}
	}
	r.bufs = nil
	r.abandon()
}

// abandon closes the ring and unmaps its queues but leaves the buffers
// mapped. Its failures are not reported: munmap of our own mappings and
// close of a ring descriptor leave nothing a caller could act on.
func (r *Ring) abandon() {
	r.q.Close()
}

// Push queues a request for the next Run. It panics on a closed ring or
// beyond Entries requests: the caller sizes its batches to the ring.
func (r *Ring) Push(s SQE) {
	if r.q.FD < 0 {
		panic("uring: Push on a closed ring")
	}
	if r.pend >= r.entries {
		panic(fmt.Sprintf("uring: more than %d requests pushed before Run", r.entries))
	}
	*(*SQE)(unsafe.Pointer(&r.q.Next()[0])) = s
	r.q.Publish()
	r.pend++
}

// Run submits what was pushed, waits for all of it and hands every
// completion to done, in completion order. If io_uring_enter fails
// (other than EINTR), requests may still be in flight: Run abandons the
// ring (see Close) and returns the error, and so does every later Run.
func (r *Ring) Run(done func(c CQE)) error {
	if r.broken != nil {
		return r.broken
	}
	if r.q.FD < 0 {
		return errors.New("uring: Run on a closed ring")
	}
	for r.pend > 0 {
		_, err := r.q.Enter(r.q.Unsubmitted(), uint32(r.pend))
		if err != nil && err != unix.EINTR {
			r.broken = fmt.Errorf("uring: io_uring_enter: %w", err)
			r.pend = 0
			r.abandon()
			return r.broken
		}
		r.pend -= r.q.Reap(done)
	}
	return nil
}

// addr is p's address for an SQE. The kernel only reads p (a path) or
// p is Buffer memory; see the package doc.
func addr(p []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p)))) }

// cpath checks that path is NUL-terminated, as the kernel reads it.
func cpath(path []byte) uint64 {
	if len(path) == 0 || path[len(path)-1] != 0 {
		panic("uring: path is not NUL-terminated")
	}
	return addr(path)
}

// Openat is openat(dirfd, path, flags); path ends with a NUL byte.
// The completion's Res is the new descriptor or -errno.
func Openat(dirfd int, path []byte, flags int, userData uint64) SQE {
	return SQE{Opcode: OpOpenat, Fd: int32(dirfd), Addr: cpath(path), OpFlags: uint32(flags), UserData: userData}
}

// Read is pread(fd, buf, off) into buf, which must be Buffer memory.
// The completion's Res is the byte count or -errno.
func Read(fd int, buf []byte, off uint64, userData uint64) SQE {
	return SQE{Opcode: OpRead, Fd: int32(fd), Addr: addr(buf), Len: uint32(len(buf)), Off: off, UserData: userData}
}

// Close is close(fd).
func Close(fd int, userData uint64) SQE {
	return SQE{Opcode: OpClose, Fd: int32(fd), UserData: userData}
}

// Statx is statx(dirfd, path, flags, mask, stx); path ends with a NUL
// byte and stx must be StatxBuffer memory.
func Statx(dirfd int, path []byte, flags int, mask uint32, stx *unix.Statx_t, userData uint64) SQE {
	return SQE{Opcode: OpStatx, Fd: int32(dirfd), Addr: cpath(path), Len: mask, OpFlags: uint32(flags),
		Off: uint64(uintptr(unsafe.Pointer(stx))), UserData: userData}
}
