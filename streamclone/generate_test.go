package streamclone

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyEntrySnapshot: a file is streamed up to its recorded size even
// if it grew; a file that shrank is hg's "clone could only read" error.
func TestCopyEntrySnapshot(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.i")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	var out bytes.Buffer
	buf := make([]byte, 3)
	if err := copyEntry(context.Background(), genEntry{name: "data/f.i", path: p, size: 7}, &out, buf); err != nil || out.String() != "0123456" {
		t.Fatalf("grown file: %q %v", out.String(), err)
	}
	err := copyEntry(context.Background(), genEntry{name: "data/f.i", path: p, size: 12}, &out, buf)
	if err == nil || !strings.Contains(err.Error(), "clone could only read 10 bytes from data/f.i, but expected 12 bytes") {
		t.Fatalf("shrunk file: %v", err)
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
	defaults := append(DefaultRequirements(), "persistent-nodemap")
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
