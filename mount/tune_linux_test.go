//go:build linux

package mount

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"

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
	src, o := viewFixture(t)
	for _, yield := range []bool{true, false} {
		t.Run(fmt.Sprintf("yield=%v", yield), func(t *testing.T) {
			checkViews(t, mountRepo(t, src, Options{Yield: yield}), o)
		})
	}
}

// TestMountTuneLeavesProcess: Mount and MountRepo, as library calls,
// change nothing process-wide: GOMAXPROCS and the threads' scheduling
// policies are the caller's (the hgfs daemon applies HGFS_TUNE's procs
// and schedbatch itself).
func TestMountTuneLeavesProcess(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	before, _ := testenv.BatchThreads(t, 0)
	m := newMountWith(t, func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		opt.Yield = true
		return Mount(fsys, mp, opt)
	})
	writeFile(t, m.path("f"), "x")
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after Mount, was %d", got, procs)
	}
	if got, _ := testenv.BatchThreads(t, 0); got > before {
		t.Errorf("%d threads in SCHED_BATCH after Mount, %d before", got, before)
	}
}
