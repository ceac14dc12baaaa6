package testenv

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// BatchThreads counts the threads of process pid (0: this one) whose
// scheduling policy is SCHED_BATCH, and all its threads (those that
// exit while they are listed are not counted).
func BatchThreads(t testing.TB, pid int) (batch, all int) {
	t.Helper()
	dir := "/proc/self/task"
	if pid != 0 {
		dir = fmt.Sprintf("/proc/%d/task", pid)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // exited
		}
		all++
		if attr.Policy == unix.SCHED_BATCH {
			batch++
		}
	}
	return batch, all
}
