//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// slowProxy forwards TCP connections to target, passing the server's
// bytes on in pieces of 16 KB a tenth of a second apart until release is
// called, then at full speed. It returns its address.
func slowProxy(t *testing.T, target string) (addr string, release func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var fast atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(s)
			wg.Add(2)
			go func() {
				defer wg.Done()
				io.Copy(s, c)
				s.(*net.TCPConn).CloseWrite()
			}()
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 16<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
					if !fast.Load() {
						time.Sleep(100 * time.Millisecond)
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { fast.Store(true) }
}

// TestProgressChangegroupInTerminal runs the real binary in a real
// terminal (tmux) at 50 and 200 columns: "hgfs clone" of the corpus
// from hg serve through a proxy that slows the download, so that a
// changegroup topic's bar (changesets, manifests or files, as hg's
// changegroup apply reports them) is on the screen. The screen must hold
// one bar line, no wider than the terminal (redrawn in place: not
// wrapped, not scrolled), with hg's "pos/total" and estimate; the status
// lines printed before it ("requesting all changes", "adding
// changesets") must already be on the screen; and once the proxy lets
// the rest through, the clone must end with no bar left.
func TestProgressChangegroupInTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		testenv.Missing(t, "tmux")
	}
	bin := testenv.Hgfs(t)
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	u, err := url.Parse(testenv.Serve(t, src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, cols := range []int{50, 200} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			addr, release := slowProxy(t, u.Host)
			defer release()
			dest := filepath.Join(dir, fmt.Sprint("c", cols))
			sock := filepath.Join(dir, fmt.Sprint("tmux", cols))
			tm := func(args ...string) string {
				out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("tmux %q: %v\n%s", args, err, out)
				}
				return string(out)
			}
			script := fmt.Sprintf("unset COLUMNS; HGRCPATH= %s --config progress.delay=0 clone -U http://%s%s %s; echo EXIT=$?; sleep 600",
				bin, addr, u.Path, dest)
			tm("new-session", "-d", "-s", "p", "-x", fmt.Sprint(cols), "-y", "12", "sh", "-c", script)
			t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })

			topics := regexp.MustCompile(`^(changesets|manifests|files) `)
			eta := regexp.MustCompile(`^(changesets|manifests|files) (\[[=> ]+\] )? *[0-9]+/[0-9]+ (\d\ds|\dm\d\ds)$`)
			if cols == 200 {
				eta = regexp.MustCompile(`^(changesets|manifests|files) \[[=> ]+\] +[0-9]+/[0-9]+ (\d\ds|\dm\d\ds)$`)
			}
			var screen []string
			for deadline := time.Now().Add(60 * time.Second); ; {
				screen = strings.Split(strings.TrimRight(tm("capture-pane", "-p", "-t", "p"), "\n"), "\n")
				var bars []string
				for _, l := range screen {
					if topics.MatchString(l) {
						bars = append(bars, strings.TrimRight(l, " "))
					}
				}
				if len(bars) == 1 && eta.MatchString(bars[0]) {
					if len(bars[0]) >= cols {
						t.Errorf("bar line of %d columns in a %d-column terminal: %q", len(bars[0]), cols, bars[0])
					}
					t.Logf("screen:\n%s", strings.Join(screen, "\n"))
					break
				}
				if len(bars) > 1 || strings.Contains(strings.Join(screen, "\n"), "EXIT=") || time.Now().After(deadline) {
					t.Fatalf("want one bar line with an estimate; screen:\n%s", strings.Join(screen, "\n"))
				}
				time.Sleep(100 * time.Millisecond)
			}
			all := strings.Join(screen, "\n")
			for _, want := range []string{"requesting all changes\n", "adding changesets\n"} {
				if !strings.Contains(all, want) {
					t.Errorf("status line %q held back; screen:\n%s", want, all)
				}
			}
			release()
			for deadline := time.Now().Add(120 * time.Second); ; {
				s := tm("capture-pane", "-p", "-t", "p")
				if strings.Contains(s, "EXIT=") {
					if !strings.Contains(s, "EXIT=0") || topics.MatchString(s) || regexp.MustCompile(`(?m)^(changesets|manifests|files) `).MatchString(s) {
						t.Errorf("after the end:\n%s", s)
					}
					if !strings.Contains(s, "added 2971 changesets") {
						t.Errorf("no summary:\n%s", s)
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
