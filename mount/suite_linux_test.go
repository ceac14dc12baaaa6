//go:build linux

package mount

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/fsnode/posixtest"
	"github.com/hgfs/hgfs/internal/fuseuring"
	"github.com/hgfs/hgfs/testenv"
)

// The shared suite: one set of cases, run against every way of mounting
// a cache (as rclone's vfstest runs one suite against each VFS mode).
// A backend is added here, or by the file that builds it (cgofuse's
// tests add theirs in builds with -tags cgofuse); TestBackends runs
// every suite part on each, on a fresh mount per part.

// backend is one way to mount a cache.
type backend struct {
	name  string
	mount func(fsys *fsnode.FS, mp string, opt Options) (testServer, error)
	// noPrograms: no program may run with its working directory in the
	// mount (Options.RootPermissions says why).
	noPrograms bool
	// afterPOSIX checks the mount once the POSIX cases are done (nil:
	// nothing more).
	afterPOSIX func(t *testing.T, m *testMount)
	// lacks is what the conformance cases must expect to be missing.
	lacks posixtest.OSOptions
	// unavailable says why this machine cannot run the backend ("":
	// it can).
	unavailable func() string
}

var backends = []backend{
	{name: "gofuse", mount: func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		return Mount(fsys, mp, opt)
	}},
	// Options.RootPermissions drops default_permissions when the tests
	// run as root (elsewhere it changes nothing).
	{name: "gofuse-rootperm", noPrograms: true, mount: func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		opt.RootPermissions = true
		return Mount(fsys, mp, opt)
	}},
	// As the hgfs daemon mounts where the kernel offers FUSE over
	// io_uring: every request but FORGET and INTERRUPT comes over the
	// ring (.ci/run switches the fuse module's enable_uring on).
	{name: "gofuse-uring", noPrograms: true, mount: func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) {
		opt.RootPermissions, opt.URing = true, true
		return Mount(fsys, mp, opt)
	}, unavailable: func() string {
		if !fuseuring.Available() {
			return "the kernel does not offer FUSE over io_uring (Linux 6.14+ with " + fuseuring.ParamPath + " set to Y) or io_uring is not permitted"
		}
		return ""
	}, afterPOSIX: func(t *testing.T, m *testMount) {
		if n := m.srv.(*Server).URingRequests(); n == 0 {
			t.Errorf("no request came over io_uring")
		} else {
			t.Logf("%d requests over io_uring", n)
		}
	}},
}

// suite is the shared suite's parts, each run on its own mount.
var suite = []struct {
	name string
	run  func(t *testing.T, b backend, m *testMount)
}{
	{"Conformance", suiteConformance},
	{"POSIX", suitePOSIX},
	{"ControlDir", suiteControlDir},
	{"SpecialPersist", suiteSpecialPersist},
	{"Mmap", suiteMmap},
}

// TestBackends runs the shared suite against every backend.
func TestBackends(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.unavailable != nil {
				if why := b.unavailable(); why != "" {
					testenv.Missing(t, why)
				}
			}
			for _, part := range suite {
				t.Run(part.name, func(t *testing.T) {
					part.run(t, b, newMountWith(t, b.mount))
				})
			}
		})
	}
}

// suiteConformance runs fsnode's POSIX conformance suite through the
// kernel against the mount, each case in its own directory.
func suiteConformance(t *testing.T, b backend, m *testMount) {
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		dir := m.path(posixtest.DirName(t))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return posixtest.OSWith(dir, b.lacks)
	})
}

// suitePOSIX runs the mount's POSIX cases (posixCases), each in its own
// directory.
func suitePOSIX(t *testing.T, b backend, m *testMount) {
	for name, fn := range posixCases {
		t.Run(name, func(t *testing.T) {
			dir := m.path(name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, dir)
		})
	}
	if b.afterPOSIX != nil {
		b.afterPOSIX(t, m)
	}
}

// suiteControlDir checks MOUNTPOINT/.hgfs: found by name, never listed,
// never changeable, stats is JSON naming this process.
func suiteControlDir(t *testing.T, b backend, m *testMount) {
	writeFile(t, m.path("a"), "x")
	ents, err := os.ReadDir(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == VirtualDirName {
			t.Fatalf("%s listed in the root directory", VirtualDirName)
		}
	}
	if len(ents) != 1 || ents[0].Name() != "a" {
		t.Fatalf("root lists %v, want only a", ents)
	}
	info, err := ReadInfo(m.mp)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pid != os.Getpid() || info.Kind != "cache" || info.Source != m.cache || info.Stats == nil {
		t.Fatalf("info = %+v", info)
	}
	for _, err := range []error{
		os.WriteFile(filepath.Join(m.mp, VirtualDirName, "x"), nil, 0o644),
		os.WriteFile(StatsPath(m.mp), nil, 0o644),
		os.Mkdir(filepath.Join(m.mp, VirtualDirName), 0o755),
		os.Rename(m.path("a"), filepath.Join(m.mp, VirtualDirName)),
		os.Remove(StatsPath(m.mp)),
	} {
		if err == nil {
			t.Errorf("changing the control directory succeeded")
		}
	}
	data, err := os.ReadFile(StatsPath(m.mp))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("stats is not JSON: %v\n%s", err, data)
	}
	if !b.noPrograms {
		// A repository at the mount root does not see it either.
		testenv.Hg(t, m.mp, "init")
		if got := string(testenv.Hg(t, m.mp, "status")); got != "? a\n" {
			t.Errorf("hg status at the mount root:\n%s", got)
		}
	}
	if _, err := ReadInfo(t.TempDir()); !errors.Is(err, ErrNotMounted) {
		t.Fatalf("ReadInfo of a plain directory: %v", err)
	}
}
