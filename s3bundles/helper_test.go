package s3bundles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The helper's failures are hard to provoke from a real store at the
// moment wanted (a download cut after its first bytes), so these tests
// run this test binary as the helper: with fakeHelperEnv set it reads the
// request as hgfs-s3 does and behaves as the mode the request's HgDir
// names. The real helper runs in cmd/hgfs's S3 tests.
const fakeHelperEnv = "S3BUNDLES_TEST_FAKE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeHelperEnv) != "" {
		os.Exit(fakeHelper())
	}
	os.Exit(m.Run())
}

func fakeHelper() int {
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "bad request:", err)
		return 2
	}
	switch req.HgDir {
	case "status":
		fmt.Printf("uploading %s\nwrote the manifest\n", req.Target)
		return 0
	case "refused":
		fmt.Fprintln(os.Stderr, "checking bucket bundles: Access Denied (AccessDenied, HTTP 403)")
		return 1
	case "empty":
		return 0
	case "cut":
		os.Stdout.Write(bytes.Repeat([]byte("x"), 1000))
		fmt.Fprintln(os.Stderr, "fetching s3://bundles/k: connection reset by peer")
		return 1
	case "hang":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		os.Stdout.Write([]byte("x"))
		select {
		case <-sig:
			fmt.Fprintln(os.Stderr, "interrupted")
			return 1
		case <-time.After(time.Minute):
			return 0
		}
	}
	return 2
}

// fake points HelperPath at this test binary in fake helper mode.
func fake(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(HelperEnv, exe)
	t.Setenv(fakeHelperEnv, "1")
}

func TestRunRefreshHelper(t *testing.T) {
	fake(t)
	ctx := context.Background()
	var lines []string
	req := Request{Op: OpRefresh, Target: Target{Bucket: "bundles", Prefix: "r"}, HgDir: "status"}
	if err := RunRefresh(ctx, req, func(l string) { lines = append(lines, l) }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(lines, "") != "uploading s3://bundles/r\nwrote the manifest\n" {
		t.Errorf("status lines %q", lines)
	}
	req.HgDir = "refused"
	err := RunRefresh(ctx, req, nil)
	if err == nil || err.Error() != "checking bucket bundles: Access Denied (AccessDenied, HTTP 403)" {
		t.Errorf("refused: %v, want the helper's own words", err)
	}
}

func TestFetchHelper(t *testing.T) {
	fake(t)
	ctx := context.Background()
	if _, err := Fetch(ctx, Config{}, Target{Bucket: "bundles"}); err == nil || !strings.Contains(err.Error(), "names no object") {
		t.Errorf("no key: %v", err)
	}
	fetch := func(mode string) (io.ReadCloser, error) {
		// The fake reads its mode from the request's HgDir.
		h, err := startHelper(ctx, Request{Op: OpGet, Target: Target{Bucket: "bundles", Prefix: "k"}, HgDir: mode})
		if err != nil {
			return nil, err
		}
		return openFetch(h)
	}
	// Refused before the first byte: an error from Fetch itself.
	if _, err := fetch("refused"); err == nil || !strings.Contains(err.Error(), "Access Denied") {
		t.Errorf("refused: %v", err)
	}
	// An empty object is an empty body.
	r, err := fetch("empty")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || len(b) != 0 {
		t.Errorf("empty object: %d bytes, %v", len(b), err)
	}
	r.Close()
	// Cut short: the bytes that came, then the helper's error, which
	// is an unexpected EOF.
	r, err = fetch("cut")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if len(b) != 1000 || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Errorf("cut short: %d bytes, %v", len(b), err)
	}
	r.Close()
	// Closed before the end: the helper is stopped, not waited out.
	r, err = fetch("hang")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.Close()
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// TestHelperInterrupt: the end of the context interrupts the helper
// (a refresh stops between its atomic writes) and is the error.
func TestHelperInterrupt(t *testing.T) {
	fake(t)
	ctx, cancel := context.WithCancel(context.Background())
	h, err := startHelper(ctx, Request{Op: OpGet, HgDir: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := openFetch(h)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = io.ReadAll(r)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
	// Windows has no interrupt for another process: it is killed.
	if h.stderr.String() != "interrupted\n" && runtime.GOOS != "windows" {
		t.Errorf("the helper was not interrupted (stderr %q)", h.stderr.String())
	}
}

func TestHelperPath(t *testing.T) {
	t.Setenv(HelperEnv, "")
	t.Setenv("PATH", t.TempDir())
	// The test binary has no hgfs-s3 beside it.
	if p, err := HelperPath(); err == nil || !strings.Contains(err.Error(), "neither beside hgfs nor on PATH") {
		t.Errorf("HelperPath() = %q, %v", p, err)
	}
	t.Setenv(HelperEnv, "/nonexistent/hgfs-s3")
	err := RunRefresh(context.Background(), Request{Op: OpCheck}, nil)
	if err == nil || !strings.Contains(err.Error(), "running the S3 helper") {
		t.Errorf("a missing helper: %v", err)
	}
}
