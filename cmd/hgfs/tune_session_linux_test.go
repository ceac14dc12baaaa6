package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/mount"
	"github.com/hgfs/hgfs/testenv"
)

// TestTuneSameSession: a mount daemon is in a process group of its own
// (the terminal's SIGINT and SIGHUP go to the foreground group, not to
// it), in the session of the command that started it by default and in
// a session of its own with -samesession (mount.DaemonAttr).
func TestTuneSameSession(t *testing.T) {
	self, err := procSidPgid(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"", "-samesession"} {
		t.Run("tune="+value, func(t *testing.T) {
			dir := t.TempDir()
			cache, mp := filepath.Join(dir, "cache"), filepath.Join(dir, "mnt")
			os.Mkdir(mp, 0o755)
			if _, stderr, code := hgfsTuned(t, value, dir, "mount", "--create", cache, mp); code != 0 {
				t.Fatalf("HGFS_TUNE=%s hgfs mount: exit %d\n%s", value, code, stderr)
			}
			t.Cleanup(func() { testenv.UnmountCache(t, mp) })
			info, err := mount.ReadInfo(mp)
			if err != nil {
				t.Fatal(err)
			}
			d, err := procSidPgid(info.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if d.pgid != info.Pid {
				t.Errorf("the daemon (pid %d) is in process group %d, not its own", info.Pid, d.pgid)
			}
			if same := d.sid == self.sid; same != (value == "") {
				t.Errorf("HGFS_TUNE=%q: the daemon's session %d, the test's %d", value, d.sid, self.sid)
			}
		})
	}
}

type sidPgid struct{ sid, pgid int }

// procSidPgid reads a process's session and process group from
// /proc/PID/stat (the fields after the command's closing parenthesis:
// state, ppid, pgrp, session).
func procSidPgid(pid int) (sidPgid, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return sidPgid{}, err
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		return sidPgid{}, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	pgid, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return sidPgid{}, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return sidPgid{sid: sid, pgid: pgid}, nil
}
