package testenv

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// browserWait bounds one headless browser run: a page load takes
// seconds, a first start on a cold machine longer.
const browserWait = 3 * time.Minute

// BrowserDOM opens url in headless Chromium (Debian's chromium package)
// and returns the DOM it built, serialized (--dump-dom). It skips the
// test (fails on CI) when Chromium is missing.
func BrowserDOM(t testing.TB, url string) string {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		Missing(t, "chromium (a headless browser) is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	defer cancel()
	// --no-sandbox: Chromium's sandbox refuses to run as root, which
	// is how CI runs.
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("chromium --dump-dom %s: %v\n%s", url, err, stderr)
	}
	return string(out)
}
