package testenv

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// MappedRss is the resident size of process pid's mappings of the file
// path, summed over its mappings in /proc/PID/smaps ("self" for this
// process).
func MappedRss(t testing.TB, pid, path string) int64 {
	t.Helper()
	fh, err := os.Open(fmt.Sprintf("/proc/%s/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") { // a mapping's first line
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatalf("/proc/%s/smaps: %q", pid, sc.Text())
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
