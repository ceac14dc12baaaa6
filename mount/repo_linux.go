//go:build linux

package mount

import (
	"context"
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
	root := &repoRoot{hg: loop, ctl: newControl(info, repoViewRootIno, repoViews(repo, repoViewRootIno))}
	timeout := time.Second
	fsOpts := &fs.Options{
		MountOptions: *mountOptions(opt),
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
	}
	raw := &repoFS{RawFileSystem: fs.NewNodeFS(root, fsOpts), kernel: k}
	srv, err := newServer(raw, mp, &fsOpts.MountOptions, opt)
	if err != nil {
		hgFile.Close()
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	closeFiles := func() {
		root.ctl.close()
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
// viewNode.Read).
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
	hg  fs.InodeEmbedder
	ctl *control // .hgfs (viewNode)
}

var (
	_ fs.NodeOnAdder   = (*repoRoot)(nil)
	_ fs.NodeReaddirer = (*repoRoot)(nil)
	_ fs.NodeGetattrer = (*repoRoot)(nil)
)

func (r *repoRoot) OnAdd(ctx context.Context) {
	r.AddChild(".hg", r.NewPersistentInode(ctx, r.hg, fs.StableAttr{Mode: syscall.S_IFDIR}), false)
	ctl := r.NewPersistentInode(ctx, &viewNode{c: r.ctl}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: r.ctl.dirIno})
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
