package hugeheap

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestReserve checks that heap memory allocated after Reserve lies in a
// mapping the kernel marks for huge pages (VmFlags "hg" in smaps) where
// the kernel only gives them on request, and that Reserve leaves the heap
// alone where it does not (THP "always" or "never").
func TestReserve(t *testing.T) {
	advised := thpAdvised()
	if advisedAt(t, heapAddr()) {
		t.Fatal("heap already advised before Reserve: the test cannot tell")
	}
	Reserve(64 << 20)
	// Fill the heap's low addresses left over from before Reserve so that
	// a new span has to come from the reserved block.
	var keep [][]byte
	hits := 0
	for range 64 {
		b := make([]byte, 256<<10)
		keep = append(keep, b)
		if advisedAt(t, uintptr(unsafe.Pointer(&b[0]))) {
			hits++
		}
	}
	switch {
	case advised && hits == 0:
		t.Errorf("THP in madvise mode: none of 64 allocations after Reserve is in a huge-page mapping")
	case !advised && hits > 0:
		t.Errorf("THP not in madvise mode: %d of 64 allocations after Reserve are in a mapping advised for huge pages", hits)
	}
	runtime.KeepAlive(keep)
}

func heapAddr() uintptr {
	b := make([]byte, 256<<10)
	return uintptr(unsafe.Pointer(&b[0]))
}

// advisedAt reports whether the mapping holding addr has the "hg"
// (MADV_HUGEPAGE) flag.
func advisedAt(t *testing.T, addr uintptr) bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		// A mapping's header starts with its range, "lo-hi"; its
		// attribute lines start with "Name:".
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in {
			if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				for _, fl := range strings.Fields(rest) {
					if fl == "hg" {
						return true
					}
				}
				return false
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}
