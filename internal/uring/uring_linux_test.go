package uring

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// newRing returns a ring for the test, skipping (with why) where the
// kernel or sandbox has no io_uring: callers then use system calls.
func newRing(t *testing.T, entries int) *Ring {
	t.Helper()
	r, err := New(entries)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("io_uring is not available here (kernel or sandbox): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// testFiles writes n files (sizes 0 to ~2 KiB) into a new directory and
// returns it, its descriptor, the names and the contents.
func testFiles(t *testing.T, n int) (dirfd int, names []string, contents [][]byte) {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		data := bytes.Repeat([]byte{byte('a' + i%26)}, (i*517)%2100)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		contents = append(contents, data)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, names, contents
}

func cstrings(names []string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = append([]byte(n), 0)
	}
	return out
}

// TestReadFiles opens, reads and closes files through the ring (reads
// hard-linked to closes, as streamclone does) and compares with the
// files' contents; a missing file's open fails with ENOENT as openat(2)
// would.
func TestReadFiles(t *testing.T) {
	const n = 5
	r := newRing(t, 2*(n+1))
	dirfd, names, contents := testFiles(t, n)
	names = append(names, "missing")
	paths := cstrings(names)
	buf, err := r.Buffer(n * 2100)
	if err != nil {
		t.Fatal(err)
	}

	for i, p := range paths {
		r.Push(Openat(dirfd, p, unix.O_RDONLY|unix.O_CLOEXEC, uint64(i)))
	}
	fds := make([]int32, len(paths))
	seen := 0
	err = r.Run(func(c CQE) { fds[c.UserData] = c.Res; seen++ })
	runtime.KeepAlive(paths)
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(paths) {
		t.Fatalf("%d open completions, want %d", seen, len(paths))
	}
	if got := fds[n]; got != -int32(unix.ENOENT) {
		t.Errorf("open of a missing file: %d, want -ENOENT (%d)", got, -int32(unix.ENOENT))
	}

	const closeTag = 1 << 32
	off := 0
	offs := make([]int, n)
	for i := range n {
		if fds[i] < 0 {
			t.Fatalf("open %s: %v", names[i], unix.Errno(-fds[i]))
		}
		offs[i] = off
		read := Read(int(fds[i]), buf[off:off+len(contents[i])], 0, uint64(i))
		read.Flags |= SQEHardlink
		r.Push(read)
		r.Push(Close(int(fds[i]), closeTag|uint64(i)))
		off += len(contents[i])
	}
	reads := make([]int32, n)
	closed := 0
	err = r.Run(func(c CQE) {
		if c.UserData&closeTag != 0 {
			if c.Res != 0 {
				t.Errorf("close %s: %v", names[c.UserData&^closeTag], unix.Errno(-c.Res))
			}
			closed++
			return
		}
		reads[c.UserData] = c.Res
	})
	if err != nil {
		t.Fatal(err)
	}
	if closed != n {
		t.Errorf("%d closes completed, want %d", closed, n)
	}
	for i := range n {
		if int(reads[i]) != len(contents[i]) {
			t.Errorf("read %s: %d, want %d bytes", names[i], reads[i], len(contents[i]))
			continue
		}
		if !bytes.Equal(buf[offs[i]:offs[i]+len(contents[i])], contents[i]) {
			t.Errorf("read %s: contents differ", names[i])
		}
		// Closed by the ring: the descriptor is gone.
		if _, err := unix.FcntlInt(uintptr(fds[i]), unix.F_GETFD, 0); err != unix.EBADF {
			t.Errorf("descriptor of %s still open after the ring's close (%v)", names[i], err)
		}
	}
}

// TestStatx stats files through the ring and compares with fstatat(2),
// the reference: sizes of files, and the errno of a missing one.
func TestStatx(t *testing.T) {
	const n = 7
	r := newRing(t, n+1)
	dirfd, names, _ := testFiles(t, n)
	names = append(names, "missing")
	paths := cstrings(names)
	stx, err := r.StatxBuffer(len(paths))
	if err != nil {
		t.Fatal(err)
	}
	// Run twice: a ring serves batch after batch.
	for round := range 2 {
		for i, p := range paths {
			r.Push(Statx(dirfd, p, 0, unix.STATX_SIZE, &stx[i], uint64(i)))
		}
		res := make([]int32, len(paths))
		err = r.Run(func(c CQE) { res[c.UserData] = c.Res })
		runtime.KeepAlive(paths)
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range names {
			var st unix.Stat_t
			want := unix.Fstatat(dirfd, name, &st, 0)
			switch {
			case want != nil:
				if res[i] != -int32(want.(unix.Errno)) {
					t.Errorf("round %d: statx %s: %d, fstatat: %v", round, name, res[i], want)
				}
			case res[i] != 0:
				t.Errorf("round %d: statx %s: %v, fstatat succeeded", round, name, unix.Errno(-res[i]))
			case stx[i].Mask&unix.STATX_SIZE == 0:
				t.Errorf("round %d: statx %s: no size in mask %#x", round, name, stx[i].Mask)
			case int64(stx[i].Size) != st.Size:
				t.Errorf("round %d: statx %s: size %d, fstatat %d", round, name, stx[i].Size, st.Size)
			}
		}
	}
}

// TestMisuse checks what the package doc promises of misuse: panics
// for more requests than the ring holds and for a path without its NUL,
// an error for Run and Buffer after Close, and Close twice being fine.
func TestMisuse(t *testing.T) {
	r := newRing(t, 2)
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		f()
	}
	mustPanic("a path without NUL", func() { Openat(unix.AT_FDCWD, []byte("x"), 0, 0) })
	r.Push(Close(-1, 0))
	r.Push(Close(-1, 1))
	mustPanic("a third Push on a 2-entry ring", func() { r.Push(Close(-1, 2)) })
	var res []int32
	if err := r.Run(func(c CQE) { res = append(res, c.Res) }); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0] != -int32(unix.EBADF) || res[1] != -int32(unix.EBADF) {
		t.Errorf("closes of -1: %v, want two -EBADF", res)
	}
	r.Close()
	r.Close()
	if err := r.Run(func(CQE) {}); err == nil {
		t.Error("Run on a closed ring: no error")
	}
	if _, err := r.Buffer(10); err == nil {
		t.Error("Buffer on a closed ring: no error")
	}
	mustPanic("Push on a closed ring", func() { r.Push(Close(-1, 0)) })
	if _, err := New(0); err == nil {
		t.Error("New(0): no error")
	}
}

// TestAbandon makes io_uring_enter fail (the ring's descriptor replaced
// by /dev/null's: EOPNOTSUPP) and checks what the package doc promises:
// Run reports it and keeps reporting it, the ring is closed, and its
// buffer stays mapped through Close (touching it after Close would
// fault otherwise).
func TestAbandon(t *testing.T) {
	r := newRing(t, 2)
	buf, err := r.Buffer(4096)
	if err != nil {
		t.Fatal(err)
	}
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	if err := unix.Dup3(null, r.q.FD, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r.Push(Close(-1, 0))
	called := false
	err = r.Run(func(CQE) { called = true })
	if !errors.Is(err, unix.EOPNOTSUPP) || called {
		t.Fatalf("Run on a non-ring descriptor: %v (completion seen: %v), want EOPNOTSUPP", err, called)
	}
	if err2 := r.Run(func(CQE) {}); err2 != err {
		t.Errorf("second Run: %v, want the first failure %v", err2, err)
	}
	if r.q.FD != -1 {
		t.Errorf("abandoned ring still holds descriptor %d", r.q.FD)
	}
	r.Close()
	// Still mapped: were it not, this would fault and fail the test.
	buf[0], buf[len(buf)-1] = 1, 2
}
