package streamclone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/store"
)

// TestCopyEntrySnapshot: a file is streamed up to its recorded size even
// if it grew; a file that shrank is hg's "clone could only read" error.
// Both for files read ahead (small) and files copied in buffers (large).
func TestCopyEntrySnapshot(t *testing.T) {
	dir := t.TempDir()
	small := []byte("0123456789")
	large := bytes.Repeat([]byte("abcdefghijklmnopq"), (prefetchMax+copyBufSize)/16)
	os.WriteFile(filepath.Join(dir, "f.i"), small, 0o644)
	os.WriteFile(filepath.Join(dir, "g.d"), large, 0o644)
	for _, tc := range []struct {
		rel  string
		size int64
		want string // content, or error
	}{
		{"f.i", 7, "0123456"},
		{"f.i", 12, "clone could only read 10 bytes from data/f.i, but expected 12 bytes"},
		{"g.d", int64(len(large)) - 5, string(large[:len(large)-5])},
		{"g.d", int64(len(large)) + 1, fmt.Sprintf("clone could only read %d bytes from data/g.d, but expected %d bytes", len(large), len(large)+1)},
	} {
		// readers 0 and 2, each with a plain io.Writer and an io.ReaderFrom.
		for _, mode := range []int{0, 1, 2, 3} {
			readers := 2 * (mode / 2)
			entries := []genEntry{{name: "data/" + tc.rel, dir: dir, rel: tc.rel, size: tc.size}}
			r := newEntryReader(context.Background(), entries, readers)
			var out bytes.Buffer
			var w io.Writer = &out // bytes.Buffer has ReadFrom
			if mode%2 == 0 {
				w = struct{ io.Writer }{&out}
			}
			err := r.copy(&entries[0], w)
			r.close()
			if strings.HasPrefix(tc.want, "clone could only read") {
				if err == nil || err.Error() != tc.want {
					t.Errorf("%s size %d, %d readers: got %v, want %q", tc.rel, tc.size, readers, err, tc.want)
				}
			} else if err != nil || out.String() != tc.want {
				t.Errorf("%s size %d, %d readers: got %d bytes, %v", tc.rel, tc.size, readers, out.Len(), err)
			}
		}
	}
}

// TestEntryReaderOrder: many files, small and large mixed, come out in
// entry order with their contents; stopping half-way (a missing file)
// reports it and close leaves no reader behind (the race detector and
// the goroutine count check that).
func TestEntryReaderOrder(t *testing.T) {
	dir := t.TempDir()
	var entries []genEntry
	var want bytes.Buffer
	for i := range 300 {
		size := i * 7
		if i%7 == 0 {
			size = i * 900 // batches fill by bytes as well as by count
		}
		if i%50 == 3 {
			size = prefetchMax + 1000*i
		}
		data := bytes.Repeat([]byte{byte(i)}, size)
		name := fmt.Sprintf("f%03d.i", i)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, genEntry{name: "data/" + name, dir: dir, rel: name, size: int64(size)})
		want.Write(data)
	}
	before := runtime.NumGoroutine()
	for _, readers := range []int{0, 1, 3} {
		r := newEntryReader(context.Background(), entries, readers)
		var got bytes.Buffer
		for i := range entries {
			if err := r.copy(&entries[i], &got); err != nil {
				t.Fatal(err)
			}
		}
		r.close()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%d readers: content differs: %d bytes, want %d", readers, got.Len(), want.Len())
		}
	}
	os.Remove(filepath.Join(dir, "f200.i"))
	for _, stop := range []int{0, 10, 200} {
		r := newEntryReader(context.Background(), entries, 2)
		var err error
		for i := range entries {
			if i == stop && stop != 200 {
				break // the writer gives up early: close must still return
			}
			if err = r.copy(&entries[i], io.Discard); err != nil {
				break
			}
		}
		r.close()
		if stop == 200 && (!errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "f200.i")) {
			t.Fatalf("missing file: %v", err)
		}
	}
	// close waits for the readers' WaitGroup, and a reader still counts
	// in NumGoroutine for the moment between its wg.Done and its exit
	// (seen under -race and load: "3 goroutines after close, 2 before").
	// A reader left behind stays; give exiting ones a second.
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > before && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines a second after close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestNodemapDropped: persistent-nodemap files in a stream are not written
// when the clone lacks the requirement (hg's post_stream_cleanup), and are
// kept when it has it.
func TestNodemapDropped(t *testing.T) {
	entries := append([]v2Entry{{'s', "00changelog.n", "docket"}, {'s', "00changelog-1234abcd.nd", "nodemap"}}, smallV2...)
	sink, _, err := applyBundleMem(t, stream2Bundle(t, entries, -1, -1, testReqs, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name := range sink.files {
		if strings.Contains(name, "00changelog.n") || strings.HasSuffix(name, ".nd") {
			t.Errorf("nodemap file %s written", name)
		}
	}
	defaults := append(store.DefaultRequirements().List(), "persistent-nodemap")
	sink, _, err = applyBundleMem(t, stream2Bundle(t, entries, -1, -1, testReqs, nil), Options{DefaultRequirements: defaults})
	if err != nil {
		t.Fatal(err)
	}
	if string(sink.files[".hg/store/00changelog.n"]) != "docket" || string(sink.files[".hg/store/00changelog-1234abcd.nd"]) != "nodemap" {
		t.Errorf("nodemap files not written: %q", sink.order)
	}
}

// TestCancelMidStream: cancelling during an apply into a DirSink leaves
// nothing behind.
func TestCancelMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dest := filepath.Join(t.TempDir(), "d")
	s, err := NewDirSink(dest, DirOptions{BackgroundClose: true, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	data := stream2Bundle(t, smallV2, -1, -1, testReqs, nil)
	_, err = ApplyBundle(ctx, bytes.NewReader(data), s, Options{Progress: func(files int, _ int64) {
		if files == 2 {
			cancel()
		}
	}})
	if err != context.Canceled {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("dest left: %v", err)
	}
}
