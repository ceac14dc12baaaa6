package mount

import "sync/atomic"

// noPools turns off the reuse of a daemon update's buffers
// (update_buffers_linux.go).
var noPools atomic.Bool

// SetPooling switches the reuse of a daemon update's buffers on or off
// for the process (HGFS_TUNE's bufpool, as revlog.SetPooling and
// worktree.SetPooling).
func SetPooling(on bool) { noPools.Store(!on) }
