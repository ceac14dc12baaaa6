//go:build !((linux && cgofuse) || windows)

package mount

import (
	"fmt"

	"github.com/hgfs/hgfs/fsnode"
)

// CgofuseAvailable reports whether this build has the cgofuse adapter
// (always on Windows; on Linux with -tags cgofuse,fuse3).
const CgofuseAvailable = false

// CgofuseServer is a live cgofuse mount; this build never has one.
type CgofuseServer struct{}

// MountCgofuse reports that this build has no cgofuse adapter.
func MountCgofuse(fsys *fsnode.FS, mountpoint string, opt Options) (*CgofuseServer, error) {
	return nil, fmt.Errorf("mount %s: %w", mountpoint, ErrCgofuseNotBuilt)
}

func (s *CgofuseServer) Mountpoint() string    { return "" }
func (s *CgofuseServer) Unmount() error        { return ErrCgofuseNotBuilt }
func (s *CgofuseServer) LazyUnmount() error    { return ErrCgofuseNotBuilt }
func (s *CgofuseServer) Wait()                 {}
func (s *CgofuseServer) Done() <-chan struct{} { c := make(chan struct{}); close(c); return c }
