//go:build linux

package mount

import (
	"context"
	"io"
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
)

// loopNode is a node of a repository mount's .hg: go-fuse's loopback,
// plus reading without a handle (no_open, noopen_linux.go). Such a READ
// opens the file beneath the .hg directory for the one request; openat2
// with RESOLVE_BENEATH keeps a symlink swapped in since the LOOKUP from
// leading anywhere else, as the loopback's own open does.
type loopNode struct {
	*gofs.LoopbackNode
	dir *os.File // the repository's .hg, shared by every node
}

var (
	_ gofs.NodeReader      = (*loopNode)(nil)
	_ gofs.NodeWrapChilder = (*loopNode)(nil)
)

// newLoopRoot is go-fuse's loopback root of hgDir, made of loopNodes;
// the returned directory is closed once the mount is gone.
func newLoopRoot(hgDir string) (gofs.InodeEmbedder, *os.File, error) {
	dir, err := os.Open(hgDir)
	if err != nil {
		return nil, nil, err
	}
	root, err := gofs.NewLoopbackRoot(hgDir)
	if err != nil {
		dir.Close()
		return nil, nil, err
	}
	return &loopNode{LoopbackNode: root.(*gofs.LoopbackNode), dir: dir}, dir, nil
}

// WrapChild makes every node the loopback creates below a loopNode.
func (n *loopNode) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &loopNode{LoopbackNode: ops.(*gofs.LoopbackNode), dir: n.dir}
}

func (n *loopNode) Read(ctx context.Context, f gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(gofs.FileReader).Read(ctx, dest, off)
	}
	rel := n.Path(n.RootData.RootNode.EmbeddedInode())
	fd, err := sysio.OpenBeneath(int(n.dir.Fd()), rel)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	defer unix.Close(fd)
	k, err := sysio.PreadFull(fd, dest, off)
	if err != nil && err != io.EOF {
		return nil, gofs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}
