//go:build linux

package main

// The FUSE floor (issue 26): what a mount row would cost if the daemon
// did no work at all. A child of this binary (fuseFloorFlag) mounts an
// in-memory file system with a cache mount's kernel settings
// (mount.NewCacheServer: the same mount options, max_write, xattrs,
// KILLPRIV_V2, yielding loop) and answers as rawFS does (the same
// entry and attribute lifetimes, negative entries, declined OPEN and
// FLUSH, the same open flags), from maps under one lock: no cache file,
// no index, no commit. The kernel then sends it the requests it sends
// hgfs, and the time a command takes on it is the floor of any daemon
// behind that protocol on this machine: the round trips, the kernel's
// own FUSE work and the page cache.
//
// The floor can start empty (tar -x, hg clone into it) or hold a tarball's
// files (cat, hg update in it), read into memory before the mount, so
// that the kernel's caches are as cold as a fresh hgfs mount's.

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/internal/tune"
	"github.com/hgfs/hgfs/mount"
)

// fuseFloorFlag runs the floor: MOUNTPOINT [TARBALL [SKIP...]], where
// the tarball's files named SKIP are left out. The child prints "ready"
// once the mount answers and serves until it is unmounted or signalled.
const fuseFloorFlag = "-child-fuse-floor"

// floorPrime is a file at the floor's root that no listing shows: the
// child opens it once after the mount, as primeNoOpen opens .hgfs/stats,
// so that the kernel has seen OPEN and FLUSH declined before the first
// request it times.
const floorPrime = ".fusefloor-prime"

func init() {
	if len(os.Args) > 2 && os.Args[1] == fuseFloorFlag {
		if err := fuseFloorChild(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "fuse floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func fuseFloorChild(mp string, args []string) error {
	fsys := newMemFS()
	if len(args) > 0 {
		if err := fsys.loadTar(args[0], args[1:]); err != nil {
			return err
		}
	}
	tricks, err := tune.FromEnv()
	if err != nil {
		return err
	}
	// The daemon's kernel settings, io_uring as HGFS_TUNE has it.
	srv, err := mount.NewCacheServer(fsys, mp, mount.Options{FsName: "fusefloor", RootPermissions: true, Yield: true, URing: tricks.Enabled(tune.FuseURing)})
	if err != nil {
		return err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return err
	}
	// The daemon's default process-wide trick (cmd/hgfs spareProcs):
	// GOMAXPROCS raised by the reader pool go-fuse sized from it.
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + mount.ReaderPool())
	if f, err := os.Open(path.Join(mp, floorPrime)); err == nil {
		f.Close()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		if srv.Unmount() != nil {
			// Busy: detach it, so that the request loop ends (and
			// startFuseFloor's stop returns) once the last user goes.
			_ = exec.Command("fusermount3", "-u", "-z", mp).Run()
		}
	}()
	fmt.Println("ready")
	srv.Wait()
	return nil
}

// fuseFloor is a running floor child.
type fuseFloor struct {
	mp  string
	cmd *exec.Cmd
}

// startFuseFloor mounts a floor at mp (created if missing), holding
// tarball's files but those named in skip when tarball is not "".
func startFuseFloor(env *Env, mp, tarball string, skip ...string) (*fuseFloor, error) {
	if err := os.MkdirAll(mp, 0o755); err != nil {
		return nil, err
	}
	args := []string{fuseFloorFlag, mp}
	if tarball != "" {
		args = append(append(args, tarball), skip...)
	}
	cmd := exec.Command(env.Self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("fuse floor at %s did not start: %q %v", mp, line, err)
	}
	return &fuseFloor{mp: mp, cmd: cmd}, nil
}

// stop unmounts the floor and waits for its child; nil stops nothing.
func (f *fuseFloor) stop() error {
	if f == nil {
		return nil
	}
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	err := f.cmd.Wait()
	if err != nil {
		// A child that could not unmount cleanly leaves a dead mount.
		_ = exec.Command("fusermount3", "-u", "-z", f.mp).Run()
	}
	return err
}

// memNode is a node of the floor: its attributes, and a directory's
// entries, a file's bytes, a symlink's target, extended attributes.
type memNode struct {
	attr  fuse.Attr
	kids  map[string]uint64
	data  []byte
	xattr map[string][]byte
}

// memFS is the floor's file system: every node in a map, one lock.
type memFS struct {
	fuse.RawFileSystem
	mu     sync.Mutex
	nodes  map[uint64]*memNode
	next   uint64
	dirs   map[uint64][]fuse.DirEntry // open directories' listings
	nextFh uint64
}

func newMemFS() *memFS {
	fs := &memFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), nodes: map[uint64]*memNode{}, next: fuse.FUSE_ROOT_ID, dirs: map[uint64][]fuse.DirEntry{}}
	root := fs.newNode(syscall.S_IFDIR|0o755, 0, 0)
	fs.newChild(root, floorPrime, syscall.S_IFREG|0o444, 0, 0)
	return fs
}

func (fs *memFS) String() string { return "fusefloor" }

// newNode adds a node of mode (type and permissions), owned by uid:gid.
func (fs *memFS) newNode(mode, uid, gid uint32) *memNode {
	now := time.Now()
	n := &memNode{attr: fuse.Attr{Ino: fs.next, Mode: mode, Nlink: 1, Owner: fuse.Owner{Uid: uid, Gid: gid}, Blksize: 4096}}
	n.attr.SetTimes(&now, &now, &now)
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		n.kids = map[string]uint64{}
		n.attr.Nlink = 2
	}
	fs.nodes[fs.next] = n
	fs.next++
	return n
}

func (fs *memFS) newChild(parent *memNode, name string, mode, uid, gid uint32) *memNode {
	n := fs.newNode(mode, uid, gid)
	parent.kids[name] = n.attr.Ino
	if n.kids != nil {
		parent.attr.Nlink++
	}
	fs.touch(parent)
	return n
}

func (fs *memFS) touch(n *memNode) {
	now := time.Now()
	n.attr.SetTimes(nil, &now, &now)
}

// loadTar fills the floor with tarball's directories, files, hard
// links and symlinks, but those named in skip; a hard link to a skipped
// file becomes a copy of it.
func (fs *memFS) loadTar(tarball string, skip []string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
	skipped := map[string][]byte{} // skipped regular files' contents
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if slices.Contains(skip, name) || name == "." {
			if h.Typeflag == tar.TypeReg && name != "." {
				// A later hard link to it (hg's undo.dirstate is one
				// to the dirstate) becomes a file of its own.
				if skipped[name], err = io.ReadAll(tr); err != nil {
					return err
				}
			}
			continue
		}
		dir := fs.nodes[fuse.FUSE_ROOT_ID]
		parts := strings.Split(name, "/")
		for _, p := range parts[:len(parts)-1] {
			ino, ok := dir.kids[p]
			if !ok {
				dir = fs.newChild(dir, p, syscall.S_IFDIR|0o755, 0, 0)
				continue
			}
			dir = fs.nodes[ino]
		}
		last := parts[len(parts)-1]
		perm := uint32(h.Mode) & 0o7777
		switch h.Typeflag {
		case tar.TypeDir:
			if _, ok := dir.kids[last]; !ok {
				fs.newChild(dir, last, syscall.S_IFDIR|perm, 0, 0)
			}
		case tar.TypeReg:
			n := fs.newChild(dir, last, syscall.S_IFREG|perm, 0, 0)
			if n.data, err = io.ReadAll(tr); err != nil {
				return err
			}
			n.attr.Size = uint64(len(n.data))
			n.attr.Blocks = (n.attr.Size + 511) / 512
		case tar.TypeLink:
			if data, ok := skipped[path.Clean(h.Linkname)]; ok {
				n := fs.newChild(dir, last, syscall.S_IFREG|perm, 0, 0)
				n.data = data
				n.attr.Size = uint64(len(n.data))
				n.attr.Blocks = (n.attr.Size + 511) / 512
				continue
			}
			target := fs.walk(path.Clean(h.Linkname))
			if target == nil || target.kids != nil {
				return fmt.Errorf("%s: hard link to %s, which the tarball has not given as a file", name, h.Linkname)
			}
			dir.kids[last] = target.attr.Ino
			target.attr.Nlink++
		case tar.TypeSymlink:
			n := fs.newChild(dir, last, syscall.S_IFLNK|0o777, 0, 0)
			n.data = []byte(h.Linkname)
			n.attr.Size = uint64(len(n.data))
		}
	}
}

// walk returns the node at slash-separated name, or nil.
func (fs *memFS) walk(name string) *memNode {
	n := fs.nodes[fuse.FUSE_ROOT_ID]
	for _, p := range strings.Split(name, "/") {
		ino, ok := n.kids[p]
		if !ok {
			return nil
		}
		n = fs.nodes[ino]
	}
	return n
}

func (fs *memFS) entry(n *memNode, out *fuse.EntryOut) {
	out.NodeId = n.attr.Ino
	out.Generation = 0
	out.SetEntryTimeout(mount.NodeTimeout)
	out.SetAttrTimeout(mount.NodeTimeout)
	out.Attr = n.attr
}

func (fs *memFS) attr(n *memNode, out *fuse.AttrOut) {
	out.SetTimeout(mount.NodeTimeout)
	out.Attr = n.attr
}

// dir returns the directory node id, or a status.
func (fs *memFS) dir(id uint64) (*memNode, fuse.Status) {
	n := fs.nodes[id]
	switch {
	case n == nil:
		return nil, fuse.ENOENT
	case n.kids == nil:
		return nil, fuse.ENOTDIR
	}
	return n, fuse.OK
}

func (fs *memFS) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dir(h.NodeId)
	if !st.Ok() {
		return st
	}
	ino, ok := d.kids[name]
	if !ok {
		*out = fuse.EntryOut{}
		out.SetEntryTimeout(mount.NodeTimeout)
		return fuse.OK
	}
	fs.entry(fs.nodes[ino], out)
	return fuse.OK
}

func (fs *memFS) Forget(uint64, uint64) {}

func (fs *memFS) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return fuse.ENOENT
	}
	fs.attr(n, out)
	return fuse.OK
}

func (fs *memFS) SetAttr(_ <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return fuse.ENOENT
	}
	if m, ok := in.GetMode(); ok {
		n.attr.Mode = n.attr.Mode&syscall.S_IFMT | m&0o7777
	}
	if uid, ok := in.GetUID(); ok {
		n.attr.Uid = uid
	}
	if gid, ok := in.GetGID(); ok {
		n.attr.Gid = gid
	}
	if size, ok := in.GetSize(); ok {
		n.setSize(size)
	}
	at, aok := in.GetATime()
	mt, mok := in.GetMTime()
	if aok || mok {
		var a, m *time.Time
		if aok {
			a = &at
		}
		if mok {
			m = &mt
		}
		n.attr.SetTimes(a, m, nil)
	}
	now := time.Now()
	n.attr.SetTimes(nil, nil, &now)
	fs.attr(n, out)
	return fuse.OK
}

func (n *memNode) setSize(size uint64) {
	if size <= uint64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-uint64(len(n.data)))...)
	}
	n.attr.Size = size
	n.attr.Blocks = (size + 511) / 512
}

// create adds name in directory parent; an existing name is EEXIST.
func (fs *memFS) create(parent uint64, name string, mode uint32, h *fuse.InHeader, out *fuse.EntryOut) (*memNode, fuse.Status) {
	d, st := fs.dir(parent)
	if !st.Ok() {
		return nil, st
	}
	if _, ok := d.kids[name]; ok {
		return nil, fuse.Status(syscall.EEXIST)
	}
	n := fs.newChild(d, name, mode, h.Uid, h.Gid)
	fs.entry(n, out)
	return n, fuse.OK
}

func (fs *memFS) Mknod(_ <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.create(in.NodeId, name, in.Mode&^in.Umask|in.Mode&syscall.S_IFMT, &in.InHeader, out)
	if st.Ok() {
		n.attr.Rdev = in.Rdev
		out.Attr = n.attr
	}
	return st
}

func (fs *memFS) Mkdir(_ <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, st := fs.create(in.NodeId, name, syscall.S_IFDIR|in.Mode&^in.Umask&0o7777, &in.InHeader, out)
	return st
}

func (fs *memFS) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if d, st := fs.dir(in.NodeId); st.Ok() {
		if ino, ok := d.kids[name]; ok && in.Flags&syscall.O_EXCL == 0 {
			n := fs.nodes[ino]
			if in.Flags&syscall.O_TRUNC != 0 {
				n.setSize(0)
			}
			fs.entry(n, &out.EntryOut)
			out.OpenOut = fuse.OpenOut{OpenFlags: mount.OpenFlags}
			return fuse.OK
		}
	}
	_, st := fs.create(in.NodeId, name, syscall.S_IFREG|in.Mode&^in.Umask&0o7777, &in.InHeader, &out.EntryOut)
	out.OpenOut = fuse.OpenOut{OpenFlags: mount.OpenFlags}
	return st
}

func (fs *memFS) Symlink(_ <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.create(h.NodeId, name, syscall.S_IFLNK|0o777, h, out)
	if st.Ok() {
		n.data = []byte(target)
		n.attr.Size = uint64(len(target))
		out.Attr = n.attr
	}
	return st
}

func (fs *memFS) Readlink(_ <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[h.NodeId]
	if n == nil || n.attr.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return nil, fuse.EINVAL
	}
	return slices.Clone(n.data), fuse.OK
}

func (fs *memFS) Link(_ <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dir(in.NodeId)
	if !st.Ok() {
		return st
	}
	n := fs.nodes[in.Oldnodeid]
	if n == nil {
		return fuse.ENOENT
	}
	if _, ok := d.kids[name]; ok {
		return fuse.Status(syscall.EEXIST)
	}
	d.kids[name] = n.attr.Ino
	n.attr.Nlink++
	fs.touch(d)
	fs.entry(n, out)
	return fuse.OK
}

// remove takes name out of directory parent; dir says whether it must
// be a directory (empty) or must not.
func (fs *memFS) remove(parent uint64, name string, dir bool) fuse.Status {
	d, st := fs.dir(parent)
	if !st.Ok() {
		return st
	}
	ino, ok := d.kids[name]
	if !ok {
		return fuse.ENOENT
	}
	n := fs.nodes[ino]
	switch {
	case dir && n.kids == nil:
		return fuse.ENOTDIR
	case !dir && n.kids != nil:
		return fuse.Status(syscall.EISDIR)
	case dir && len(n.kids) > 0:
		return fuse.Status(syscall.ENOTEMPTY)
	}
	delete(d.kids, name)
	if n.kids != nil {
		d.attr.Nlink--
	}
	n.attr.Nlink--
	fs.touch(d)
	return fuse.OK
}

func (fs *memFS) Unlink(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.remove(h.NodeId, name, false)
}

func (fs *memFS) Rmdir(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.remove(h.NodeId, name, true)
}

func (fs *memFS) Rename(_ <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if in.Flags != 0 {
		return fuse.Status(syscall.EINVAL) // hg and tar rename plainly
	}
	from, st := fs.dir(in.NodeId)
	if !st.Ok() {
		return st
	}
	to, st := fs.dir(in.Newdir)
	if !st.Ok() {
		return st
	}
	ino, ok := from.kids[oldName]
	if !ok {
		return fuse.ENOENT
	}
	n := fs.nodes[ino]
	if old, ok := to.kids[newName]; ok && old != ino {
		if st := fs.remove(in.Newdir, newName, n.kids != nil); !st.Ok() {
			return st
		}
	}
	delete(from.kids, oldName)
	to.kids[newName] = ino
	if n.kids != nil {
		from.attr.Nlink--
		to.attr.Nlink++
	}
	fs.touch(from)
	fs.touch(to)
	return fuse.OK
}

func (fs *memFS) Access(<-chan struct{}, *fuse.AccessIn) fuse.Status { return fuse.OK }

func (fs *memFS) GetXAttr(_ <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[h.NodeId]
	if n == nil {
		return 0, fuse.ENOENT
	}
	v, ok := n.xattr[attr]
	if !ok {
		return 0, fuse.ENOATTR
	}
	return mount.XattrReply(v, dest)
}

func (fs *memFS) ListXAttr(_ <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[h.NodeId]
	if n == nil {
		return 0, fuse.ENOENT
	}
	var b []byte
	for k := range n.xattr {
		b = append(append(b, k...), 0)
	}
	return mount.XattrReply(b, dest)
}

func (fs *memFS) SetXAttr(_ <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return fuse.ENOENT
	}
	if n.xattr == nil {
		n.xattr = map[string][]byte{}
	}
	n.xattr[attr] = slices.Clone(data)
	return fuse.OK
}

func (fs *memFS) RemoveXAttr(_ <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[h.NodeId]
	if n == nil {
		return fuse.ENOENT
	}
	if _, ok := n.xattr[attr]; !ok {
		return fuse.ENOATTR
	}
	delete(n.xattr, attr)
	return fuse.OK
}

// Open and Flush are declined, as rawFS declines them (no_open,
// no_flush).
func (fs *memFS) Open(<-chan struct{}, *fuse.OpenIn, *fuse.OpenOut) fuse.Status { return fuse.ENOSYS }
func (fs *memFS) Flush(<-chan struct{}, *fuse.FlushIn) fuse.Status              { return fuse.ENOSYS }
func (fs *memFS) Release(<-chan struct{}, *fuse.ReleaseIn)                      {}
func (fs *memFS) Fsync(<-chan struct{}, *fuse.FsyncIn) fuse.Status              { return fuse.OK }
func (fs *memFS) FsyncDir(<-chan struct{}, *fuse.FsyncIn) fuse.Status           { return fuse.OK }

func (fs *memFS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return nil, fuse.ENOENT
	}
	if in.Offset >= uint64(len(n.data)) {
		return fuse.ReadResultData(nil), fuse.OK
	}
	// At most the size asked: go-fuse's buffer is max_write long, and a
	// read of 128 KiB must not copy a MiB.
	end := min(uint64(len(n.data)), in.Offset+uint64(in.Size))
	return fuse.ReadResultData(buf[:copy(buf, n.data[in.Offset:end])]), fuse.OK
}

func (fs *memFS) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return 0, fuse.ENOENT
	}
	off := in.Offset
	if in.Flags&syscall.O_APPEND != 0 {
		off = uint64(len(n.data))
	}
	if end := off + uint64(len(data)); end > uint64(len(n.data)) {
		n.setSize(end)
	}
	copy(n.data[off:], data)
	fs.touch(n)
	return uint32(len(data)), fuse.OK
}

func (fs *memFS) Fallocate(_ <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[in.NodeId]
	if n == nil {
		return fuse.ENOENT
	}
	if in.Mode != 0 {
		return fuse.Status(syscall.EOPNOTSUPP)
	}
	if end := in.Offset + in.Length; end > uint64(len(n.data)) {
		n.setSize(end)
	}
	return fuse.OK
}

func (fs *memFS) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dir(in.NodeId)
	if !st.Ok() {
		return st
	}
	list := make([]fuse.DirEntry, 0, len(d.kids))
	for name, ino := range d.kids {
		if name != floorPrime {
			list = append(list, fuse.DirEntry{Name: name, Ino: ino, Mode: fs.nodes[ino].attr.Mode})
		}
	}
	slices.SortFunc(list, func(a, b fuse.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	fs.nextFh++
	fs.dirs[fs.nextFh] = list
	out.Fh = fs.nextFh
	return fuse.OK
}

func (fs *memFS) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	list := fs.dirs[in.Fh]
	for i := int(in.Offset); i < len(list); i++ {
		e := list[i]
		e.Off = uint64(i + 1)
		if !plus {
			if !out.AddDirEntry(e) {
				break
			}
			continue
		}
		eo := out.AddDirLookupEntry(e)
		if eo == nil {
			break
		}
		if n := fs.nodes[e.Ino]; n != nil {
			fs.entry(n, eo)
		}
	}
	return fuse.OK
}

func (fs *memFS) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return fs.readDir(in, out, false)
}

func (fs *memFS) ReadDirPlus(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return fs.readDir(in, out, true)
}

func (fs *memFS) ReleaseDir(in *fuse.ReleaseIn) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.dirs, in.Fh)
}

func (fs *memFS) StatFs(_ <-chan struct{}, _ *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	*out = fuse.StatfsOut{Blocks: 1 << 30, Bfree: 1 << 29, Bavail: 1 << 29, Files: 1 << 24, Ffree: 1 << 23, Bsize: 4096, NameLen: 255, Frsize: 4096}
	return fuse.OK
}
