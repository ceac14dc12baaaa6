package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Serve starts `hg serve` for repoDir on 127.0.0.1 with a port the kernel
// picks (-p 0 --print-url), waits until it answers a capabilities request,
// and stops it when the test ends. extraArgs go
// to hg serve, e.g. "--config", "server.bundle2.stream=false" for a server
// that only offers legacy v1 stream_out, or "--config",
// "server.uncompressed=false" for one that refuses stream clones.
// It returns the repository URL, ending in "/".
func Serve(t testing.TB, repoDir string, extraArgs ...string) string {
	t.Helper()
	return serveWith(t, HgPath(t), repoDir, extraArgs...)
}

// serveWith is Serve with the hg command hg.
func serveWith(t testing.TB, hg, repoDir string, extraArgs ...string) string {
	t.Helper()
	args := append([]string{"serve", "-R", repoDir, "-a", "127.0.0.1", "-p", "0", "--print-url",
		"-A", "/dev/null", "-E", "/dev/null"}, extraArgs...)
	cmd := exec.Command(hg, args...)
	cmd.Env = HgEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("hg serve: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	// hg serve without -d is one process (no forked workers), so
	// stopping it stops everything it started.
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(stop)

	// --print-url prints the URL once the socket is bound: the first line.
	lineCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lineCh <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lineCh:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("hg serve printed no URL in 30s; stderr:\n%s", stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://") {
		stop()
		<-exited
		t.Fatalf("hg serve: no URL (got %q); stderr:\n%s", line, stderr.String())
	}
	// hg prints "localhost"; we bound 127.0.0.1, so use it (no resolver,
	// no IPv6 surprise).
	url = strings.Replace(url, "//localhost:", "//127.0.0.1:", 1)
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	// Wait until it answers.
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(url + "?cmd=capabilities")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-exited:
			t.Fatalf("hg serve exited: %v; stderr:\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			stop() // stderr is written until hg serve exits
			t.Fatalf("hg serve at %s not answering: %v; stderr:\n%s", url, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
