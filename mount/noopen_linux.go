//go:build linux

package mount

// Opening without OPEN (no_open).
//
// Reading a tree of small files through FUSE used to cost the daemon
// OPEN and RELEASE for every open(2), even when the kernel held the pages
// already: that was most of what `cat` of every file of a warm mount and a
// second `grep -r` of .hgfs/rev/REV spent beyond native. The kernel lets
// a server decline OPEN once and for all: answered ENOSYS, it stops
// sending OPEN and RELEASE for regular files on the connection (no_open),
// keeps each file's pages across opens (its default FOPEN_KEEP_CACHE for
// such files) and sends READ, WRITE and FSYNC with handle 0, addressed to
// the node. Both go-fuse mount kinds decline every OPEN where the kernel
// advertised support (CAP_NO_OPEN_SUPPORT):
//
//   - cache mounts read and write fsnode by inode (fsnode.ReadInode,
//     WriteInode, FsyncInode; O_APPEND comes in each WRITE's flags).
//     CREATE answers handle 0 too: once no_open is set the kernel sends
//     no RELEASE for created files either. The kernel's own checks
//     at open(2) (permissions, read-only, O_TRUNC as a SETATTR) are what
//     the handles' access modes repeated. An unlinked open file stays
//     because the kernel keeps its node referenced until FORGET.
//   - repository mounts read .hg by path (loopNode) and the views by node.
//     .hg used to be read through kernel passthrough to the repository's
//     files; without OPEN there is no passthrough, and its reads are READ
//     requests whose pages then stay cached across opens, refreshed when
//     the file's size or mtime changes (AUTO_INVAL_DATA).
//
// Files declined this way get FLUSH on close, which Flush answers ENOSYS
// once (no_flush). Files whose content moves (stats, the text views,
// revlog indexes) can no longer be read with direct I/O, so they report
// their real size, their attributes are never cached (read(2) asks
// GETATTR first) and every change of content gets a new mtime, which
// makes the kernel drop the pages it holds (servedFiles, control.go).

import (
	"log"
	"os"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// kernel is what the kernel negotiated at INIT, once the server exists.
type kernel struct{ srv atomic.Pointer[fuse.Server] }

// noOpen reports whether OPEN may be declined: the kernel advertised
// CAP_NO_OPEN_SUPPORT. Before the server is known (never for OPEN, which
// follows INIT) it answers false, so a file is opened with a handle.
func (k *kernel) noOpen() bool {
	s := k.srv.Load()
	return s != nil && s.KernelSettings().Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0
}

// killPrivV2 reports whether FUSE_HANDLE_KILLPRIV_V2 is in effect: the
// kernel offered it, and cache mounts, the only ones rawFS serves,
// always ask for it (cacheMountOptions).
func (k *kernel) killPrivV2() bool {
	s := k.srv.Load()
	return s != nil && s.KernelSettings().Flags64()&fuse.CAP_HANDLE_KILLPRIV_V2 != 0
}

// primeNoOpen opens and closes the mount's stats file once the mount
// answers, so that the kernel has declined-OPEN (no_open) and FLUSH
// (no_flush) settled before the first user request: until it has seen
// one OPEN declined, it sends RELEASE for every file CREATE made, which
// a clone or tar -x into a fresh mount would pay per file. A failure
// costs only those RELEASEs, so it is logged, not returned.
func primeNoOpen(k *kernel, mp string) {
	if !k.noOpen() {
		return
	}
	f, err := os.Open(StatsPath(mp))
	if err != nil {
		log.Printf("hgfs mount: %v", err)
		return
	}
	f.Close()
}

// movingTimeout is the attribute lifetime of files whose content moves:
// none, so every read(2) refreshes size and mtime (see servedFiles).
const movingTimeout = 0

// readAt answers a READ of size bytes at off from data.
func readAt(data []byte, off uint64, size uint32) fuse.ReadResult {
	return fuse.ReadResultData(sliceAt(data, off, size))
}
