//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// TestProgressInTerminal runs the real binary in a real terminal (tmux)
// at 50 and 200 columns: "hgfs unbundle" of a stream bundle read from a
// FIFO that the test feeds in pieces, then holds, so the bar is on the
// screen. The screen must then hold one bar line, no wider than the
// terminal (redrawn in place: not wrapped, not scrolled), with hg's
// estimate of the time left; the status line printed before the bar
// ("N files to transfer") must already be on the screen; and once the
// rest is fed, the bar must be gone.
func TestProgressInTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		testenv.Missing(t, "tmux")
	}
	bin := testenv.Hgfs(t)
	hg := testenv.Default(t)
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	dir := t.TempDir()
	bundlePath := filepath.Join(dir, "stream.hg")
	hg.Run(t, src, "bundle", "-a", "-t", "none-v2;stream=v2", bundlePath)
	bundle, err := os.ReadFile(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range []int{50, 200} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			repo := filepath.Join(dir, fmt.Sprint("r", cols))
			hg.Run(t, dir, "init", repo)
			fifo := filepath.Join(dir, fmt.Sprint("fifo", cols))
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, fmt.Sprint("tmux", cols))
			tm := func(args ...string) string {
				out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("tmux %q: %v\n%s", args, err, out)
				}
				return string(out)
			}
			script := fmt.Sprintf("unset COLUMNS; HGRCPATH= %s --config progress.delay=0 unbundle -R %s %s; echo EXIT=$?; sleep 600", bin, repo, fifo)
			tm("new-session", "-d", "-s", "p", "-x", fmt.Sprint(cols), "-y", "10", "sh", "-c", script)
			t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })

			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for hgfs to open it
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			// 70% of the bundle, in ten pieces a quarter second apart, so
			// that the bar is redrawn with a rate to estimate from.
			part := len(bundle) * 7 / 10 / 10
			for i := 0; i < 10; i++ {
				if _, err := w.Write(bundle[i*part : (i+1)*part]); err != nil {
					t.Fatal(err)
				}
				time.Sleep(250 * time.Millisecond)
			}
			eta := regexp.MustCompile(`^clone .* [0-9]+/[0-9]+ files (\d\ds|\dm\d\ds)$`)
			var screen []string
			deadline := time.Now().Add(30 * time.Second)
			for {
				screen = strings.Split(strings.TrimRight(tm("capture-pane", "-p", "-t", "p"), "\n"), "\n")
				var bars []string
				for _, l := range screen {
					if strings.Contains(l, "clone") {
						bars = append(bars, strings.TrimRight(l, " "))
					}
				}
				if len(bars) == 1 && eta.MatchString(bars[0]) {
					if len(bars[0]) >= cols {
						t.Errorf("bar line of %d columns in a %d-column terminal: %q", len(bars[0]), cols, bars[0])
					}
					t.Logf("screen:\n%s", strings.Join(screen, "\n"))
					if cols == 200 && !strings.Contains(bars[0], "[") {
						t.Errorf("no bar at 200 columns: %q", bars[0])
					}
					break
				}
				if len(bars) > 1 || time.Now().After(deadline) {
					t.Fatalf("want one bar line with an estimate; screen:\n%s", strings.Join(screen, "\n"))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !strings.Contains(strings.Join(screen, "\n"), " files to transfer, ") {
				t.Errorf("status line held back; screen:\n%s", strings.Join(screen, "\n"))
			}
			if _, err := w.Write(bundle[10*part:]); err != nil {
				t.Fatal(err)
			}
			w.Close()
			for deadline := time.Now().Add(60 * time.Second); ; {
				s := tm("capture-pane", "-p", "-t", "p")
				if strings.Contains(s, "EXIT=") {
					if !strings.Contains(s, "EXIT=0") || strings.Contains(s, "clone") {
						t.Errorf("after the end:\n%s", s)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no end; screen:\n%s", s)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
