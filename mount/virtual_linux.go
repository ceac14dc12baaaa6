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
// (fsnode.Stats), generated when the file is opened. Everything else in
// it is the repository's views (views_linux.go).
type virtualDir struct {
	info  func() any
	views *views
	start time.Time
	uid   uint32
	gid   uint32

	nextFh  atomic.Uint64
	mu      sync.Mutex
	handles map[uint64][]byte
}

func newVirtualDir(info func() any, views *views) *virtualDir {
	return &virtualDir{
		info:    info,
		views:   views,
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

// attr fills the attributes of the control directory or stats; stats is
// generated anew, and reports its size and the time its content last
// changed (servedFiles).
func (v *virtualDir) attr(ino uint64, out *fuse.Attr) fuse.Status {
	*out = fuse.Attr{Ino: ino, Owner: fuse.Owner{Uid: v.uid, Gid: v.gid}, Blksize: 4096}
	if ino == virtualDirIno {
		out.Mode, out.Nlink = syscall.S_IFDIR|0o555, 2
		out.SetTimes(&v.start, &v.start, &v.start)
		return fuse.OK
	}
	sv, st := v.stats()
	if st != fuse.OK {
		return st
	}
	out.Mode, out.Nlink = syscall.S_IFREG|0o444, 1
	out.Size, out.Blocks = uint64(len(sv.data)), uint64(len(sv.data)+511)/512
	out.SetTimes(&sv.mtime, &sv.mtime, &sv.mtime)
	return fuse.OK
}

// stats generates the stats file's content.
func (v *virtualDir) stats() (*served, fuse.Status) {
	b, err := json.MarshalIndent(v.info(), "", "  ")
	if err != nil {
		return nil, toStatus(err)
	}
	return v.views.served.update(virtualStatsIno, append(b, '\n')), fuse.OK
}

// timeout is the attribute lifetime of the control directory or stats.
func timeout(ino uint64) time.Duration {
	if ino == virtualStatsIno {
		return movingTimeout
	}
	return attrTimeout
}

func (v *virtualDir) lookup(parent uint64, name string, out *fuse.EntryOut) fuse.Status {
	var ino uint64
	switch {
	case parent == fuse.FUSE_ROOT_ID && name == VirtualDirName:
		ino = virtualDirIno
	case parent == virtualDirIno && name == "stats":
		ino = virtualStatsIno
	case parent == virtualDirIno || v.views.owns(parent):
		return v.views.lookup(parent, name, v.uid, v.gid, out)
	default:
		return fuse.ENOENT
	}
	*out = fuse.EntryOut{NodeId: ino}
	out.SetEntryTimeout(entryTimeout)
	out.SetAttrTimeout(timeout(ino))
	return v.attr(ino, &out.Attr)
}

func (v *virtualDir) getAttr(ino uint64, out *fuse.AttrOut) fuse.Status {
	if v.views.owns(ino) {
		return v.views.getAttr(ino, v.uid, v.gid, out)
	}
	if ino != virtualDirIno && ino != virtualStatsIno {
		return fuse.ENOENT
	}
	out.SetTimeout(timeout(ino))
	return v.attr(ino, &out.Attr)
}

func (v *virtualDir) open(in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.Flags&syscall.O_ACCMODE != syscall.O_RDONLY && in.NodeId != virtualDirIno {
		return fuse.EACCES
	}
	var data []byte
	flags := uint32(fuse.FOPEN_DIRECT_IO)
	switch {
	case in.NodeId == virtualStatsIno:
		sv, st := v.stats()
		if st != fuse.OK {
			return st
		}
		data = sv.data
	case in.NodeId == virtualDirIno:
		return fuse.EISDIR
	case v.views.owns(in.NodeId):
		var st fuse.Status
		if data, flags, st = v.views.content(in.NodeId); st != fuse.OK {
			return st
		}
	default:
		return fuse.ENOENT
	}
	fh := v.nextFh.Add(1)
	v.mu.Lock()
	v.handles[fh] = data
	v.mu.Unlock()
	out.Fh, out.OpenFlags = fh, flags
	return fuse.OK
}

// read answers a READ: through the handle open made, or without one
// (no_open) from the node: stats as its attributes last reported it.
func (v *virtualDir) read(in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if in.Fh == 0 {
		switch {
		case in.NodeId == virtualStatsIno:
			sv := v.views.served.get(virtualStatsIno)
			if sv == nil {
				var st fuse.Status
				if sv, st = v.stats(); st != fuse.OK {
					return nil, st
				}
			}
			return readAt(sv.data, in.Offset, in.Size), fuse.OK
		case in.NodeId == virtualDirIno:
			return nil, fuse.EISDIR
		case v.views.owns(in.NodeId):
			return v.views.read(in)
		}
		return nil, fuse.ENOENT
	}
	v.mu.Lock()
	data, ok := v.handles[in.Fh]
	v.mu.Unlock()
	if !ok {
		return nil, fuse.EBADF
	}
	return readAt(data, in.Offset, in.Size), fuse.OK
}

func (v *virtualDir) release(fh uint64) {
	v.mu.Lock()
	delete(v.handles, fh)
	v.mu.Unlock()
}

func (v *virtualDir) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	return v.views.readDir(in, out, plus)
}

func (v *virtualDir) readlink(ino uint64) ([]byte, fuse.Status) {
	if v.views.owns(ino) {
		return v.views.readlink(ino)
	}
	return nil, fuse.EINVAL
}
