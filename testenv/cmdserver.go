package testenv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// HgServer is one long-running `hg serve --cmdserver pipe` process: it
// runs many hg commands without paying Python's start-up for each, which
// is what keeps golden tests that compare dozens of commands fast. The
// protocol (hg help internals.cmdserver... see mercurial/commandserver.py):
// the server sends framed messages — a channel byte ('o' output, 'e'
// error, 'r' result, 'I'/'L' input requests), a big-endian uint32 length,
// the data; a client sends "runcommand\n", a uint32 length and the
// NUL-separated arguments.
//
// The server caches the repository between commands, so tests that modify
// a repository behind its back should use HgResult instead.
type HgServer struct {
	mu    sync.Mutex
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	pipe  *os.File // out's pipe, for read deadlines
}

// StartHgServer starts a command server in dir, stopped at the end of the
// test.
func StartHgServer(t testing.TB, dir string) *HgServer {
	t.Helper()
	return startHgServer(t, HgPath(t), dir)
}

// StartServer starts a command server of this Mercurial in dir, as
// StartHgServer does for the hg on PATH. Started outside a repository,
// it opens the repository each command names (-R, --cwd) afresh, so it
// may run commands that modify repositories.
func (m Mercurial) StartServer(t testing.TB, dir string) *HgServer {
	t.Helper()
	return startHgServer(t, m.Path, dir)
}

func startHgServer(t testing.TB, hg, dir string) *HgServer {
	t.Helper()
	cmd := exec.Command(hg, HgArgs(dir, "serve", "--cmdserver", "pipe")...)
	cmd.Env = HgEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting hg command server: %v", err)
	}
	s := &HgServer{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	s.pipe, _ = stdout.(*os.File)
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	// A closed stdin ends the server; one that does not end is killed.
	stop := func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(stop)
	s.deadline()
	ch, data, err := s.readFrame()
	if err != nil || ch != 'o' || !strings.Contains(string(data), "runcommand") {
		stop() // stderr is written until hg exits
		t.Fatalf("hg command server hello: channel %q %q %v\n%s", ch, data, err, stderr.String())
	}
	return s
}

// hgServerWait bounds the wait for the server's hello and for each
// command's result, as hgWait bounds an hg run.
const hgServerWait = hgWait

// deadline bounds the reads of the next exchange (where the pipe allows).
func (s *HgServer) deadline() {
	if s.pipe != nil {
		s.pipe.SetReadDeadline(time.Now().Add(hgServerWait))
	}
}

func (s *HgServer) readFrame() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(s.out, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if hdr[0] == 'I' || hdr[0] == 'L' { // input request: n is the size wanted
		return hdr[0], nil, nil
	}
	if n > 1<<30 {
		return 0, nil, fmt.Errorf("command server frame of %d bytes", n)
	}
	data := make([]byte, n)
	_, err := io.ReadFull(s.out, data)
	return hdr[0], data, err
}

// Run runs one hg command (arguments as on the command line, e.g.
// "--cwd", dir, "log") and returns its output, error output and exit
// status.
func (s *HgServer) Run(t testing.TB, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	payload := strings.Join(args, "\x00")
	msg := make([]byte, 0, len(payload)+16)
	msg = append(msg, "runcommand\n"...)
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(payload)))
	msg = append(msg, payload...)
	if _, err := s.stdin.Write(msg); err != nil {
		t.Fatalf("hg command server: %v", err)
	}
	s.deadline()
	for {
		ch, data, err := s.readFrame()
		if err != nil {
			t.Fatalf("hg command server: running hg %s: %v", strings.Join(args, " "), err)
		}
		switch ch {
		case 'o':
			stdout = append(stdout, data...)
		case 'e':
			stderr = append(stderr, data...)
		case 'r':
			if len(data) != 4 {
				t.Fatalf("hg command server: result of %d bytes", len(data))
			}
			return stdout, stderr, int(int32(binary.BigEndian.Uint32(data)))
		case 'I', 'L':
			// No input to give: an empty answer means EOF.
			if _, err := s.stdin.Write([]byte{0, 0, 0, 0}); err != nil {
				t.Fatalf("hg command server: %v", err)
			}
		default:
			if ch >= 'A' && ch <= 'Z' {
				t.Fatalf("hg command server: unexpected required channel %q", ch)
			}
		}
	}
}
