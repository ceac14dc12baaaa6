//go:build linux

// Package hugeheap backs the start of the Go heap with transparent huge
// pages where the kernel only gives them to memory that asks
// (/sys/kernel/mm/transparent_hugepage/enabled = madvise, the default of
// most distributions).
//
// # Why
//
// Every page of fresh memory costs a page fault, and on a virtual machine
// a fault costs far more than the zeroing it does. An ingest of the
// 20,000-file store into a cache (hgfs clone --mount) grows a heap of
// about 45 MB and took 13,000 faults; perf put a fifth of its CPU in them.
// With the machine's THP setting at "always" the same clone took 1,600
// faults and 0.18-0.20 s instead of 0.32-0.36 s. The Go runtime does not
// ask for huge pages for its heap (it did in Go 1.21.0, and stopped), so
// hgfs asks for the part it will use. With Reserve (THP left at madvise),
// measured on the bench machine, alternated runs:
//   - that clone: 0.32-0.36 s -> 0.21-0.26 s, 12,200 -> 2,800 faults;
//   - the first grep -r of .hgfs/rev/tip of a repository mount: 0.73-0.76
//     -> 0.62 s, mount daemon CPU -25%;
//   - a clone into a directory: the same time, peak RSS 19.5 -> 21.7 MB;
//   - Reserve itself: 2-6 ms (the block's page-allocator bookkeeping and
//     the collection), which is why only commands that grow large heaps
//     call it (cmd/hgfs: command.bigHeap).
//
// # How
//
// Reserve allocates one large block, which the runtime maps fresh from
// the kernel and does not touch (fresh memory is already zero), marks its
// range MADV_HUGEPAGE, and frees it with a garbage collection. The range
// stays mapped in the runtime's heap, and the page allocator, which hands
// out the lowest free addresses first, builds the next spans from it; their
// first touch then faults in 2 MiB at a time. Memory the heap needs beyond
// the block comes in ordinary pages, as before. Untouched parts of the
// block cost address space only; the runtime's scavenger returns idle
// memory as before (MADV_DONTNEED, which splits a huge page it cuts into).
package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reserve makes the next n bytes of heap growth huge-page backed where the
// kernel allows it (see the package comment). It is done once per process;
// failures (THP disabled or unsupported) leave the heap as it was.
func Reserve(n int) {
	once.Do(func() { reserve(n) })
}

var once sync.Once

func reserve(n int) {
	if n <= 0 || !thpAdvised() {
		return
	}
	b := make([]byte, n)
	// The block's own bytes are never read or written: only its address
	// range matters.
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := int((p+hugePage-1)&^(hugePage-1) - p)
	end := int((p+uintptr(n))&^(hugePage-1) - p)
	if beg < end {
		// An error (EINVAL without THP support) changes nothing.
		_ = unix.Madvise(b[beg:end], unix.MADV_HUGEPAGE)
	}
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
}

// hugePage is the x86-64 and arm64 (4 KiB base pages) PMD size.
const hugePage = 2 << 20

// thpAdvised reports whether the kernel gives huge pages to memory that
// asks for them and only to it. With "always" the heap gets them anyway;
// with "never" (or no THP at all) asking does nothing.
func thpAdvised() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
}
