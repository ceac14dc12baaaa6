//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// TestUnbundleKilled kills hgfs unbundle with SIGKILL in the middle of its
// transaction and recovers with hgfs recover, then with hg recover: the
// repository must be byte for byte as before and pass hg verify, and a
// second unbundle must then succeed.
//
// The bundle is fed through a named pipe: the test writes most of it,
// waits until the journal records written files, and kills the process
// while it waits for the rest, so the kill lands inside the transaction
// every time.
func TestUnbundleKilled(t *testing.T) {
	testenv.HgPath(t)
	bin := testenv.Hgfs(t)
	dir := t.TempDir()
	src := testenv.Generate(t, testenv.Small)
	base := filepath.Join(dir, "base.hg")
	more := filepath.Join(dir, "more.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "null", "-r", "1", "-t", "none-v2", base)
	testenv.Hg(t, src, "bundle", "-q", "--base", "1", "-a", "-t", "none-v2", more)
	data, err := os.ReadFile(more)
	if err != nil {
		t.Fatal(err)
	}
	for _, recoverWith := range []string{"hgfs", "hg"} {
		t.Run(recoverWith, func(t *testing.T) {
			repo := filepath.Join(dir, "repo-"+recoverWith)
			testenv.Hg(t, dir, "init", repo)
			if _, stderr, code := hgfsIn(repo, "unbundle", base); code != 0 {
				t.Fatalf("unbundle base: %s", stderr)
			}
			before := storeSnapshot(t, repo)

			fifo := filepath.Join(dir, "pipe-"+recoverWith)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// write-batch=0: each filelog is written when its group ends,
			// so files change while the rest of the bundle is awaited.
			cmd := exec.Command(bin, "-R", repo, "--config", "hgfs.write-batch=0", "unbundle", fifo)
			cmd.Env = testenv.HgEnv()
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			// All but the last bytes: the changelog, manifests and most
			// file groups arrive; the end of the bundle does not.
			if _, err := w.Write(data[:len(data)*9/10]); err != nil {
				t.Fatal(err)
			}
			journal := filepath.Join(repo, ".hg", "store", "journal")
			deadline := time.Now().Add(20 * time.Second)
			for {
				if fi, err := os.Stat(journal); err == nil && fi.Size() > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no journal entries after 20s; output:\n%s", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			w.Close()
			if _, err := os.Stat(journal); err != nil {
				t.Fatalf("journal gone after the kill: %v", err)
			}
			// A new transaction is refused until recovery.
			_, stderr, code := hgfsIn(repo, "unbundle", more)
			if code != 255 || !strings.Contains(stderr, "abandoned transaction found") {
				t.Errorf("unbundle over a journal: exit %d %q", code, stderr)
			}
			if recoverWith == "hgfs" {
				stdout, stderr, code := hgfsIn(repo, "recover")
				if code != 0 || !strings.Contains(stdout, "rolling back interrupted transaction") {
					t.Fatalf("hgfs recover: exit %d\n%s%s", code, stdout, stderr)
				}
			} else {
				testenv.Hg(t, repo, "recover")
			}
			sameSnapshot(t, "after recover", before, storeSnapshot(t, repo))
			testenv.Hg(t, repo, "verify", "-q")
			if _, stderr, code := hgfsIn(repo, "unbundle", more); code != 0 {
				t.Fatalf("unbundle after recover: %s", stderr)
			}
			testenv.Hg(t, repo, "verify", "-q")
			if _, _, code := hgfsIn(repo, "recover"); code != 1 {
				t.Errorf("recover with nothing to do: exit %d, want 1", code)
			}
		})
	}
}
