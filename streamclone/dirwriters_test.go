package streamclone

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// content is a file's expected bytes, different for every file.
func content(i int, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(i*7 + j*13 + j>>8)
	}
	return b
}

// writeSized creates name with data, written in pieces of piece bytes.
func writeSized(t *testing.T, s *DirSink, name string, data []byte, piece int) {
	t.Helper()
	w, err := s.Create(name, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		n := min(piece, len(rest))
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDirSinkWriters writes files of every size class, twice the writers'
// memory budget in all, through several configurations, and checks every
// file's bytes and that no reservation is left.
func TestDirSinkWriters(t *testing.T) {
	sizes := []int{0, 1, 240, smallFileMax - 1, smallFileMax, smallFileMax + 1, 1 << 20}
	for _, opt := range []DirOptions{
		{Writers: 1},
		{Writers: 4},
		{Writers: 2, Durable: true},
		{Writers: 4, BackgroundClose: true, ThreadCount: 2, MaxQueue: 1, Durable: true},
		DefaultDirOptions(),
	} {
		t.Run(fmt.Sprintf("%+v", opt), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "d")
			s, err := NewDirSink(dest, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{}
			total := 0
			for i := 0; total < 2*writerBudget; i++ {
				size := sizes[i%len(sizes)]
				name := fmt.Sprintf(".hg/store/data/d%d/f%d.i", i%7, i)
				want[name] = content(i, size)
				writeSized(t, s, name, want[name], 1000+i%3000)
				total += size
			}
			w := s.writers
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
			if w.held != 0 {
				t.Errorf("%d bytes still reserved after Finish", w.held)
			}
			for name, data := range want {
				got, err := os.ReadFile(filepath.Join(dest, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("%s: %d bytes differ from the %d written", name, len(got), len(data))
				}
			}
		})
	}
}

// TestDirSinkWritersError: a writer's failed create fails Finish with the
// file's path and the system's error; no .hg appears, and Abort leaves
// nothing.
func TestDirSinkWritersError(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DirOptions{Writers: 2})
	if err != nil {
		t.Fatal(err)
	}
	writeSized(t, s, ".hg/store/data/a.i", []byte("a"), 1)
	// A file where a writer will create one: its O_EXCL create fails.
	if err := os.WriteFile(filepath.Join(dest, stageName, "store/data/b.i"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	writeSized(t, s, ".hg/store/data/b.i", []byte("b"), 1)
	err = s.Finish()
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "b.i") {
		t.Fatalf("Finish: %v, want EEXIST naming b.i", err)
	}
	if _, err := os.Stat(filepath.Join(dest, ".hg")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf(".hg after a failed Finish: %v", err)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dest left: %v", err)
	}
}

// TestDirSinkWritersLaterCreate: once a writer has failed, a later Create
// reports it.
func TestDirSinkWritersLaterCreate(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DirOptions{Writers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	writeSized(t, s, ".hg/store/x", nil, 1)
	if err := os.WriteFile(filepath.Join(dest, stageName, "store/bad.i"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	writeSized(t, s, ".hg/store/bad.i", []byte("x"), 1)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		w, err := s.Create(fmt.Sprintf(".hg/store/f%d.i", i), 1)
		if err != nil {
			if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "bad.i") {
				t.Fatalf("Create: %v, want the writer's EEXIST on bad.i", err)
			}
			return
		}
		w.Write([]byte("y"))
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Create reported the failed write after %d files", i)
		}
	}
}

// TestDirSinkWritersAbort: files handed over but not yet given to a
// writer are dropped, and their reservations released.
func TestDirSinkWritersAbort(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DirOptions{Writers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Fewer than a batch: none of them reaches a writer.
	for i := 0; i < writerBatchSize-1; i++ {
		writeSized(t, s, fmt.Sprintf(".hg/store/f%d.i", i), content(i, 100), 100)
	}
	w := s.writers
	if w.held != int64((writerBatchSize-1)*100) {
		t.Fatalf("%d bytes reserved, want %d", w.held, (writerBatchSize-1)*100)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if w.held != 0 {
		t.Errorf("%d bytes still reserved after Abort", w.held)
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dest left: %v", err)
	}
	// A file still open at Abort cannot be handed over.
	dest = filepath.Join(t.TempDir(), "d")
	if s, err = NewDirSink(dest, DirOptions{Writers: 2}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Create(".hg/store/late.i", 1)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("z"))
	s.Abort()
	if err := f.Close(); !errors.Is(err, ErrSinkClosed) {
		t.Errorf("Close after Abort: %v", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dest left: %v", err)
	}
}

// TestDirSinkWritersSizes: short and oversized small files are refused,
// and their reservations released.
func TestDirSinkWritersSizes(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DirOptions{Writers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	w, err := s.Create(".hg/store/short.i", 10)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("abc"))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "3 bytes written, 10 declared") {
		t.Errorf("short file: %v", err)
	}
	w, err = s.Create(".hg/store/long.i", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err == nil {
		t.Error("write beyond the declared size accepted")
	}
	if err := w.Close(); err == nil {
		t.Error("file with nothing written accepted")
	}
	if s.writers.held != 0 {
		t.Errorf("%d bytes still reserved", s.writers.held)
	}
}
