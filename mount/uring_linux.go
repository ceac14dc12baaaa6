package mount

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/internal/fuseuring"
)

// FuseServer is a mount's go-fuse server and, when its requests come
// over io_uring, the queues that answer them.
type FuseServer struct {
	*fuse.Server
	uring *fuseuring.Server // nil: every request comes on /dev/fuse
}

// newServerMu keeps the mounts this process makes from overlapping, so
// that the /dev/fuse descriptor fuse.NewServer opens is the one new
// descriptor on /dev/fuse (go-fuse keeps it to itself).
var newServerMu sync.Mutex

// newServer is fuse.NewServer for raw (yielding as opt says) at mp with
// mo, INIT negotiated, and with opt.URing, where the kernel offers FUSE
// over io_uring (fuseuring.Available), its requests served over io_uring
// by raw itself from then on; go-fuse's server still carries FORGET,
// INTERRUPT and the notifications. A connection whose queues could not
// be registered is unmounted: the kernel holds its requests until they
// are.
func newServer(raw fuse.RawFileSystem, mp string, mo *fuse.MountOptions, opt Options) (*FuseServer, error) {
	if !opt.URing || !fuseuring.Available() {
		srv, err := fuse.NewServer(yieldingIf(opt.Yield, raw), mp, mo)
		return &FuseServer{Server: srv}, err
	}
	mo.ExtraCapabilities |= fuse.CAP_OVER_IO_URING
	newServerMu.Lock()
	before, err := devFuseFDs()
	if err != nil {
		newServerMu.Unlock()
		return nil, err
	}
	srv, err := fuse.NewServer(yieldingIf(opt.Yield, raw), mp, mo)
	var after map[int]bool
	if err == nil {
		after, err = devFuseFDs()
	}
	newServerMu.Unlock()
	if err != nil {
		if srv != nil {
			abandon(srv, mp)
		}
		return nil, err
	}
	ks := srv.KernelSettings()
	if ks.Flags64()&fuse.CAP_OVER_IO_URING == 0 {
		// Switched off between the check and the mount.
		return &FuseServer{Server: srv}, nil
	}
	fd := -1
	for f := range after {
		if !before[f] {
			if fd >= 0 {
				fd = -2
				break
			}
			fd = f
		}
	}
	if fd < 0 {
		abandon(srv, mp)
		return nil, errors.New("fuse over io_uring: cannot tell which /dev/fuse descriptor the mount has")
	}
	us, err := fuseuring.Start(fd, raw, mo, ks, mo.MaxWrite)
	if err != nil {
		abandon(srv, mp)
		if us != nil {
			_ = us.Wait()
		}
		return nil, fmt.Errorf("fuse over io_uring: %w", err)
	}
	return &FuseServer{Server: srv, uring: us}, nil
}

// abandon unmounts a mount newServer cannot serve.
func abandon(srv *fuse.Server, mp string) {
	go srv.Serve()
	if srv.Unmount() != nil {
		_ = UnmountPath(mp, true)
	}
}

// URingRequests is how many requests came over io_uring (0 when every
// request comes on /dev/fuse).
func (s *FuseServer) URingRequests() uint64 {
	if s.uring == nil {
		return 0
	}
	return s.uring.Served()
}

// Wait waits for the go-fuse server's loop and io_uring's queues to end,
// once the connection is gone: no request is being answered after it.
func (s *FuseServer) Wait() {
	s.Server.Wait()
	if s.uring != nil {
		_ = s.uring.Wait()
	}
}

// devFuseFDs is the set of this process's descriptors open on /dev/fuse.
func devFuseFDs() (map[int]bool, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	fds := map[int]bool{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "/dev/fuse" {
			fds[n] = true
		}
	}
	return fds, nil
}
