package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Rings is an io_uring instance's two queues mapped into our memory:
// what Ring (64-byte submissions, batches) and internal/fuseuring
// (128-byte submissions carrying FUSE's commands) are built on. It
// neither checks SetEnabled's switch nor owns buffers: its users do.
// Not safe for concurrent use.
type Rings struct {
	FD                     int // -1 once closed
	ringMem, sqeMem        []byte
	sqHead, sqTail, sqMask *uint32
	sqArray                []uint32
	sqes                   []byte
	sqeSize                int
	cqHead, cqTail, cqMask *uint32
	cqes                   []CQE
	SQEntries, CQEntries   uint32 // what the kernel gave
}

// SetupSQE128 (IORING_SETUP_SQE128) makes each submission 128 bytes.
const SetupSQE128 = 1 << 10

// Setup is io_uring_setup(entries) with flags (IORING_SETUP_*) and the
// queues mapped. The kernel must map both queues in one region
// (IORING_FEAT_SINGLE_MMAP, Linux 5.4).
func Setup(entries, flags uint32) (*Rings, error) {
	var p params
	p.flags = flags
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", ErrUnavailable, errno)
	}
	r := &Rings{FD: int(fd), sqeSize: int(unsafe.Sizeof(SQE{})), SQEntries: p.sqEntries, CQEntries: p.cqEntries}
	if flags&SetupSQE128 != 0 {
		r.sqeSize *= 2
	}
	if p.features&featSingleMmap == 0 {
		r.Close()
		return nil, fmt.Errorf("%w: kernel lacks IORING_FEAT_SINGLE_MMAP", ErrUnavailable)
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(CQE{})))
	var err error
	if r.ringMem, err = unix.Mmap(r.FD, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("mapping the rings: %w", err)
	}
	if r.sqeMem, err = unix.Mmap(r.FD, offSQEs, int(p.sqEntries)*r.sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("mapping the submission entries: %w", err)
	}
	b := unsafe.Pointer(&r.ringMem[0])
	r.sqHead = (*uint32)(unsafe.Add(b, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(b, p.sqOff.tail))
	r.sqMask = (*uint32)(unsafe.Add(b, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(b, p.sqOff.array)), p.sqEntries)
	r.sqes = r.sqeMem
	r.cqHead = (*uint32)(unsafe.Add(b, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(b, p.cqOff.tail))
	r.cqMask = (*uint32)(unsafe.Add(b, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*CQE)(unsafe.Add(b, p.cqOff.cqes)), p.cqEntries)
	return r, nil
}

// Next returns the next submission's slot, cleared, for the caller to
// fill and then Publish. The caller keeps within SQEntries unsubmitted.
func (r *Rings) Next() []byte {
	i := atomic.LoadUint32(r.sqTail) & *r.sqMask
	sqe := r.sqes[int(i)*r.sqeSize : int(i+1)*r.sqeSize]
	clear(sqe)
	return sqe
}

// Publish hands the slot Next returned to the kernel's next
// io_uring_enter.
func (r *Rings) Publish() {
	t := atomic.LoadUint32(r.sqTail)
	i := t & *r.sqMask
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, t+1)
}

// Unsubmitted is how many published submissions the kernel has not
// taken yet.
func (r *Rings) Unsubmitted() uint32 {
	return atomic.LoadUint32(r.sqTail) - atomic.LoadUint32(r.sqHead)
}

// Enter is io_uring_enter: submit that many, and wait until at least
// wait completions are there (0: do not wait).
func (r *Rings) Enter(submit, wait uint32) (int, error) {
	flags := uintptr(0)
	if wait > 0 {
		flags = enterGetevents
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.FD), uintptr(submit), uintptr(wait), flags, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// Reap hands every completion there to done, in order, and frees their
// slots; it returns how many there were.
func (r *Rings) Reap(done func(c CQE)) int {
	h, t := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
	n := int(t - h)
	for ; h != t; h++ {
		done(r.cqes[h&*r.cqMask])
	}
	atomic.StoreUint32(r.cqHead, h)
	return n
}

// Close unmaps the queues and closes the ring. Can be called more than
// once.
func (r *Rings) Close() {
	if r.FD < 0 {
		return
	}
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.ringMem != nil {
		unix.Munmap(r.ringMem)
	}
	r.sqeMem, r.ringMem, r.sqes, r.cqes, r.sqArray = nil, nil, nil, nil, nil
	unix.Close(r.FD)
	r.FD = -1
}
