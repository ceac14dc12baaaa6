package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileReader reads batches of files through a FileReader and checks
// every result against os.ReadFile: whole files, files cut at Len, a
// missing file, a directory, a file in a subdirectory; then a second
// batch through the same ring.
func TestFileReader(t *testing.T) {
	dirfd, names, contents := testFiles(t, 40)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x.i"), []byte("in a subdirectory"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sub)

	const slot = 1024
	f, err := NewFileReader(32, 32*slot)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("io_uring is not available here (kernel or sandbox): %v", err)
		}
		t.Fatal(err)
	}
	defer f.Close()
	if f.Files() != 32 {
		t.Fatalf("Files() = %d, want 32", f.Files())
	}

	type want struct {
		data []byte
		err  unix.Errno
	}
	for round, batch := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {20, 21, 22, 23, 24, 25, 26, 27}} {
		var reqs []FileReq
		var wants []want
		for k, i := range batch {
			reqs = append(reqs, FileReq{Dir: dirfd, Name: names[i], Off: k * slot, Len: slot})
			w := contents[i]
			if len(w) > slot {
				w = w[:slot]
			}
			wants = append(wants, want{data: w})
		}
		k := len(reqs)
		reqs = append(reqs,
			FileReq{Dir: dirfd, Name: "missing", Off: k * slot, Len: slot},
			FileReq{Dir: sub, Name: "sub", Off: (k + 1) * slot, Len: slot},
			FileReq{Dir: sub, Name: "sub/x.i", Off: (k + 2) * slot, Len: slot},
			FileReq{Dir: sub, Name: "sub/x.i", Off: (k + 3) * slot, Len: 4},
		)
		wants = append(wants, want{err: unix.ENOENT}, want{err: unix.EISDIR},
			want{data: []byte("in a subdirectory")}, want{data: []byte("in a")})
		res, ok := f.Read(reqs)
		if !ok {
			t.Fatal("ring failed")
		}
		for i, w := range wants {
			switch {
			case w.err != 0:
				if res[i] != -int32(w.err) {
					t.Errorf("round %d: %s: result %d, want -%v", round, reqs[i].Name, res[i], w.err)
				}
			case res[i] < 0:
				t.Errorf("round %d: %s: %v", round, reqs[i].Name, unix.Errno(-res[i]))
			default:
				got := f.Bytes()[reqs[i].Off : reqs[i].Off+int(res[i])]
				if !bytes.Equal(got, w.data) {
					t.Errorf("round %d: %s: read %q, want %q", round, reqs[i].Name, got, w.data)
				}
			}
		}
	}
}
