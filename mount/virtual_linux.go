//go:build linux

package mount

import (
	"encoding/json"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Virtual inode numbers live in the top half of the 64-bit space, which
// fsnode never allocates (it counts up from the root).
const (
	virtualBase     = 1 << 63
	virtualDirIno   = virtualBase + 1
	virtualStatsIno = virtualBase + 2
)

// virtualDir is the adapter's control directory, MOUNTPOINT/.hgfs. Lookup
// finds it but READDIR never lists it, so hg status, find, tar and du do
// not see it. It holds one read-only file, "stats": a JSON object
// describing the daemon (pid, cache, mountpoint) and the committer
// (fsnode.Stats), generated when the file is opened.
type virtualDir struct {
	info  func() any
	start time.Time
	uid   uint32
	gid   uint32

	nextFh  atomic.Uint64
	mu      sync.Mutex
	handles map[uint64][]byte
}

func newVirtualDir(info func() any) *virtualDir {
	return &virtualDir{
		info:    info,
		start:   time.Now(),
		uid:     uint32(os.Getuid()),
		gid:     uint32(os.Getgid()),
		handles: map[uint64][]byte{},
	}
}

func (v *virtualDir) owns(nodeID uint64) bool { return nodeID >= virtualBase }

// refuse rejects changes inside the control directory and to its name.
func (v *virtualDir) refuse(parent uint64, name string) fuse.Status {
	if v.owns(parent) || (parent == fuse.FUSE_ROOT_ID && name == VirtualDirName) {
		return fuse.EPERM
	}
	return fuse.OK
}

func (v *virtualDir) attr(ino uint64, out *fuse.Attr) {
	*out = fuse.Attr{Ino: ino, Owner: fuse.Owner{Uid: v.uid, Gid: v.gid}, Blksize: 4096}
	if ino == virtualDirIno {
		out.Mode, out.Nlink = syscall.S_IFDIR|0o555, 2
	} else {
		// Size 0 with direct I/O: readers read until EOF.
		out.Mode, out.Nlink = syscall.S_IFREG|0o444, 1
	}
	out.SetTimes(&v.start, &v.start, &v.start)
}

func (v *virtualDir) lookup(parent uint64, name string, out *fuse.EntryOut) fuse.Status {
	var ino uint64
	switch {
	case parent == fuse.FUSE_ROOT_ID && name == VirtualDirName:
		ino = virtualDirIno
	case parent == virtualDirIno && name == "stats":
		ino = virtualStatsIno
	default:
		return fuse.ENOENT
	}
	*out = fuse.EntryOut{NodeId: ino}
	out.SetEntryTimeout(entryTimeout)
	out.SetAttrTimeout(attrTimeout)
	v.attr(ino, &out.Attr)
	return fuse.OK
}

func (v *virtualDir) getAttr(ino uint64, out *fuse.AttrOut) fuse.Status {
	if ino != virtualDirIno && ino != virtualStatsIno {
		return fuse.ENOENT
	}
	out.SetTimeout(attrTimeout)
	v.attr(ino, &out.Attr)
	return fuse.OK
}

func (v *virtualDir) open(in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	switch in.NodeId {
	case virtualStatsIno:
	case virtualDirIno:
		return fuse.EISDIR
	default:
		return fuse.ENOENT
	}
	if in.Flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return fuse.EACCES
	}
	data, err := json.MarshalIndent(v.info(), "", "  ")
	if err != nil {
		return toStatus(err)
	}
	fh := v.nextFh.Add(1)
	v.mu.Lock()
	v.handles[fh] = append(data, '\n')
	v.mu.Unlock()
	out.Fh, out.OpenFlags = fh, fuse.FOPEN_DIRECT_IO
	return fuse.OK
}

func (v *virtualDir) read(in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	v.mu.Lock()
	data, ok := v.handles[in.Fh]
	v.mu.Unlock()
	if !ok {
		return nil, fuse.EBADF
	}
	if in.Offset >= uint64(len(data)) {
		return fuse.ReadResultData(nil), fuse.OK
	}
	data = data[in.Offset:]
	if uint64(len(data)) > uint64(in.Size) {
		data = data[:in.Size]
	}
	return fuse.ReadResultData(data), fuse.OK
}

func (v *virtualDir) release(fh uint64) {
	v.mu.Lock()
	delete(v.handles, fh)
	v.mu.Unlock()
}

func (v *virtualDir) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	if in.NodeId != virtualDirIno {
		return fuse.ENOTDIR
	}
	if in.Offset > 0 {
		return fuse.OK
	}
	de := fuse.DirEntry{Name: "stats", Ino: virtualStatsIno, Mode: syscall.S_IFREG, Off: 1}
	if !plus {
		out.AddDirEntry(de)
		return fuse.OK
	}
	if eo := out.AddDirLookupEntry(de); eo != nil {
		v.lookup(virtualDirIno, "stats", eo)
	}
	return fuse.OK
}
