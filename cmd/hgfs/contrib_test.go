//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// systemdUnits are contrib's units: the system one and the user one.
var systemdUnits = []string{"../../contrib/systemd/hgfs@.service", "../../contrib/systemd/user/hgfs@.service"}

// unitFor is a unit as installed for a test: this build's binary for
// /usr/local/bin/hgfs, and no man page to point to.
func unitFor(t *testing.T, path, bin string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "Documentation=") {
			lines = append(lines, strings.ReplaceAll(l, "/usr/local/bin/hgfs", bin))
		}
	}
	return strings.Join(lines, "\n")
}

// TestSystemdUnitsVerify checks contrib's units with systemd-analyze
// verify, which needs no running systemd.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("skipping: no systemd-analyze (systemd is not installed on this machine)")
	}
	bin := testenv.Hgfs(t)
	for _, u := range systemdUnits {
		dir := t.TempDir()
		p := filepath.Join(dir, "hgfs@.service")
		if err := os.WriteFile(p, []byte(unitFor(t, u, bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
		}
	}
}

// TestSystemdUnitRuns starts the system unit under a running systemd:
// the cache is mounted, usable, and stopping the unit unmounts it.
func TestSystemdUnitRuns(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		comm, _ := os.ReadFile("/proc/1/comm")
		t.Skipf("skipping: systemd is not running on this machine (PID 1 is %s)", strings.TrimSpace(string(comm)))
	}
	testenv.RequireFUSE(t)
	if os.Getuid() != 0 {
		testenv.Missing(t, "root (to install a system unit)")
	}
	bin := testenv.Hgfs(t)
	inst := fmt.Sprintf("hgfstest%d", os.Getpid())
	unit := "/run/systemd/system/hgfs@.service"
	if _, err := os.Stat(unit); err == nil {
		t.Skipf("skipping: %s exists already", unit)
	}
	if err := os.WriteFile(unit, []byte(unitFor(t, systemdUnits[0], bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(unit); exec.Command("systemctl", "daemon-reload").Run() })
	dir := t.TempDir()
	cache, mp := filepath.Join(dir, "cache"), filepath.Join(dir, "mnt")
	os.Mkdir(mp, 0o755)
	env := filepath.Join("/etc/hgfs", inst+".env")
	os.MkdirAll("/etc/hgfs", 0o755)
	if err := os.WriteFile(env, []byte("CACHE="+cache+"\nMOUNTPOINT="+mp+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(env) })
	systemctl := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("systemctl", args...).CombinedOutput(); err != nil {
			t.Fatalf("systemctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	systemctl("daemon-reload")
	systemctl("start", "hgfs@"+inst)
	t.Cleanup(func() { exec.Command("systemctl", "stop", "hgfs@"+inst).Run() })
	for deadline := time.Now().Add(time.Minute); !testenv.IsMounted(mp); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the unit did not mount")
		}
	}
	testenv.Hg(t, mp, "init", "r")
	systemctl("stop", "hgfs@"+inst)
	if testenv.IsMounted(mp) {
		t.Error("still mounted after systemctl stop")
	}
	fsckClean(t, cache)
}
