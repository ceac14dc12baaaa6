//go:build linux

package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// TestMountYield: a cache mount serves files alike with Options.Yield
// (what the hgfs daemon sets) and without it (HGFS_TUNE=-yield): files
// written, read back, listed, renamed and removed, enough requests for
// the yielding count to go round many times.
func TestMountYield(t *testing.T) {
	for _, yield := range []bool{true, false} {
		t.Run(fmt.Sprintf("yield=%v", yield), func(t *testing.T) {
			m := newMountWith(t, func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
				opt.Yield = yield
				return Mount(fsys, mp, opt)
			})
			if err := os.Mkdir(m.path("d"), 0o755); err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := range 100 {
				name := fmt.Sprintf("f%03d", i)
				writeFile(t, m.path("d", name), name+" content\n")
				want = append(want, name)
			}
			for _, name := range want {
				if got := readFile(t, m.path("d", name)); got != name+" content\n" {
					t.Errorf("%s reads %q", name, got)
				}
			}
			ents, err := os.ReadDir(m.path("d"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, want) {
				t.Errorf("listing: %q, want %q", got, want)
			}
			if err := os.Rename(m.path("d", "f000"), m.path("moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(m.path("d", "f001")); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, m.path("moved")); got != "f000 content\n" {
				t.Errorf("moved reads %q", got)
			}
			m.remount(t)
			if got := readFile(t, m.path("d", "f099")); got != "f099 content\n" {
				t.Errorf("after remount f099 reads %q", got)
			}
		})
	}
}

// TestMountRepoYield: a repository mount shows the same views with and
// without Options.Yield.
func TestMountRepoYield(t *testing.T) {
	testenv.RequireFUSE(t)
	testenv.HgPath(t)
	src := filepath.Join(t.TempDir(), "src")
	makeViewRepo(t, src)
	o := newViewOracle(t, src)
	for _, yield := range []bool{true, false} {
		t.Run(fmt.Sprintf("yield=%v", yield), func(t *testing.T) {
			mp := t.TempDir()
			srv, err := MountRepo(src, mp, Options{Yield: yield})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := srv.Unmount(); err != nil {
					t.Error(err)
				}
			}()
			checkViews(t, mp, o)
		})
	}
}

// TestMountTuneLeavesProcess: Mount and MountRepo, as library calls,
// change nothing process-wide: GOMAXPROCS and the threads' scheduling
// policies are the caller's (the hgfs daemon applies HGFS_TUNE's procs
// and schedbatch itself).
func TestMountTuneLeavesProcess(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	batch := func() int {
		n := 0
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if attr, err := unix.SchedGetAttr(tid, 0); err == nil && attr.Policy == unix.SCHED_BATCH {
				n++
			}
		}
		return n
	}
	before := batch()
	m := newMountWith(t, func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		opt.Yield = true
		return Mount(fsys, mp, opt)
	})
	writeFile(t, m.path("f"), "x")
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after Mount, was %d", got, procs)
	}
	if got := batch(); got > before {
		t.Errorf("%d threads in SCHED_BATCH after Mount, %d before", got, before)
	}
}
