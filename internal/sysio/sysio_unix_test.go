//go:build unix

package sysio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
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

// TestRetry checks the EINTR helper: an interrupted call is made again
// until it returns anything else, which is returned as is, at once.
func TestRetry(t *testing.T) {
	calls := 0
	n, err := Retry(func() (int, error) {
		calls++
		if calls < 3 {
			return -1, unix.EINTR
		}
		return 7, nil
	})
	if n != 7 || err != nil || calls != 3 {
		t.Fatalf("after two EINTRs: %d %v, %d calls; want 7 <nil>, 3 calls", n, err, calls)
	}
	calls = 0
	n, err = Retry(func() (int, error) {
		calls++
		return -1, unix.EAGAIN
	})
	if n != -1 || err != unix.EAGAIN || calls != 1 {
		t.Fatalf("EAGAIN: %d %v, %d calls; want -1 EAGAIN, 1 call", n, err, calls)
	}
	// A wrapped EINTR is some caller's error, not an interrupted call.
	wrapped := fmt.Errorf("x: %w", unix.EINTR)
	calls = 0
	if _, err := Retry(func() (int, error) { calls++; return 0, wrapped }); err != wrapped || calls != 1 {
		t.Fatalf("wrapped EINTR: %v, %d calls", err, calls)
	}
}

// TestReadAllocs checks that the read paths allocate nothing per call:
// the retry's closures stay on the stack.
func TestReadAllocs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4)
	var st unix.Stat_t
	allocs := testing.AllocsPerRun(100, func() {
		PreadFull(f.Fd(), buf, 2)
		f.ReadAt(buf, 3)
		f.WriteAt(buf, 3)
		Fstat(f.Fd(), &st)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pread, pwrite and fstat, want 0", allocs)
	}
}

// TestReadFileDevice checks the bound on a file whose size fstat does
// not know: a device is read to its EOF, and one without an end is
// refused past the bound instead of filling memory.
func TestReadFileDevice(t *testing.T) {
	if b, err := ReadFile("/dev/null", 10); err != nil || len(b) != 0 {
		t.Errorf("/dev/null: %q %v", b, err)
	}
	if _, err := ReadFile("/dev/zero", 1<<20); !errors.Is(err, syscall.EFBIG) {
		t.Errorf("/dev/zero: %v, want EFBIG", err)
	}
}

// TestDirFSOpen checks a DirFS regular file (a plain descriptor) against
// what os.DirFS gives: contents, positions, Stat, errors once closed;
// and that directories are os.DirFS's.
func TestDirFSOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello, world"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := NewDirFS(dir, math.MaxInt)
	f, err := d.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*dirFile); !ok {
		t.Fatalf("Open of a regular file: %T, want a plain descriptor", f)
	}
	st, err := f.Stat()
	if err != nil || st.Name() != "f" || st.Size() != 12 || st.IsDir() || st.Mode() != 0o640 {
		t.Fatalf("Stat: %v %v", st, err)
	}
	buf := make([]byte, 5)
	if n, err := f.Read(buf); n != 5 || err != nil || string(buf) != "hello" {
		t.Fatalf("Read: %d %v %q", n, err, buf)
	}
	if off, err := f.(io.Seeker).Seek(-5, io.SeekEnd); off != 7 || err != nil {
		t.Fatalf("Seek: %d %v", off, err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "world" {
		t.Fatalf("ReadAll after Seek: %q %v", b, err)
	}
	if n, err := f.(io.ReaderAt).ReadAt(buf, 10); n != 2 || err != io.EOF {
		t.Fatalf("ReadAt past the end: %d %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.Read(buf); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	sub, err := d.Open("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if st, err := sub.Stat(); err != nil || !st.IsDir() {
		t.Errorf("Open of a directory: %v %v", st, err)
	}
	if _, err := d.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := d.Open("../f"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open of ../f: %v", err)
	}
}
