//go:build !linux

package mount

import (
	"fmt"
	"runtime"

	"github.com/hgfs/hgfs/fsnode"
)

// Server is a live mount; on this platform there never is one.
type Server struct{}

// Mount reports that this platform has no adapter yet (the WinFsp one
// comes with cgofuse).
func Mount(fsys *fsnode.FS, mountpoint string, opt Options) (*Server, error) {
	return nil, fmt.Errorf("mount %s: %w (%s)", mountpoint, ErrUnsupported, runtime.GOOS)
}

// MountRepo reports that this platform has no adapter yet.
func MountRepo(repo, mountpoint string, opt Options) (*Server, error) {
	return nil, fmt.Errorf("mount %s: %w (%s)", mountpoint, ErrUnsupported, runtime.GOOS)
}

// UnmountPath reports that this platform has no adapter yet.
func UnmountPath(mountpoint string, lazy bool) error {
	return fmt.Errorf("unmount %s: %w (%s)", mountpoint, ErrUnsupported, runtime.GOOS)
}

func (s *Server) Mountpoint() string    { return "" }
func (s *Server) Unmount() error        { return ErrUnsupported }
func (s *Server) LazyUnmount() error    { return ErrUnsupported }
func (s *Server) Wait()                 {}
func (s *Server) Done() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// Mounted is one hgfs mount in the mount table.
type Mounted struct {
	Source, Mountpoint string
}

// Mounts lists the hgfs mounts: none can be listed on this platform.
func Mounts() ([]Mounted, error) { return nil, nil }
