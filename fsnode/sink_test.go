package fsnode

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

// storeFile is one file of a synthetic store: mostly small revlog index
// files, some larger data files, in a few hundred directories.
type storeFile struct {
	name string
	data []byte
}

func syntheticStore(n int, seed uint64) []storeFile {
	r := rand.New(rand.NewPCG(seed, 7))
	files := make([]storeFile, 0, n)
	for i := range n {
		size := 64 + r.IntN(3000)
		ext := ".i"
		if i%10 == 9 {
			size = 5000 + r.IntN(60000)
			ext = ".d"
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		name := fmt.Sprintf(".hg/store/data/d%03d/f%05d%s", i%300, i, ext)
		files = append(files, storeFile{name, data})
	}
	return append(files, storeFile{".hg/requires", []byte("generaldelta\nrevlogv1\nstore\nfncache\ndotencode\n")})
}

func ingest(t testing.TB, f *FS, files []storeFile) {
	s := f.NewSink(bg)
	sinkWrite(t, s, files)
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
}

// sinkWrite writes files through s, which stays open.
func sinkWrite(t testing.TB, s *Sink, files []storeFile) {
	t.Helper()
	for _, sf := range files {
		w, err := s.Create(sf.name, int64(len(sf.data)))
		if err != nil {
			t.Fatal(err)
		}
		// In chunks, as a stream decoder writes.
		for d := sf.data; len(d) > 0; {
			n := min(len(d), 32<<10)
			if _, err := w.Write(d[:n]); err != nil {
				t.Fatal(err)
			}
			d = d[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSinkIngest(t *testing.T) {
	files := syntheticStore(600, 1)
	dir := t.TempDir()
	f, err := Create(dir, Options{QueueCap: 64, BatchItems: 32})
	if err != nil {
		t.Fatal(err)
	}
	ingest(t, f, files)
	if st := f.Stats(); st.Batches == 0 || st.QueueDepth != 0 {
		t.Errorf("stats after Finish: %+v", st)
	}
	f = closeAndReopen(t, f, dir)
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		checkFsck(t, dir)
	}()
	for _, sf := range files {
		got, err := f.ReadFile(bg, sf.name)
		if err != nil {
			t.Fatalf("%s: %v", sf.name, err)
		}
		if !bytes.Equal(got, sf.data) {
			t.Fatalf("%s: contents differ", sf.name)
		}
	}
	// The io/fs view: fstest checks Open/Stat/ReadDir/ReadFile/Seek and
	// io.ReaderAt agree.
	// (On one directory: fstest reads every file byte by byte.)
	sub, err := fs.Sub(f.FS(), ".hg/store/data/d009")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "f00009.d", "f00309.d"); err != nil {
		t.Fatal(err)
	}
	view := f.FS()
	fh, err := view.Open(files[9].name)
	if err != nil {
		t.Fatal(err)
	}
	ra, ok := fh.(io.ReaderAt)
	if !ok {
		t.Fatal("view file is not an io.ReaderAt")
	}
	buf := make([]byte, 100)
	if _, err := ra.ReadAt(buf, 1000); err != nil || !bytes.Equal(buf, files[9].data[1000:1100]) {
		t.Fatalf("ReadAt: %v", err)
	}
	fh.Close()
	if _, err := view.Open("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open(../x) = %v, want ErrInvalid", err)
	}
	if _, err := view.Open(".hg/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

func TestSinkErrors(t *testing.T) {
	f := newTestFS(t, Options{})
	s := f.NewSink(bg)
	w, err := s.Create("a/short", 10)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("abc"))
	if err := w.Close(); !errors.Is(err, ErrShortWrite) {
		t.Errorf("short file Close = %v, want ErrShortWrite", err)
	}
	w, _ = s.Create("a/long", 2)
	if _, err := w.Write([]byte("abc")); !errors.Is(err, ErrTooLong) {
		t.Errorf("long write = %v, want ErrTooLong", err)
	}
	w.Close()
	for _, bad := range []string{"", "a/../b", "a//b", "./a", "a/\x00"} {
		if _, err := s.Create(bad, 1); err == nil {
			t.Errorf("Create(%q) accepted", bad)
		}
	}
	if _, err := s.Create("huge", 1<<62); err == nil {
		t.Error("Create with a 2^62 size accepted")
	}
	if _, err := f.LookupPath(bg, "a/short"); err == nil {
		t.Error("short file is visible")
	}
}

func TestSinkAbort(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 8})
	if err := f.WriteFile(bg, "keep", []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := f.NewSink(bg)
	for _, name := range []string{"x/y/z", "x/w", "keep2", ".hg/store/data/big.d"} {
		w, err := s.Create(name, 100)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(bytes.Repeat([]byte{'q'}, 100))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	ents, err := f.ReadDir(bg, RootIno, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name != "keep" {
		t.Fatalf("after Abort the root holds %v", ents)
	}
}

// BenchmarkIngest compares ingesting a 20,000-file store through the sink
// (one sync at Finish) with tar -x of the same files to a directory.
func BenchmarkIngest(b *testing.B) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	files := syntheticStore(n, 2)
	var total int64
	for _, sf := range files {
		total += int64(len(sf.data))
	}
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"sink", Options{}}, {"sink-nosync", Options{NoSync: true}}} {
		b.Run(mode.name, func(b *testing.B) { benchSink(b, files, total, mode.opt) })
	}
	b.Run("tar-x", func(b *testing.B) {
		if _, err := exec.LookPath("tar"); err != nil {
			b.Skip("no tar")
		}
		tarPath := filepath.Join(b.TempDir(), "store.tar")
		writeTar(b, tarPath, files)
		b.SetBytes(total)
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			if out, err := exec.Command("tar", "-x", "-C", dir, "-f", tarPath).CombinedOutput(); err != nil {
				b.Fatalf("tar: %v\n%s", err, out)
			}
			b.StopTimer()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
}

func writeTar(t testing.TB, path string, files []storeFile) {
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(fh)
	dirs := map[string]bool{}
	now := time.Now()
	for _, sf := range files {
		for d := filepath.Dir(sf.name); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: now})
	}
	for _, sf := range files {
		if err := tw.WriteHeader(&tar.Header{Name: sf.name, Mode: 0o644, Size: int64(len(sf.data)), ModTime: now}); err != nil {
			t.Fatal(err)
		}
		tw.Write(sf.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

func benchSink(b *testing.B, files []storeFile, total int64, opt Options) {
	b.SetBytes(total)
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		f, err := Create(dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ingest(b, f, files)
		b.StopTimer()
		st := f.Stats()
		b.ReportMetric(float64(st.Batches), "batches")
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		b.StartTimer()
	}
}

// TestUnfinishedIngestDurableAtClose: Close makes an ingest that was never
// finished durable too (its commits skipped their fsyncs).
func TestUnfinishedIngestDurableAtClose(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.NewSink(bg)
	w, _ := s.Create("a/b", 3)
	w.Write([]byte("abc"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Let a non-durable batch commit it, then close without Finish.
	for f.Stats().Batches == 0 {
		time.Sleep(time.Millisecond)
	}
	f.c.mu.Lock()
	before := f.c.unsynced
	f.c.mu.Unlock()
	if !before {
		t.Fatal("an ingest batch was fsynced")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f.c.mu.Lock()
	unsynced := f.c.unsynced
	f.c.mu.Unlock()
	if unsynced {
		t.Fatal("closed with an unsynced commit")
	}
	checkFsck(t, dir)
}

// TestSinkLargeFile: a sink file larger than the free-space check's
// interval (budgetCheck) is written in one reservation, on a disk with
// room for it, and reads back; so is a fallocate of that size.
func TestSinkLargeFile(t *testing.T) {
	f := newTestFS(t, Options{})
	data := make([]byte, budgetCheck+4096)
	for i := range data {
		data[i] = byte(i * 7)
	}
	s := f.NewSink(bg)
	w, err := s.Create("big.d", int64(len(data)))
	if err != nil {
		t.Fatalf("creating a %d-byte sink file: %v", len(data), err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadFile(bg, "big.d")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(data))
	}
	a, h, err := f.Create(bg, f.Root(), "reserved", 0o644, os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(h)
	if err := f.Fallocate(bg, a.Ino, 0, budgetCheck+4096, 0); err != nil {
		t.Fatalf("fallocate of %d bytes: %v", budgetCheck+4096, err)
	}
	if a, err = f.GetAttr(bg, a.Ino); err != nil || a.Size != budgetCheck+4096 {
		t.Fatalf("after fallocate: size %d, %v", a.Size, err)
	}
}

// TestSinkIngestEvict ingests many more files than QueueCap with and
// without Options.IngestEvict: with it, the inode table holds at most
// about twice what cannot be evicted (the 300 directories, the dirty
// inodes) once a commit is through, without it every file's; the files
// read back the same either way, evicted ones from the index, and after
// a reopen.
func TestSinkIngestEvict(t *testing.T) {
	files := syntheticStore(3000, 3)
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprint("evict=", evict), func(t *testing.T) {
			dir := t.TempDir()
			const queue = 64
			f := must[*FS](t)(CreateForIngest(dir, Options{QueueCap: queue, BatchItems: 32, IngestEvict: evict}))
			s := f.NewSink(bg)
			sinkWrite(t, s, files)
			// A commit while the sink is active (its afterCommit has run
			// when Sync returns).
			if err := f.Sync(bg); err != nil {
				t.Fatal(err)
			}
			f.imu.Lock()
			table := len(f.inodes)
			f.imu.Unlock()
			if evict && table > len(files)/3 || !evict && table < len(files) {
				t.Errorf("%d inodes in the table after a commit of %d files (queue %d)", table, len(files), queue)
			}
			for _, sf := range files {
				if got := must[[]byte](t)(f.ReadFile(bg, sf.name)); !bytes.Equal(got, sf.data) {
					t.Fatalf("%s: contents differ", sf.name)
				}
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
			f = closeAndReopen(t, f, dir)
			for _, sf := range files {
				if got := must[[]byte](t)(f.ReadFile(bg, sf.name)); !bytes.Equal(got, sf.data) {
					t.Fatalf("%s after reopen: contents differ", sf.name)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			checkFsck(t, dir)
		})
	}
}
