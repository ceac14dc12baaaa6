package mount

import (
	"runtime"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// yielding passes one request in yieldEvery through the Go scheduler
// (runtime.Gosched) before handling it. Both go-fuse mount kinds use it
// when Options.Yield is set (the hgfs daemon sets it unless HGFS_TUNE
// has -yield; see internal/tune); without it, requests go straight to
// the file system.
//
// A go-fuse reader goroutine loops read(2) of /dev/fuse, handle, writev(2)
// of the reply, without ever being descheduled when its requests do not
// block. The runtime's monitor (sysmon) counts a P whose scheduler tick has
// not moved for 10 ms as running one goroutine too long; when that
// goroutine sits in a system call, as a reader waiting in read(2) does, it
// takes the P away from it (retake, handoffp) and polls every 20 µs for the
// next millisecond. The reader then gets another idle P on its way out of
// read(2), one whose tick is just as stale, and the next poll takes that
// too: on a cat of a fresh mount's 20,000 files, 9,500 hand-offs and
// 15,000 monitor wake-ups in 3.3 s (uprobes on the runtime), each a context
// switch that costs tens of microseconds on a virtual machine. A Gosched
// moves the tick: the goroutine goes through the run queue and is picked up
// again, usually by the same thread.
//
// Not every request: a Gosched each time cost more than it saved where
// requests come fast (tar -x into a mount: wall time -7% but daemon CPU
// +17%), and one in a few hundred microseconds of requests is enough to keep
// every reader's tick moving well within 10 ms. The count is shared by all
// readers, and yieldEvery is prime so that readers the kernel wakes in turn
// (it queues them first in, first out) all get their share.
//
// Measured on the bench machine (2 CPUs, three alternated runs each,
// against no yielding):
//   - cat of every file of a fresh cache mount of the 20,000-file store:
//     3.23-3.57 s -> 3.03-3.05 s, daemon CPU -25%;
//   - tar -x of that store into an empty cache mount: 5.02-5.41 s ->
//     4.27-5.09 s, daemon CPU -15%;
//   - a real hg clone --stream into a cache mount: 17.2 and 21.0 s ->
//     16.3 and 19.2 s (two runs);
//   - the first grep -r of .hgfs/rev/tip of a repository mount: unchanged
//     (0.79-0.90 s both; its daemon is busy with its own goroutines).
//
// Forget (one call per entry of a BATCH_FORGET) and the calls answered
// without a request of their own (Init, OnUnmount, String, SetDebug) pass
// through unchanged.
type yielding struct {
	fuse.RawFileSystem
}

// yieldingIf is raw wrapped in yielding when on, raw itself otherwise.
func yieldingIf(on bool, raw fuse.RawFileSystem) fuse.RawFileSystem {
	if on {
		return yielding{raw}
	}
	return raw
}

func (y yielding) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	yield()
	return y.RawFileSystem.Lookup(cancel, h, name, out)
}

func (y yielding) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	yield()
	return y.RawFileSystem.GetAttr(cancel, in, out)
}

func (y yielding) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	yield()
	return y.RawFileSystem.SetAttr(cancel, in, out)
}

func (y yielding) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	yield()
	return y.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (y yielding) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	yield()
	return y.RawFileSystem.Unlink(cancel, h, name)
}

func (y yielding) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	yield()
	return y.RawFileSystem.Rmdir(cancel, h, name)
}

func (y yielding) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	yield()
	return y.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (y yielding) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	yield()
	return y.RawFileSystem.Link(cancel, in, name, out)
}

func (y yielding) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	yield()
	return y.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (y yielding) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	yield()
	return y.RawFileSystem.Readlink(cancel, h)
}

func (y yielding) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	yield()
	return y.RawFileSystem.Access(cancel, in)
}

func (y yielding) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	yield()
	return y.RawFileSystem.Create(cancel, in, name, out)
}

func (y yielding) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	yield()
	return y.RawFileSystem.Open(cancel, in, out)
}

func (y yielding) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	yield()
	return y.RawFileSystem.Read(cancel, in, buf)
}

func (y yielding) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	yield()
	return y.RawFileSystem.Write(cancel, in, data)
}

func (y yielding) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	yield()
	y.RawFileSystem.Release(cancel, in)
}

func (y yielding) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	yield()
	return y.RawFileSystem.Flush(cancel, in)
}

func (y yielding) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	yield()
	return y.RawFileSystem.Fsync(cancel, in)
}

func (y yielding) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	yield()
	return y.RawFileSystem.OpenDir(cancel, in, out)
}

func (y yielding) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	yield()
	return y.RawFileSystem.ReadDir(cancel, in, out)
}

func (y yielding) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	yield()
	return y.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (y yielding) ReleaseDir(in *fuse.ReleaseIn) {
	yield()
	y.RawFileSystem.ReleaseDir(in)
}

func (y yielding) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	yield()
	return y.RawFileSystem.StatFs(cancel, h, out)
}

func (y yielding) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	yield()
	return y.RawFileSystem.Statx(cancel, in, out)
}

// yieldEvery: one request in this many yields (see yielding).
const yieldEvery = 13

var yieldCount atomic.Uint32

// yield is yielding's Gosched, for one request in yieldEvery. The count
// is shared by every mount of the process.
func yield() {
	if yieldCount.Add(1)%yieldEvery == 0 {
		runtime.Gosched()
	}
}
