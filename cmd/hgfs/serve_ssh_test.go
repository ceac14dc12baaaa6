package main

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// transferTimes matches the rate and duration of a stream clone's
// summary line, which vary from run to run.
var transferTimes = regexp.MustCompile(`in [0-9.]+ seconds \([^)]*\)`)

func normalizeTimes(s string) string {
	return transferTimes.ReplaceAllString(s, "in X seconds (X/sec)")
}

// TestServeStdioHg clones and pulls with real hg 6.3 and 7 over ssh from
// `hgfs serve --stdio` and from `hg serve --stdio` (6.3), and compares
// output and result: --stream (bundle2 and legacy stream_out), a pull
// after the clone, and a plain clone and pull (changegroups).
func TestServeStdioHg(t *testing.T) {
	t.Parallel()
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	ssh := fakeSSHScript(t, dir, "")
	url := "ssh://user@host/" + src
	hg63 := testenv.Default(t).Path
	for _, client := range testenv.Mercurials(t) {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"stream", []string{"--stream"}},
			{"stream-v1", []string{"--stream", "--config", "devel.legacy.exchange=bundle1"}},
			{"plain", nil},
		} {
			t.Run(client.Name+"/"+c.name, func(t *testing.T) {
				run := func(remote, dest string) (string, string) {
					args := append([]string{"clone", "-U", "--ssh", ssh, "--remotecmd", remote}, c.args...)
					out, stderr, err := client.Result(t, dir, append(args, url, dest)...)
					if err != nil {
						return string(out), string(stderr) + err.Error()
					}
					return normalizeTimes(string(out)), ""
				}
				hgDest := filepath.Join(dir, client.Name+"-"+c.name+"-hg")
				hgfsDest := filepath.Join(dir, client.Name+"-"+c.name+"-hgfs")
				want, failed := run(hg63, hgDest)
				if failed != "" {
					t.Fatalf("clone from hg serve --stdio: %s\n%s", failed, want)
				}
				got, failed := run(hgfs, hgfsDest)
				if failed != "" {
					t.Fatalf("clone from hgfs serve --stdio: %s\n%s", failed, got)
				}
				if got != want {
					t.Errorf("output differs:\n%s", testenv.Diff("hg serve", want, "hgfs serve", got))
				}
				if w, g := repoState(t, hgDest, false), repoState(t, hgfsDest, true); w != g {
					t.Errorf("repository differs:\n%s", testenv.Diff("hg serve", w, "hgfs serve", g))
				}
				// Nothing new: the pull's discovery (heads, known, a getbundle
				// with listkeys and phases) over the same protocol.
				for _, args := range [][]string{nil, c.args[min(len(c.args), 1):]} {
					pa := append([]string{"pull", "--ssh", ssh, "--remotecmd", hgfs}, args...)
					out, stderr, err := client.Result(t, hgfsDest, append(pa, url)...)
					if err != nil || !bytes.Contains(out, []byte("no changes found")) {
						t.Errorf("pull %v after clone: %v\n%s%s", args, err, out, stderr)
					}
				}
			})
		}
		// A pull that needs changesets.
		t.Run(client.Name+"/pull", func(t *testing.T) {
			hgRepo := filepath.Join(dir, client.Name+"-pull-hg")
			hgfsRepo := filepath.Join(dir, client.Name+"-pull-hgfs")
			for _, r := range []string{hgRepo, hgfsRepo} {
				testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src, r)
			}
			want, stderr, err := client.Result(t, hgRepo, "pull", "--ssh", ssh, "--remotecmd", hg63, url)
			if err != nil {
				t.Fatalf("pull from hg serve --stdio: %v\n%s%s", err, want, stderr)
			}
			got, stderr, err := client.Result(t, hgfsRepo, "pull", "--ssh", ssh, "--remotecmd", hgfs, url)
			if err != nil {
				t.Fatalf("pull from hgfs serve --stdio: %v\n%s%s", err, got, stderr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs:\n%s", testenv.Diff("hg serve", string(want), "hgfs serve", string(got)))
			}
			if w, g := repoState(t, hgRepo, false), repoState(t, hgfsRepo, true); w != g {
				t.Errorf("repository differs:\n%s", testenv.Diff("hg serve", w, "hgfs serve", g))
			}
		})
	}
}

// TestServeStdioHgfs clones and pulls with hgfs over ssh from hgfs serve
// --stdio, as from hg serve --stdio.
func TestServeStdioHgfs(t *testing.T) {
	t.Parallel()
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	ssh := fakeSSHScript(t, dir, "")
	url := "ssh://user@host/" + src
	hg63 := testenv.Default(t).Path
	for _, c := range []struct {
		name string
		args []string
	}{{"stream", []string{"--stream"}}, {"default", nil}} {
		t.Run(c.name, func(t *testing.T) {
			clone := func(remote, dest string) (string, string, int) {
				args := append([]string{"-U", "-e", ssh, "--remotecmd", remote}, c.args...)
				out, stderr, code := hgfsClone(t, dir, append(args, url, dest)...)
				return normalizeTimes(out), stderr, code
			}
			hgDest := filepath.Join(dir, "hgfs-"+c.name+"-from-hg")
			hgfsDest := filepath.Join(dir, "hgfs-"+c.name+"-from-hgfs")
			want, stderr, code := clone(hg63, hgDest)
			if code != 0 {
				t.Fatalf("hgfs clone from hg serve --stdio: exit %d\n%s%s", code, want, stderr)
			}
			got, stderr, code := clone(hgfs, hgfsDest)
			if code != 0 {
				t.Fatalf("hgfs clone from hgfs serve --stdio: exit %d\n%s%s", code, got, stderr)
			}
			if got != want {
				t.Errorf("output differs:\n%s", testenv.Diff("hg serve", want, "hgfs serve", got))
			}
			if w, g := repoState(t, hgDest, false), repoState(t, hgfsDest, true); w != g {
				t.Errorf("repository differs:\n%s", testenv.Diff("hg serve", w, "hgfs serve", g))
			}
			out, stderr, code := hgfsIn(hgfsDest, "pull", "-e", ssh, "--remotecmd", hgfs, url)
			if code != 0 || !strings.Contains(out, "no changes found") {
				t.Errorf("hgfs pull after clone: exit %d\n%s%s", code, out, stderr)
			}
		})
	}
}

// TestServeStdioInvocation: with --stdio the command line must be
// exactly "-R REPO serve --stdio", with hg's message otherwise.
func TestServeStdioInvocation(t *testing.T) {
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	testenv.Hg(t, dir, "init", "r")
	for _, args := range [][]string{
		{"-R", "r", "serve", "--stdio", "-p", "80"},
		{"serve", "-R", "r", "--stdio"},
		{"--cwd", "r", "serve", "--stdio"},
		{"-R", "r", "serve", "--stdio", "-d"},
		{"-R", "--config=ui.debugger=1", "serve", "--stdio"},
		{"--config", "x.y=it's", "-R", "r", "serve", "--stdio"},
		{"-R", "/nonexistent", "serve", "--stdio"},
	} {
		runIn := func(bin string) (string, string, int) {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = testenv.HgEnv()
			cmd.Stdin = strings.NewReader("")
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				return out.String(), stderr.String(), ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return out.String(), stderr.String(), 0
		}
		hgOut, hgErr, hgCode := runIn(testenv.HgPath(t))
		out, stderr, code := runIn(hgfs)
		if code != hgCode || out != hgOut || stderr != hgErr {
			t.Errorf("%q: hgfs exit %d %q %q, hg exit %d %q %q", args, code, out, stderr, hgCode, hgOut, hgErr)
		}
	}
}

// TestServeStdioEnds: the session ends with exit status 0 when its input
// ends, and when SIGTERM arrives between requests.
func TestServeStdioEnds(t *testing.T) {
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	for _, how := range []string{"eof", "sigterm", "goodbye"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(hgfs, "-R", src, "serve", "--stdio")
			cmd.Env = testenv.HgEnv()
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(in, "heads\n")
			br := bufio.NewReader(out)
			if l, err := br.ReadString('\n'); err != nil || l != "41\n" {
				t.Fatalf("heads reply %q %v", l, err)
			}
			br.ReadString('\n')
			switch how {
			case "eof":
				in.Close()
			case "sigterm":
				cmd.Process.Signal(syscall.SIGTERM)
			case "goodbye":
				io.WriteString(in, "\n")
			}
			rest, _ := io.ReadAll(br)
			err := cmd.Wait()
			in.Close()
			if err != nil || len(rest) != 0 || stderr.Len() != 0 {
				t.Errorf("exit %v, then stdout %q, stderr %q", err, rest, stderr.String())
			}
		})
	}
}

// TestServeStdioStreamOnTerm: SIGTERM during a stream lets it finish
// (the client gets all of it), then the session ends with status 0.
func TestServeStdioStreamOnTerm(t *testing.T) {
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	// More than a pipe holds, so the server is still writing when the
	// signal comes.
	big := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{1}).Read(big)
	if err := os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, src, "commit", "-qAm", "big")
	session := func(signal bool) []byte {
		cmd := exec.Command(hgfs, "-R", src, "serve", "--stdio")
		cmd.Env = testenv.HgEnv()
		cmd.Stdin = strings.NewReader("stream_out\n")
		out, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReaderSize(out, 16)
		first, err := br.ReadString('\n')
		if err != nil || first != "0\n" {
			t.Fatalf("stream_out reply starts %q (%v)", first, err)
		}
		if signal {
			cmd.Process.Signal(syscall.SIGTERM)
		}
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil || stderr.Len() != 0 {
			t.Errorf("signal %v: exit %v, stderr %q", signal, err, stderr.String())
		}
		return append([]byte(first), rest...)
	}
	want := session(false)
	if len(want) < len(big) {
		t.Fatalf("stream of %d bytes", len(want))
	}
	if got := session(true); !bytes.Equal(got, want) {
		t.Errorf("stream after SIGTERM: %d bytes, %d without", len(got), len(want))
	}
}

// TestServeStdioConfig: --stdio reads the serving settings as serve
// does (serverConfig): server.uncompressed in the repository's hgrc.
func TestServeStdioConfig(t *testing.T) {
	hgfs := testenv.Hgfs(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	hello := func() string {
		cmd := exec.Command(hgfs, "-R", src, "serve", "--stdio")
		cmd.Env = testenv.HgEnv()
		cmd.Stdin = strings.NewReader("hello\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hello: %v", err)
		}
		return string(out)
	}
	if caps := hello(); !strings.Contains(caps, " streamreqs=") {
		t.Fatalf("hello without stream: %q", caps)
	}
	hgrc := filepath.Join(src, ".hg", "hgrc")
	data, _ := os.ReadFile(hgrc)
	if err := os.WriteFile(hgrc, append(data, "[server]\nuncompressed = false\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if caps := hello(); strings.Contains(caps, "stream") {
		t.Errorf("hello with server.uncompressed=false: %q", caps)
	}
}
