//go:build linux

package mount

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// MountRepo presents the repository at repo read-only: MOUNTPOINT/.hg is
// a loopback of repo/.hg (so `hg -R MOUNTPOINT log` works), the working
// directory files are not shown, and MOUNTPOINT/.hgfs/stats describes the
// daemon as for a cache mount. The kernel enforces read-only ("ro"), so no
// request can change the repository; hg's best-effort cache writes fail
// quietly as they do on any read-only medium.
func MountRepo(repo, mountpoint string, opt Options) (*Server, error) {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	mp, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, err
	}
	hgDir := filepath.Join(repo, ".hg")
	if fi, err := os.Stat(hgDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("mount %s: %s is not a repository (no .hg directory)", mp, repo)
	}
	k := &kernel{}
	loop, hgFile, err := newLoopRoot(hgDir)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	opt.ReadOnly = true
	if opt.FsName == "" {
		opt.FsName = repo
	}
	info := func() any {
		return &Info{Pid: os.Getpid(), Mountpoint: mp, Source: repo, Kind: "repo", ReadOnly: true}
	}
	root := &repoRoot{hg: loop, info: info, views: repoViews(repo)}
	timeout := time.Second
	fsOpts := &fs.Options{
		MountOptions: *mountOptions(opt),
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
	}
	raw := &repoFS{RawFileSystem: fs.NewNodeFS(root, fsOpts), kernel: k}
	srv, err := fuse.NewServer(yieldingIf(opt.Yield, raw), mp, &fsOpts.MountOptions)
	if err != nil {
		hgFile.Close()
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	closeFiles := func() {
		root.views.close()
		hgFile.Close()
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		// The kernel mount exists and Serve runs: unmount, as Mount
		// does, then close the views and .hg. Once Unmount returns no
		// request is in flight; if it fails, the files stay open until
		// the mount is gone, as for a mount that was served. WaitMount
		// fails only if its poll-hack open of the fresh mount fails, and
		// go-fuse answers that lookup and open itself (not repoFS), so
		// no test provokes the failure through a real mount.
		if srv.Unmount() == nil {
			closeFiles()
		} else {
			go func() {
				srv.Wait()
				closeFiles()
			}()
		}
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	primeNoOpen(k, mp)
	s := &Server{srv: srv, mountpoint: mp, done: make(chan struct{})}
	go func() {
		srv.Wait()
		closeFiles()
		close(s.done)
	}()
	return s, nil
}

// repoFS is go-fuse's node bridge with files opened without OPEN where
// the kernel allows (noopen_linux.go): OPEN is declined and the FLUSH of
// a file without a handle answered ENOSYS (no_flush), for every node
// kind alike; each node kind reads without a handle (loopNode.Read,
// viewNode.Read, statsNode.Read).
type repoFS struct {
	fuse.RawFileSystem
	kernel *kernel
}

func (r *repoFS) Init(s *fuse.Server) {
	r.kernel.srv.Store(s)
	r.RawFileSystem.Init(s)
}

func (r *repoFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if r.kernel.noOpen() {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Open(cancel, in, out)
}

func (r *repoFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if in.Fh == 0 {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Flush(cancel, in)
}

// repoRoot is the root of a repository view: ".hg" (the loopback) and the
// unlisted control directory.
type repoRoot struct {
	fs.Inode
	hg    fs.InodeEmbedder
	info  func() any
	views *views // .hgfs/ beside stats (views_linux.go)
}

var (
	_ fs.NodeOnAdder   = (*repoRoot)(nil)
	_ fs.NodeReaddirer = (*repoRoot)(nil)
	_ fs.NodeGetattrer = (*repoRoot)(nil)
)

func (r *repoRoot) OnAdd(ctx context.Context) {
	r.AddChild(".hg", r.NewPersistentInode(ctx, r.hg, fs.StableAttr{Mode: syscall.S_IFDIR}), false)
	stats := r.NewPersistentInode(ctx, &statsNode{info: r.info, served: &r.views.served}, fs.StableAttr{Mode: syscall.S_IFREG})
	ctl := r.NewPersistentInode(ctx, &viewNode{w: r.views, stats: stats}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: repoViewRootIno})
	ctl.AddChild("stats", stats, false)
	r.AddChild(VirtualDirName, ctl, false)
}

// Readdir lists only .hg, keeping the control directory out of listings.
func (r *repoRoot) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return fs.NewListDirStream([]fuse.DirEntry{{Name: ".hg", Mode: syscall.S_IFDIR}}), 0
}

func (r *repoRoot) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 3
	out.Uid, out.Gid = ownerUID, ownerGID
	return 0
}

// statsNode is MOUNTPOINT/.hgfs/stats of a repository view. Its
// attributes report the content generated for them, which a READ
// without a handle serves (servedFiles).
type statsNode struct {
	fs.Inode
	info   func() any
	served *servedFiles
}

var (
	_ fs.NodeOpener    = (*statsNode)(nil)
	_ fs.NodeGetattrer = (*statsNode)(nil)
	_ fs.NodeReader    = (*statsNode)(nil)
)

func (n *statsNode) generate() (*served, syscall.Errno) {
	data, err := json.MarshalIndent(n.info(), "", "  ")
	if err != nil {
		return nil, syscall.EIO
	}
	return n.served.update(n.StableAttr().Ino, append(data, '\n')), 0
}

func (n *statsNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	sv, errno := n.generate()
	if errno != 0 {
		return errno
	}
	out.Mode = syscall.S_IFREG | 0o444
	out.Uid, out.Gid = ownerUID, ownerGID
	out.Size = uint64(len(sv.data))
	out.SetTimes(&sv.mtime, &sv.mtime, &sv.mtime)
	out.SetTimeout(movingTimeout)
	return 0
}

func (n *statsNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	sv, errno := n.generate()
	if errno != 0 {
		return nil, 0, errno
	}
	return bytesHandle(sv.data), fuse.FOPEN_DIRECT_IO, 0
}

func (n *statsNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(fs.FileReader).Read(ctx, dest, off)
	}
	sv := n.served.get(n.StableAttr().Ino)
	if sv == nil {
		var errno syscall.Errno
		if sv, errno = n.generate(); errno != 0 {
			return nil, errno
		}
	}
	return readAt(sv.data, uint64(off), uint32(len(dest))), 0
}

type bytesHandle []byte

var _ fs.FileReader = bytesHandle(nil)

func (b bytesHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(b)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(b)))
	return fuse.ReadResultData(b[off:end]), 0
}
