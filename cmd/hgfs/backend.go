package main

import (
	"errors"
	"runtime"
	"strings"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
)

// The FUSE adapters `hgfs mount --backend` and `hgfs clone --mount
// --backend` choose from.
const (
	backendGoFuse  = "gofuse"  // go-fuse's raw protocol: Linux only, no cgo
	backendCgofuse = "cgofuse" // cgofuse: WinFsp on Windows (no cgo), libfuse3 on Linux with -tags cgofuse,fuse3
)

// mounted is a live mount, whichever backend serves it.
type mounted interface {
	Mountpoint() string
	Unmount() error
	LazyUnmount() error
	Wait()
	Done() <-chan struct{}
}

var (
	_ mounted = (*mount.Server)(nil)
	_ mounted = (*mount.CgofuseServer)(nil)
)

// defaultBackend is the adapter this platform mounts with unless told.
func defaultBackend() string {
	if runtime.GOOS == "windows" {
		return backendCgofuse
	}
	return backendGoFuse
}

// mountBackend mounts fsys at mp through the named backend ("" for the
// platform's default). Errors are aborts that say what this build or
// machine lacks and how to get it.
func mountBackend(name string, fsys *fsnode.FS, mp string, opt mount.Options) (mounted, error) {
	if name == "" {
		name = defaultBackend()
	}
	switch name {
	case backendGoFuse:
		if runtime.GOOS != "linux" {
			e := abortf("mounting with go-fuse is not available on %s", runtime.GOOS)
			if mount.CgofuseAvailable {
				return nil, e.withHint("use --backend %s", backendCgofuse)
			}
			return nil, e.withHint("this hgfs build cannot mount on %s; clone, serve, verify and the inspection commands work", runtime.GOOS)
		}
		srv, err := mount.Mount(fsys, mp, opt)
		if err != nil {
			return nil, abortf("%v", err)
		}
		return srv, nil
	case backendCgofuse:
		srv, err := mount.MountCgofuse(fsys, mp, opt)
		switch {
		case errors.Is(err, mount.ErrCgofuseNotBuilt):
			e := abortf("this hgfs build has no cgofuse backend")
			if runtime.GOOS == "linux" {
				return nil, e.withHint("rebuild with 'go build -tags cgofuse,fuse3' (needs cgo and libfuse3-dev), or use --backend %s", backendGoFuse)
			}
			return nil, e.withHint("mounting is not available in this build on %s", runtime.GOOS)
		case errors.Is(err, mount.ErrFuseLibraryMissing):
			if runtime.GOOS == "windows" {
				return nil, abortf("WinFsp is not installed").withHint("get it from https://winfsp.dev/rel/ and run the command again")
			}
			return nil, abortf("%v", err)
		case err != nil:
			return nil, abortf("%v", err)
		}
		return srv, nil
	}
	return nil, abortf("unknown mount backend %q", name).withHint("choose one of: %s", strings.Join([]string{backendGoFuse, backendCgofuse}, ", "))
}
