package main

// The virtual working copy of a mounted clone (fsnode's virtual.go,
// mount's virtualwc.go): checkouts into a mount's cache name each
// regular file's revision instead of writing its bytes, unless
// [hgfs] virtual-checkout is off.

import (
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/worktree"
)

// virtualCheckout reports whether [hgfs] virtual-checkout is on.
func virtualCheckout(c *cmdContext) (bool, error) {
	on, err := c.ui.cfg.GetBool(config.HgfsVirtualCheckout)
	if err != nil {
		return false, abortf("%v", err)
	}
	return on, nil
}

// virtualSink is the cache's sink as a worktree.VirtualSink: a file's
// reference is its manifest path and file node.
type virtualSink struct{ *fsnode.Sink }

var _ worktree.VirtualSink = virtualSink{}

func (s virtualSink) CreateVirtual(name string, size int64, perm uint32, mtime time.Time, node revlog.Node) error {
	return s.Sink.CreateVirtual(name, size, perm, mtime, fsnode.VirtualRef{Node: node, Path: name})
}
