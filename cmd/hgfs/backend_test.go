package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

func TestMountBackendErrors(t *testing.T) {
	fsys, err := fsnode.Create(t.TempDir(), fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	_, err = mountBackend("nfs", fsys, t.TempDir(), mount.Options{})
	var ae *abortError
	if !errors.As(err, &ae) || !strings.Contains(ae.msg, `unknown mount backend "nfs"`) || !strings.Contains(ae.hint, "gofuse, cgofuse") {
		t.Fatalf("unknown backend: %#v", err)
	}
	if mount.CgofuseAvailable {
		return
	}
	_, err = mountBackend(backendCgofuse, fsys, t.TempDir(), mount.Options{})
	if !errors.As(err, &ae) || !strings.Contains(ae.msg, "no cgofuse backend") {
		t.Fatalf("cgofuse in a build without it: %#v", err)
	}
	if runtime.GOOS == "linux" && !strings.Contains(ae.hint, "-tags cgofuse,fuse3") {
		t.Errorf("hint %q does not say how to build it", ae.hint)
	}
}

// TestMountBackends mounts a cache through each backend this build has
// and reads back through the mount what was written through it.
func TestMountBackends(t *testing.T) {
	backends := []string{backendGoFuse}
	if mount.CgofuseAvailable {
		backends = append(backends, backendCgofuse)
	}
	// libfuse's fuse_main (cgofuse on Linux) changes the process's working
	// directory to "/" even in the foreground; MountCgofuse puts it back.
	// t.Chdir keeps later tests safe should that ever regress.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	for _, name := range backends {
		t.Run(name, func(t *testing.T) {
			testenv.RequireFUSE(t)
			fsys, err := fsnode.Create(t.TempDir(), fsnode.Options{})
			if err != nil {
				t.Fatal(err)
			}
			abandoned := false // the server would not stop: leave it fsys
			defer func() {
				if !abandoned {
					fsys.Close()
				}
			}()
			mp := t.TempDir()
			srv, err := mountBackend(name, fsys, mp, mount.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if now, err := os.Getwd(); err != nil || now != wd {
				t.Errorf("mounting moved the process to %q (%v), want %q", now, err, wd)
			}
			p := filepath.Join(mp, "f")
			werr := os.WriteFile(p, []byte(name), 0o644)
			data, rerr := os.ReadFile(p)
			var uerr error
			if !testenv.Within(t, time.Minute, "unmounting "+mp, func() { uerr = srv.Unmount() }) {
				abandoned = true
				t.FailNow()
			}
			if uerr != nil {
				// Leave no mount behind for the tests that follow.
				if err := srv.LazyUnmount(); err == nil {
					select {
					case <-srv.Done():
					case <-time.After(time.Minute):
						abandoned = true
					}
				}
				t.Fatal(uerr)
			}
			if werr != nil || rerr != nil || string(data) != name {
				t.Fatalf("write %v, read %q %v", werr, data, rerr)
			}
			got, err := fsys.ReadFile(t.Context(), "f")
			if err != nil || string(got) != name {
				t.Fatalf("after unmount the cache holds %q, %v", got, err)
			}
		})
	}
}
