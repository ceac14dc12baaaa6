//go:build unix

package sysio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPreadPwriteFull(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if n, err := PwriteFull(fd, []byte("hello, world"), 3); n != 12 || err != nil {
		t.Fatalf("pwrite: %d %v", n, err)
	}
	buf := make([]byte, 5)
	if n, err := PreadFull(fd, buf, 10); n != 5 || err != nil || string(buf) != "world" {
		t.Fatalf("pread: %d %v %q", n, err, buf)
	}
	// Past the end: what there is, and io.EOF.
	if n, err := PreadFull(fd, buf, 12); n != 3 || !errors.Is(err, io.EOF) || string(buf[:n]) != "rld" {
		t.Fatalf("pread at the end: %d %v %q", n, err, buf[:n])
	}
	if b, _ := os.ReadFile(p); string(b) != "\x00\x00\x00hello, world" {
		t.Fatalf("file: %q", b)
	}
	// A bad descriptor's errno comes back as is.
	if _, err := PreadFull(-1, buf, 0); !errors.Is(err, unix.EBADF) {
		t.Fatalf("pread of -1: %v", err)
	}
}
