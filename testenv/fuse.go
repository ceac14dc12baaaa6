package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// MountCache mounts the hgfs cache in cacheDir (created if missing or
// empty) on a fresh directory with the real hgfs binary, which goes to the
// background once the mount answers, and returns the mount point. At
// cleanup it checks that the test left no file descriptors open on the
// mount, then unmounts with `hgfs unmount` (which waits for the daemon to
// make everything durable and exit), retrying while the mount is busy; if
// it has to fall back to a lazy unmount the test fails.
func MountCache(t testing.TB, cacheDir string, extraArgs ...string) string {
	t.Helper()
	RequireFUSE(t)
	bin := Hgfs(t)
	mp := t.TempDir()
	args := append(append([]string{"mount"}, extraArgs...), cacheDir, mp)
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hgfs %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	t.Cleanup(func() { UnmountCache(t, mp) })
	return mp
}

// UnmountCache unmounts an hgfs mount as MountCache's cleanup does. It is
// a no-op when mp is no longer mounted.
func UnmountCache(t testing.TB, mp string) {
	t.Helper()
	if !IsMounted(mp) {
		return
	}
	if fds := OpenFDsUnder(mp); len(fds) > 0 {
		t.Errorf("file descriptors left open on %s: %s", mp, strings.Join(fds, ", "))
	}
	bin := Hgfs(t)
	var last []byte
	for delay := 10 * time.Millisecond; delay < 3*time.Second; delay *= 2 {
		out, err := exec.Command(bin, "unmount", mp).CombinedOutput()
		if err == nil {
			return
		}
		last = out
		if !bytes.Contains(out, []byte("busy")) {
			break
		}
		time.Sleep(delay)
	}
	t.Errorf("hgfs unmount %s failed; unmounting lazily:\n%s", mp, last)
	if out, err := exec.Command(fusermount(), "-u", "-z", mp).CombinedOutput(); err != nil {
		t.Errorf("fusermount -u -z %s: %v\n%s", mp, err, out)
	}
}

// IsMounted reports whether mp is a mount point (per /proc/self/mountinfo).
func IsMounted(mp string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMountinfo(f[4]) == mp {
			return true
		}
	}
	return false
}

func unescapeMountinfo(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// OpenFDsUnder lists this process's file descriptors on files under dir.
func OpenFDsUnder(dir string) []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var fds []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && (target == dir || strings.HasPrefix(target, dir+"/")) {
			fds = append(fds, e.Name()+" -> "+target)
		}
	}
	return fds
}

func fusermount() string {
	if p, err := exec.LookPath("fusermount3"); err == nil {
		return p
	}
	return "fusermount"
}
