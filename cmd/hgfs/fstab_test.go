//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestHelperForm(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" when not the helper form; "error: ..." for an error
	}{
		{[]string{"mount", "/c", "/m"}, ""},
		{[]string{"clone", "/src"}, ""},
		{[]string{"/c"}, ""},
		{[]string{"/c", "/m"}, "mount -- /c /m"},
		{[]string{"/c", "/m", "-o", "rw,noatime,allow_other,create,dev,suid"}, "mount --allow-other --create -- /c /m"},
		{[]string{"/c", "/m", "-oro,nonempty,log=/tmp/l,x-systemd.automount,_netdev,nofail"}, "mount --read-only --allow-non-empty --log /tmp/l -- /c /m"},
		{[]string{"/c", "/m", "-o", "config=hgfs.compact=false,backend=gofuse"}, "mount --config hgfs.compact=false --backend gofuse -- /c /m"},
		{[]string{"/c", "/m", "-o", "bogus"}, "error: mount helper: unsupported option 'bogus'"},
		{[]string{"/c", "/m", "-o", "ro=1"}, "error: mount helper: unsupported option 'ro=1'"},
		{[]string{"/c", "/m", "extra"}, `error: mount helper: unexpected argument "extra"`},
	} {
		got, ok, err := helperForm(c.args)
		var s string
		switch {
		case err != nil:
			s = "error: " + err.Error()
		case ok:
			s = strings.Join(got, " ")
		}
		if s != c.want {
			t.Errorf("helperForm(%q) = %q, want %q", c.args, s, c.want)
		}
	}
}

// TestMountFuseHelper mounts through the real mount(8) and mount.fuse3:
// "mount -t fuse BIN#CACHE MOUNTPOINT -o ..." (the helper named by path),
// and "mount -t fuse.hgfs CACHE MOUNTPOINT", as an /etc/fstab line does,
// which finds hgfs in the shell's default PATH (mount runs helpers with
// no PATH).
func TestMountFuseHelper(t *testing.T) {
	testenv.RequireFUSE(t)
	if _, err := os.Stat("/sbin/mount.fuse3"); err != nil {
		testenv.Missing(t, "mount.fuse3 (package fuse3)")
	}
	if os.Getuid() != 0 {
		testenv.Missing(t, "root (mount(8) of a fuse filesystem without an fstab entry needs it)")
	}
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	check := func(t *testing.T, cache, mp string) {
		t.Helper()
		if !testenv.IsMounted(mp) {
			t.Fatalf("%s not mounted", mp)
		}
		t.Cleanup(func() {
			if testenv.IsMounted(mp) {
				testenv.UnmountCache(t, mp)
			}
		})
		out, code := hgfsCmd(t, "stats", mp)
		if code != 0 || !strings.Contains(out, "source: "+cache+" (cache)\n") {
			t.Fatalf("stats: %d\n%s", code, out)
		}
		testenv.Hg(t, mp, "init", "r")
		testenv.UnmountCache(t, mp)
	}
	t.Run("by-path", func(t *testing.T) {
		cache, mp := filepath.Join(dir, "c1"), filepath.Join(dir, "m1")
		os.Mkdir(mp, 0o755)
		out, err := exec.Command("mount", "-t", "fuse", bin+"#"+cache, mp, "-o", "create,noatime,nofail,_netdev,x-systemd.automount").CombinedOutput()
		if err != nil {
			t.Fatalf("mount: %v\n%s", err, out)
		}
		check(t, cache, mp)
		// An unknown option fails the mount, with hgfs's message.
		out, err = exec.Command("mount", "-t", "fuse", bin+"#"+cache, mp, "-o", "bogus").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "unsupported option 'bogus'") {
			t.Errorf("mount -o bogus: %v\n%s", err, out)
		}
	})
	t.Run("fuse.hgfs", func(t *testing.T) {
		// The helper's shell looks in its default PATH.
		path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		var found string
		for _, d := range filepath.SplitList(path) {
			if _, err := os.Stat(filepath.Join(d, "hgfs")); err == nil {
				found = filepath.Join(d, "hgfs")
				break
			}
		}
		if found != "" {
			if target, _ := os.Readlink(found); target != bin {
				t.Skipf("skipping: mount -t fuse.hgfs would run the installed %s, not this build", found)
			}
		} else {
			// Installed for the test only, where nothing else is.
			found = "/usr/local/sbin/hgfs"
			if err := os.Symlink(bin, found); err != nil {
				testenv.Missing(t, "a writable /usr/local/sbin for mount(8) to find hgfs in ("+err.Error()+")")
			}
			t.Cleanup(func() { os.Remove(found) })
		}
		cache, mp := filepath.Join(dir, "c2"), filepath.Join(dir, "m2")
		os.Mkdir(mp, 0o755)
		out, err := exec.Command("mount", "-t", "fuse.hgfs", "-o", "create", cache, mp).CombinedOutput()
		if err != nil {
			t.Fatalf("mount -t fuse.hgfs: %v\n%s", err, out)
		}
		check(t, cache, mp)
	})
}
