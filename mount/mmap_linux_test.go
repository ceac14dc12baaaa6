//go:build linux

package mount

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/internal/mmapload"
)

// mmapChild runs mmapload.Main with args in a child process (this test
// binary, see TestMain) and returns its standard output: the test
// process serves the mount and must never map its files itself.
func mmapChild(t *testing.T, args ...string) string {
	t.Helper()
	cmd := mmapChildCmd(args...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("mmap child %q: %v\n%s", args, err, msg)
	}
	return string(out)
}

func mmapChildCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mmapChildEnv+"=1")
	return cmd
}

// startReadyChild starts cmd (a child that writes "ready\n" once it
// is set up, then waits for a line on its standard input) and waits for
// its "ready"; it returns the child's standard input, the rest of its
// standard output and its standard error so far. A child that fails
// before it is ready fails the test, named what.
func startReadyChild(t *testing.T, cmd *exec.Cmd, what string) (io.WriteCloser, *bufio.Reader, *strings.Builder) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: %q, %v\n%s", what, line, err, stderr.String())
	}
	return stdin, r, stderr
}

// suiteMmap: shared mappings of files on the mount. A child writes
// through a mapping with msync; read(2) then sees those bytes, and so
// does a remount. A mapping made before a write(2) through another
// descriptor shows that write. And an fsx-like mix of read(2),
// write(2), mapped reads and writes and truncations agrees with a model
// of the file throughout.
func suiteMmap(t *testing.T, b backend, m *testMount) {
	const size = 1<<20 + 1000 // a partial last page
	name := m.path("mapped")
	if err := mmapload.Fill(name, size); err != nil {
		t.Fatal(err)
	}
	// The child checks every byte with read(2) after its msyncs.
	mmapChild(t, "writesync", name, "300", "7", "1")
	after, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != size {
		t.Fatalf("after mapped writes: %d bytes, want %d", len(after), size)
	}
	changed := 0
	for off, b := range after {
		if b != mmapload.Pattern(int64(off)) {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("read(2) sees none of the bytes written through the mapping")
	}
	m.remount(t)
	if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, after) {
		t.Fatalf("after a remount the file differs from what read(2) saw before it (%v)", err)
	}
	// And a mapping of the remounted file shows the same bytes.
	mapped := mapWaitChild(t, name, func() {})
	if !bytes.Equal(mapped, after) {
		t.Fatal("a mapping after the remount differs from read(2)")
	}

	// A mapping made (and its pages read) before a write(2) through
	// another descriptor shows the write.
	patch := []byte("written through another descriptor")
	offs := []int64{0, 4096*3 + 17, size - int64(len(patch))}
	mapped = mapWaitChild(t, name, func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, off := range offs {
			if _, err := f.WriteAt(patch, off); err != nil {
				t.Fatal(err)
			}
		}
	})
	want := bytes.Clone(after)
	for _, off := range offs {
		copy(want[off:], patch)
	}
	if !bytes.Equal(mapped, want) {
		for i := range want {
			if mapped[i] != want[i] {
				t.Fatalf("the mapping shows %#x at %d after write(2), want %#x", mapped[i], i, want[i])
			}
		}
	}

	mmapChild(t, "fsx", m.path("fsx"), "1500", "1")
}

// mapWaitChild has a child map name and read every page, runs between,
// then returns what the child's mapping holds.
func mapWaitChild(t *testing.T, name string, between func()) []byte {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := mmapChildCmd("mapwait", name)
	stdin, r, stderr := startReadyChild(t, cmd, "mapwait child")
	between()
	fmt.Fprintln(stdin)
	data := make([]byte, fi.Size())
	_, rerr := io.ReadFull(r, data)
	io.Copy(io.Discard, r) // the child's time
	if err := cmd.Wait(); err != nil || rerr != nil {
		t.Fatalf("mapwait child: %v, %v\n%s", err, rerr, stderr.String())
	}
	return data
}
