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
// daemon asks for it once mounted (tuneMountDaemon) only when HGFS_TUNE
// has schedbatch: it is off by default.
//
// What it was for: close(2) on the mount sent RELEASE asynchronously
// and returned. Under SCHED_OTHER the kernel woke a daemon thread for
// it, often on the closing process's own CPU, and preempted the closer
// in favour of the daemon, so close() took as long as the daemon's
// RELEASE (the p99 went from ~100-200 µs to ~80 µs on the bench
// machine). Since the mount declines OPEN (noopen_linux.go) the kernel
// sends no RELEASE, and close() p99 is 26-39 µs either way.
//
// Why not by default: a synchronous request's caller sleeps until the
// answer, but the daemon's threads wake each other on the way (fsync:
// the handler wakes the committer, which wakes the handler once the
// data files and the index are synced), and on a busy machine each
// wake-up of a SCHED_BATCH thread waits for the running task's slice.
// Measured on the bench machine (2 CPUs, alternated runs), msync(MS_SYNC)
// after each store in a mapping: 200 of them with two busy loops
// running, 1.9-2.6 s with SCHED_BATCH against 1.0-1.2 s without (cgofuse,
// whose daemon never used it, 0.7-1.4 s); 300 of them with the machine
// at a load of 10, 2.6-3.9 s against 1.2-1.5 s (FSYNC p50 6.9 ms against
// 1.8 ms through cgofuse). On an idle machine, and for an fsx-like mix
// whose msyncs do not wait (as fsx's), the runs varied more than they
// differed. This is what made mmap with msync through the go-fuse mount
// look several times slower than through cgofuse (issue 21).
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
