package testenv

import (
	"bytes"
	"context"
	"fmt"
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
	args := append(append([]string{"mount", "--create"}, extraArgs...), cacheDir, mp)
	out, err := runBounded(bin, args...)
	if err != nil {
		// A mount that came up after all must not outlive the test.
		t.Cleanup(func() { UnmountCache(t, mp) })
		t.Fatalf("hgfs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Cleanup(func() { UnmountCache(t, mp) })
	return mp
}

// hgfsWait bounds one `hgfs mount` (which returns once its daemon reports
// the mount answering) or `hgfs unmount` (once the daemon has drained and
// exited): each takes well under a second.
const hgfsWait = 2 * time.Minute

// runBounded runs bin and returns its combined output; after hgfsWait it
// kills it and says so. Once it has exited, its output is read for 5 s
// more at most: a daemon that kept the pipe open fails the run
// (exec.ErrWaitDelay) instead of hanging it.
func runBounded(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hgfsWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer in %v, killed (%v)", hgfsWait, err)
	}
	return out.Bytes(), err
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
		out, err := runBounded(bin, "unmount", mp)
		if err == nil {
			return
		}
		last = append(out, err.Error()...)
		if !bytes.Contains(out, []byte("busy")) {
			break
		}
		time.Sleep(delay)
	}
	t.Errorf("hgfs unmount %s failed; unmounting lazily:\n%s", mp, last)
	if out, err := runBounded(fusermount(), "-u", "-z", mp); err != nil {
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
