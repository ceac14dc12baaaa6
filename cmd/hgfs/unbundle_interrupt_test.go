package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// interruptFiles is the file count of the repository the interrupt tests
// apply. With --debug, hgfs prints a 36-byte line per file group and
// flushes stdout 64 KiB at a time; a test that stops reading once it has
// seen "adding file changes" (in the first 64 KiB) makes hgfs block on
// its third write, as the pipe (64 KiB) and its buffer are full, some
// 5,400 file groups in. With more files than that, the signal is sure to
// be sent while the apply still has files to add, whatever the machine's
// load.
const interruptFiles = 6000

// interruptAfterFileChanges runs the hgfs binary with args (--debug is
// added), reads its stdout until "adding file changes", sends sig, and
// returns what it printed and its exit status.
func interruptAfterFileChanges(t *testing.T, sig os.Signal, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testenv.Hgfs(t), append([]string{"--debug"}, args...)...)
	cmd.Env = testenv.HgEnv()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A bound, not an assertion: a process that never ends fails the
	// test instead of hanging the suite.
	watchdog := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	var out strings.Builder
	r := bufio.NewReader(pipe)
	for {
		line, err := r.ReadString('\n')
		out.WriteString(line)
		if line == "adding file changes\n" {
			break
		}
		if err != nil {
			cmd.Wait()
			t.Fatalf("no \"adding file changes\" line (%v)\n%s%s", err, out.String(), errb.String())
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	out.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// interruptTarget makes a repository with a changeset of its own (the
// bundle is unrelated to it) and returns it with its files and state.
func interruptTarget(t *testing.T, dir, name string) (repo string, before map[string]string, state string) {
	t.Helper()
	repo = filepath.Join(dir, name)
	testenv.Hg(t, dir, "init", repo)
	if err := os.WriteFile(filepath.Join(repo, "mine"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, repo, "commit", "-qAm", "mine")
	return repo, storeSnapshot(t, repo), repoState(t, repo, false)
}

// checkRolledBack fails unless repo is as before: no journal, no lock,
// hg verify clean, the same changesets (hg log --debug), and the same
// files, but for an inline revlog the transaction split: as with hg 6.3,
// the rollback truncates its new index and data files to the revisions
// it had, so it stays split.
func checkRolledBack(t *testing.T, repo string, before map[string]string, state string) {
	t.Helper()
	for _, name := range []string{".hg/store/journal", ".hg/store/lock", ".hg/wlock"} {
		if _, err := os.Lstat(filepath.Join(repo, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", name, err)
		}
	}
	after := storeSnapshot(t, repo)
	for name := range after {
		if i, ok := strings.CutSuffix(name, ".d"); ok && before[name] == "" && before[i+".i"] != "" {
			delete(after, name)
			after[i+".i"] = before[i+".i"]
		}
	}
	sameSnapshot(t, "after the interrupt", before, after)
	if got := repoState(t, repo, true); got != state {
		t.Errorf("repository changed:\n%s", testenv.Diff("before", state, "after", got))
	}
}

// TestUnbundleInterrupt signals a real hgfs unbundle of a many-file
// bundle while it adds file changes. Every file group has one delta, so
// only a check per group (not per 256 deltas) sees the signal in time.
// hg 6.3 and hg 7.2 both then print "transaction abort!" and "rollback
// completed", then "interrupted!" for SIGINT and "killed!" for SIGTERM
// and SIGHUP (dispatch.py; the output stops at "adding file changes"),
// and exit 255; hgfs must do the same and leave the repository as it was.
func TestUnbundleInterrupt(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := testenv.Generate(t, testenv.Large(interruptFiles))
	bundle := filepath.Join(dir, "large.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2", bundle)
	for _, tc := range []struct {
		sig os.Signal
		msg string
	}{{os.Interrupt, "interrupted!\n"}, {syscall.SIGTERM, "killed!\n"}, {syscall.SIGHUP, "killed!\n"}} {
		t.Run(fmt.Sprint(tc.sig), func(t *testing.T) {
			repo, before, state := interruptTarget(t, dir, "repo-"+fmt.Sprint(tc.sig))
			stdout, stderr, code := interruptAfterFileChanges(t, tc.sig, "-R", repo, "unbundle", bundle)
			if code != 255 || stderr != "transaction abort!\nrollback completed\n"+tc.msg {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
			if !strings.HasPrefix(stdout, "adding changesets\n") || strings.Contains(stdout, "\nadded ") {
				t.Errorf("stdout:\n%s", stdout)
			}
			checkRolledBack(t, repo, before, state)
		})
	}
}

// TestPullInterrupt does the same to a changegroup pull from hg serve,
// and to a changegroup clone, which must leave no destination.
func TestPullInterrupt(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := testenv.Generate(t, testenv.Large(interruptFiles))
	url := testenv.Serve(t, src)

	t.Run("pull", func(t *testing.T) {
		// The target's own changeset shares nothing with the server's:
		// -f, as hg wants for an unrelated repository.
		repo, before, state := interruptTarget(t, dir, "pull")
		stdout, stderr, code := interruptAfterFileChanges(t, syscall.SIGTERM, "-R", repo, "pull", "-f", url)
		if code != 255 || stderr != "warning: repository is unrelated\ntransaction abort!\nrollback completed\nkilled!\n" {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if !strings.HasPrefix(stdout, "pulling from ") || strings.Contains(stdout, "\nadded ") {
			t.Errorf("stdout:\n%s", stdout)
		}
		checkRolledBack(t, repo, before, state)
	})
	t.Run("clone", func(t *testing.T) {
		dest := filepath.Join(dir, "clone")
		stdout, stderr, code := interruptAfterFileChanges(t, os.Interrupt, "clone", "-U", url, dest)
		if code != 255 || !strings.HasSuffix(stderr, "interrupted!\n") || strings.Contains(stdout, "\nadded ") {
			t.Errorf("exit %d, stderr %q\n%s", code, stderr, stdout)
		}
		if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("destination left behind (%v)", err)
		}
	})
}
