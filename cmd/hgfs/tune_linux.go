//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// batchScheduling puts every thread of this process in the SCHED_BATCH
// policy (same priority, same share of the CPU as SCHED_OTHER), so that
// a daemon thread woken by a request never preempts the task that is
// running on that CPU: the kernel just queues it. The go-fuse mount
// daemon asks for it once mounted (tuneMountDaemon) unless HGFS_TUNE has
// -schedbatch.
//
// Why: close(2) on the mount sends RELEASE asynchronously and returns.
// Under SCHED_OTHER the kernel wakes a daemon thread for it, often on
// the closing process's own CPU, and preempts the closer in favour of
// the daemon, so close() takes as long as the daemon's RELEASE (the p99
// went from ~100-200 µs to ~80 µs on the bench machine). A synchronous
// request loses nothing: its caller sleeps until the answer, so the CPU
// it leaves is free for the daemon at once.
//
// Threads the Go runtime starts later inherit the policy from the thread
// that creates them. A thread that appears while the threads are listed
// is caught by the next pass; the passes stop when one changes nothing.
// Changing between SCHED_OTHER and SCHED_BATCH needs no privilege.
func batchScheduling() error {
	for range 5 {
		changed, err := batchPass()
		if err != nil || !changed {
			return err
		}
	}
	return nil
}

// batchPass moves the threads not yet in SCHED_BATCH; it reports whether
// it moved any.
func batchPass() (changed bool, err error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false, fmt.Errorf("batch scheduling: %w", err)
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if errors.Is(err, syscall.ESRCH) {
			continue // the thread exited
		}
		if err != nil {
			return changed, fmt.Errorf("batch scheduling: thread %d: %w", tid, err)
		}
		if attr.Policy == unix.SCHED_BATCH {
			continue
		}
		if attr.Policy != unix.SCHED_NORMAL {
			continue // someone chose a policy on purpose (chrt): keep it
		}
		attr.Policy = unix.SCHED_BATCH
		attr.Flags = 0
		if err := unix.SchedSetAttr(tid, attr, 0); err != nil && !errors.Is(err, syscall.ESRCH) {
			return changed, fmt.Errorf("batch scheduling: thread %d: %w", tid, err)
		}
		changed = true
	}
	return changed, nil
}
