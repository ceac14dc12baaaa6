//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// hg's util.setflags breaks a hard link before it changes the exec bit
// (the other name keeps its mode); hgfs update changes the exec bit alone
// by a chmod (worktree.setExec), except where the file is linked twice.
// The update through the files and hg must agree.
func TestUpdateExecFlagHardlink(t *testing.T) {
	hg := testenv.Default(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	hg.Run(t, "", "init", src)
	os.WriteFile(filepath.Join(src, "a"), []byte("a\n"), 0o644)
	hg.Run(t, src, "commit", "-q", "-A", "-m", "0", "-u", "t")
	os.Chmod(filepath.Join(src, "a"), 0o755)
	hg.Run(t, src, "commit", "-q", "-m", "1", "-u", "t")
	for _, c := range []struct{ name, cmd string }{{"hg", hg.Path}, {"hgfs", bin}} {
		wc := filepath.Join(dir, c.name)
		hg.Run(t, "", "clone", "-q", "-U", src, wc)
		run := func(args ...string) {
			cmd := exec.Command(c.cmd, append([]string{"-R", wc}, args...)...)
			cmd.Env = testenv.HgEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s", c.name, args, err, out)
			}
		}
		run("update", "-q", "0")
		other := filepath.Join(dir, c.name+"-other")
		if err := os.Link(filepath.Join(wc, "a"), other); err != nil {
			t.Fatal(err)
		}
		run("update", "-q", "1")
		var st syscall.Stat_t
		syscall.Stat(other, &st)
		t.Logf("%s: the other name's mode %o, links %d", c.name, st.Mode&0o7777, st.Nlink)
		if st.Mode&0o111 != 0 || st.Nlink != 1 {
			t.Errorf("%s: update to a's exec flag changed the hard-linked other name: mode %o, links %d (hg: 644, 1)", c.name, st.Mode&0o7777, st.Nlink)
		}
	}
}
