package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/mount"
)

func init() {
	register(&command{
		name:     "unmount",
		aliases:  []string{"umount"},
		synopsis: "MOUNTPOINT",
		help: `unmount an hgfs mount and wait for its daemon to finish

The daemon makes everything written through the mount durable before it
exits; this command returns once it has. It fails while files on the
mount are open. A mount whose daemon has died ("transport endpoint is not
connected") is unmounted, which is all that is left to do.`,
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) != 1 {
				return &usageError{msg: "invalid arguments"}
			}
			if noDaemon {
				// Windows mounts are served in the foreground (see
				// noDaemon): the process serving one is the one to stop.
				return abortf("hgfs unmount is not supported on Windows").withHint("press Ctrl-C where 'hgfs mount' or 'hgfs clone --mount' runs; it makes everything durable and unmounts")
			}
			mp := c.abs(args[0])
			info, err := mount.ReadInfo(mp)
			if errors.Is(err, syscall.ENOTCONN) {
				// The daemon is gone (killed, crashed): the kernel's
				// mount answers nothing. Unmounting it is all there is
				// to do; what the daemon had not committed is lost, and
				// its cache recovers at its next mount.
				if err := mount.UnmountPath(mp, false); err != nil {
					if err := mount.UnmountPath(mp, true); err != nil {
						return abortf("%v", err)
					}
				}
				c.ui.status("unmounted %s: its daemon had exited\n", args[0])
				return nil
			}
			if errors.Is(err, mount.ErrNotMounted) {
				return abortf("%s is not an hgfs mount", args[0])
			}
			if err != nil {
				return abortf("%s: %v", args[0], errorsCause(err))
			}
			if err := mount.UnmountPath(mp, false); err != nil {
				return abortf("%v", err).withHint("close the files open on the mount (fuser -vm %s)", args[0])
			}
			if err := waitExit(ctx, info.Pid); err != nil {
				return abortf("waiting for the mount daemon (pid %d): %v", info.Pid, err)
			}
			return nil
		},
	})
}

// waitExit waits until process pid has exited.
func waitExit(ctx context.Context, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("bad pid %d", pid)
	}
	for delay := time.Millisecond; !mount.ProcessExited(pid); delay = min(2*delay, 100*time.Millisecond) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
	return nil
}
