//go:build linux

package mount

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// Server is a live mount.
type Server struct {
	srv        *FuseServer
	fsys       *fsnode.FS // nil for a repository view
	mountpoint string
	done       chan struct{}
	unmountMu  sync.Mutex
}

// Mount mounts fsys at mountpoint and returns once the kernel answers
// requests on it. The caller keeps ownership of fsys: after Wait returns
// (the mount is gone, whoever unmounted it) it must Close fsys, which
// drains what the last requests left pending.
//
// Mount changes nothing process-wide (GOMAXPROCS, the threads'
// scheduling policy): those tricks are the serving program's choice
// (cmd/hgfs, HGFS_TUNE; see internal/tune). go-fuse sizes its reader
// pool from GOMAXPROCS as Mount makes the server (ReaderPool).
func Mount(fsys *fsnode.FS, mountpoint string, opt Options) (*Server, error) {
	mp, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, err
	}
	s := &Server{fsys: fsys, mountpoint: mp, done: make(chan struct{})}
	var raw *rawFS
	// served is the server once made; requests over io_uring may come
	// before Mount has it.
	var served atomic.Pointer[FuseServer]
	self := Info{Pid: os.Getpid(), Mountpoint: mp, Source: opt.FsName, Kind: "cache", ReadOnly: opt.ReadOnly, Virtual: true}
	raw = newRawFS(fsys, func() any {
		st := fsys.Stats()
		info := self
		info.Updates, info.UpdateFullChecks, info.Stats = raw.updates.Load(), raw.fullChecks.Load(), &st
		if srv := served.Load(); srv != nil {
			info.URingRequests = srv.URingRequests()
		}
		return &info
	})
	if raw.infoXattr, err = json.Marshal(&self); err != nil {
		return nil, err
	}
	srv, err := NewCacheServer(raw, mp, opt)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	s.srv = srv
	served.Store(srv)
	go func() {
		srv.Serve()
		srv.Wait()
		close(s.done)
	}()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	primeNoOpen(raw.kernel, mp)
	return s, nil
}

// NewCacheServer is fuse.NewServer for raw at mountpoint mp with what a
// cache mount of opt asks of the kernel: its mount options, with
// opt.Yield the yielding request loop, and with opt.URing requests over
// io_uring where the kernel offers them (newServer). Mount serves fsnode with it; the
// bench's FUSE floor (bench/fusefloor.go), a file system that keeps
// everything in memory and does nothing else, does too, so that the
// kernel sends the floor what it sends hgfs.
func NewCacheServer(raw fuse.RawFileSystem, mp string, opt Options) (*FuseServer, error) {
	mo := mountOptions(opt)
	cacheMountOptions(mo)
	if rootOnly(opt) {
		// See rootOnly: the kernel's checks could only ever pass, and
		// each one after a directory changed costs a GETATTR.
		mo.Options = slices.DeleteFunc(mo.Options, func(o string) bool { return o == "default_permissions" })
	}
	return newServer(raw, mp, mo, opt)
}

// rootOnly reports whether Options.RootPermissions applies. A daemon
// running as root without allow_other lets in only processes whose fsuid
// and fsgid are 0, and their permission checks always pass (root
// overrides modes and ownership) except for executing a file without any
// execute bit, which the kernel checks itself even without
// default_permissions, and access(2) and chdir(2), which it then asks the
// daemon (rawFS.Access). With default_permissions the kernel refreshes a
// directory's attributes (a GETATTR round trip) before the next lookup in
// it after an entry in it changed: one more request for every file tar
// or hg creates. The one difference: a root process stripped of
// CAP_DAC_OVERRIDE is no longer held to the modes.
func rootOnly(opt Options) bool {
	return opt.RootPermissions && !opt.AllowOther && os.Geteuid() == 0
}

// mountOptions are the kernel-facing choices shared by both mount kinds.
func mountOptions(opt Options) *fuse.MountOptions {
	mo := &fuse.MountOptions{
		// A panicking handler answers EIO, is logged in one line and
		// the mount keeps serving (recover.go).
		PanicHandler: func(r any) fuse.Status {
			handlerPanic(r)
			return fuse.EIO
		},
		AllowOther: opt.AllowOther,
		FsName:     opt.FsName,
		Name:       "hgfs",
		Debug:      opt.Debug,
		// The kernel checks permissions from the modes we report; without
		// allow_other only the mounting user gets in at all.
		Options: []string{"default_permissions"},
		// Repository views have no extended attributes; ENOSYS once
		// makes the kernel answer EOPNOTSUPP itself instead of asking on
		// every cp -a / tar. Cache mounts store them
		// (cacheMountOptions).
		DisableXAttrs: true,
		MaxWrite:      1 << 20,
		// Every READ reply is bytes in memory (fsnode reads the data
		// files itself; views are generated), which go-fuse can only
		// send through splice(2) after first writing the header into a
		// pipe: it tries, gives up on a result without a descriptor,
		// throws the pipe away and sends the reply with writev. That
		// detour was a third of the daemon's CPU in a cat of 20,000
		// uncached files. writev alone does the same in one call.
		DisableSplice: true,
		// EnableLocks stays off: the kernel then implements fcntl and
		// flock locks locally, which is exact for a single-host mount.
	}
	if opt.ReadOnly {
		mo.Options = append(mo.Options, "ro")
	}
	if mo.FsName == "" {
		mo.FsName = "hgfs"
	}
	return mo
}

// cacheMountOptions adds what a cache mount offers beyond a repository
// view: extended attributes (fsnode stores them), and, for a daemon
// running as root, device nodes that work (the "dev" mount option;
// without it the kernel refuses to open any device on the mount, and
// only root may ask for it). POSIX ACLs stay off (go-fuse's EnableAcl):
// system.posix_acl_* are stored and returned as the bytes the kernel
// passes, so getfacl, cp -a and rsync -X carry them, but the kernel does
// not enforce them (see doc.go, Extended attributes).
//
// With attributes comes FUSE_HANDLE_KILLPRIV_V2, which go-fuse asks
// for only if the kernel offers it (Linux 5.12 and later). Without it
// the kernel asks for security.capability before every write(2) to a
// FUSE file, to strip it itself: one GETXATTR round trip per write. With
// it the kernel marks the writes, truncations and chowns that must drop
// set-id bits and capabilities (WRITE_KILL_SUIDGID, FATTR_KILL_SUIDGID,
// OPEN_KILL_SUIDGID), the adapter passes the mark to fsnode
// (fsnode.WithKillPriv), which clears them, and the kernel checks only
// on the first write after it fetched the file's attributes (see
// doc.go, Extended attributes).
func cacheMountOptions(mo *fuse.MountOptions) {
	mo.DisableXAttrs = false
	mo.ExtraCapabilities |= fuse.CAP_HANDLE_KILLPRIV_V2
	if os.Geteuid() == 0 {
		mo.Options = append(mo.Options, "dev")
	}
}

// Mountpoint returns the absolute mount point.
func (s *Server) Mountpoint() string { return s.mountpoint }

// Unmount drains fsys (everything written so far becomes durable), then
// unmounts and waits for the request loop to end. It fails with EBUSY
// while files on the mount are open; LazyUnmount detaches regardless. A
// drain that fails (a failed commit, a damaged index) does not keep the
// mount: waiting would not cure it; it unmounts all the same and returns
// that error, with Done closed.
func (s *Server) Unmount() error {
	s.unmountMu.Lock()
	defer s.unmountMu.Unlock()
	select {
	case <-s.done:
		return nil
	default:
	}
	var syncErr error
	if s.fsys != nil {
		if err := s.fsys.Sync(context.Background()); err != nil {
			syncErr = fmt.Errorf("unmount %s: sync: %w", s.mountpoint, err)
		}
	}
	if err := s.srv.Unmount(); err != nil {
		return errors.Join(syncErr, fmt.Errorf("unmount %s: %w", s.mountpoint, err))
	}
	<-s.done
	return syncErr
}

// LazyUnmount detaches the mount from the namespace at once (umount -l);
// requests on files still open keep being served until they are closed,
// then Wait returns.
func (s *Server) LazyUnmount() error {
	return UnmountPath(s.mountpoint, true)
}

// Wait blocks until the mount is gone: Unmount, fusermount -u by anyone,
// or the kernel aborting the connection.
func (s *Server) Wait() { <-s.done }

// Done is closed when the mount is gone.
func (s *Server) Done() <-chan struct{} { return s.done }

// URingRequests is how many requests came over io_uring (Options.URing).
func (s *Server) URingRequests() uint64 { return s.srv.URingRequests() }

// UnmountPath unmounts the FUSE mount at mountpoint with fusermount3 (or
// fusermount); lazy detaches even while files are open. The serving daemon
// notices and shuts down by itself.
func UnmountPath(mountpoint string, lazy bool) error {
	bin, err := exec.LookPath("fusermount3")
	if err != nil {
		if bin, err = exec.LookPath("fusermount"); err != nil {
			return fmt.Errorf("unmount %s: fusermount3 not found: %w", mountpoint, err)
		}
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, append(args, "--", mountpoint)...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("unmount %s: %v: %s", mountpoint, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}
