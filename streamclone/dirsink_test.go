package streamclone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t testing.TB, s Sink, n int, size int) {
	t.Helper()
	data := bytes.Repeat([]byte("x"), size)
	for i := 0; i < n; i++ {
		w, err := s.Create(fmt.Sprintf(".hg/store/data/d%d/f%d.i", i%10, i), int64(size))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDirSinkFinish(t *testing.T) {
	for _, opt := range []DirOptions{{}, DefaultDirOptions(),
		{BackgroundClose: true, ThreadCount: 2, MaxQueue: 1}, {BackgroundClose: true, Durable: true},
		{Writers: 1}, {Writers: 3, Durable: true}} {
		dest := filepath.Join(t.TempDir(), "new", "dest")
		s, err := NewDirSink(dest, opt)
		if err != nil {
			t.Fatal(err)
		}
		s.Expect(200, 200*100)
		writeFiles(t, s, 200, 100)
		if _, err := os.Stat(filepath.Join(dest, ".hg")); !os.IsNotExist(err) {
			t.Fatalf("%+v: .hg visible before Finish", opt)
		}
		if err := s.Finish(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dest, ".hg/store/data/d3/f123.i"))
		if err != nil || len(b) != 100 {
			t.Fatalf("%+v: %v %d", opt, err, len(b))
		}
		if _, err := os.Stat(filepath.Join(dest, stageName)); !os.IsNotExist(err) {
			t.Fatalf("%+v: stage left: %v", opt, err)
		}
		if _, err := s.Create(".hg/x", 0); !errors.Is(err, ErrSinkClosed) {
			t.Fatalf("Create after Finish: %v", err)
		}
	}
}

func TestDirSinkAbort(t *testing.T) {
	base := t.TempDir()
	// dest created by the sink (with a parent): removed.
	dest := filepath.Join(base, "created", "sub")
	s, err := NewDirSink(dest, DirOptions{BackgroundClose: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, s, 50, 10)
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "created")); !os.IsNotExist(err) {
		t.Fatalf("dest left: %v", err)
	}
	// dest existing and empty: left empty.
	dest = filepath.Join(base, "empty")
	os.Mkdir(dest, 0o755)
	s, err = NewDirSink(dest, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, s, 5, 10)
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dest); err != nil || len(ents) != 0 {
		t.Fatalf("dest not left empty: %v %v", ents, err)
	}
	// non-empty: refused.
	os.WriteFile(filepath.Join(dest, "f"), nil, 0o644)
	if _, err := NewDirSink(dest, DirOptions{}); !errors.Is(err, ErrDestNotEmpty) {
		t.Fatalf("got %v", err)
	}
	if err := CheckDest(filepath.Join(dest, "f")); !errors.Is(err, ErrDestNotEmpty) {
		t.Fatalf("file dest: %v", err)
	}
}

func TestDirSinkNames(t *testing.T) {
	base := t.TempDir()
	dest := filepath.Join(base, "d")
	s, err := NewDirSink(dest, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	for _, name := range []string{"../x", ".hg/../x", "x", "/abs", ".hg/a/../../b", ".hg//a", ".hg/", ".hg", ".hg/a\x00b", ".hgx/a"} {
		if _, err := s.Create(name, 0); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q: got %v", name, err)
		}
	}
	w, err := s.Create(".hg/a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err == nil {
		t.Error("write beyond declared size accepted")
	}
	w.Write([]byte("a"))
	if err := w.Close(); err == nil {
		t.Error("short file accepted")
	}
	if _, err := s.Create(".hg/a", 1); err == nil {
		t.Error("second create of .hg/a accepted")
	}
	ents, _ := os.ReadDir(base)
	if len(ents) != 1 {
		t.Errorf("files outside dest: %v", ents)
	}
}

// TestDirSinkFailedApply: a truncated stream applied into a DirSink leaves
// no repository and no staging directory.
func TestDirSinkFailedApply(t *testing.T) {
	body := v1Body(smallEntries, -1, -1)
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DefaultDirOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyV1(context.Background(), bytes.NewReader(body[:len(body)-3]), s, Options{}); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("dest left behind: %v", err)
	}
}

// BenchmarkDirSink measures the writers and the background closer against
// writing and closing inline (the figures behind DefaultDirOptions).
// 4,000 files of 1 KiB into ext4 (no journal), 2 cores, while other tests
// churned the same filesystem (so every create was slow), two runs of
// five: inline 2.41-3.19 s/op, four background closers 3.07-3.09, one
// writer 3.05-3.25, two 1.57-1.66, four 1.61-1.71, eight 1.58-1.66,
// defaults 1.66-1.67. A create is the cost; one writer only moves it, two
// overlap it with the applier, more change nothing on 2 cores.
func BenchmarkDirSink(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  DirOptions
	}{
		{"inline", DirOptions{}},
		{"background4", DirOptions{BackgroundClose: true, MinFileCount: 2048, MaxQueue: 384, ThreadCount: 4}},
		{"writers1", DirOptions{Writers: 1}},
		{"writers2", DirOptions{Writers: 2}},
		{"writers4", DirOptions{Writers: 4}},
		{"writers8", DirOptions{Writers: 8}},
		{"default", DefaultDirOptions()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dest := filepath.Join(b.TempDir(), "d")
				s, err := NewDirSink(dest, tc.opt)
				if err != nil {
					b.Fatal(err)
				}
				s.Expect(4000, 4000*1024)
				writeFiles(b, s, 4000, 1024)
				if err := s.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var _ io.WriteCloser = (*dirFile)(nil)
var _ = strings.Contains
