//go:build unix

package main

// Tests that signal the daemon by pid (syscall.Kill), which Windows lacks.

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

func TestServeDaemon(t *testing.T) {
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(testenv.Hgfs(t), "serve", "-R", src, "-p", "0", "-d", "--pid-file", pidFile)
	cmd.Env = testenv.HgEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hgfs serve -d: %v\n%s", err, out)
	}
	m := listeningRe.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("hgfs serve -d printed %q", out)
	}
	pidText, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 500 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Error("daemon did not stop on SIGTERM")
		}
	})
	resp, err := http.Get("http://127.0.0.1:" + m[1] + "/?cmd=heads")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := testenv.Hg(t, src, "heads", "-T", "{node}\n")
	if string(body) != string(want) {
		t.Errorf("heads: %q, want %q", body, want)
	}
}
