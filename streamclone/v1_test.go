package streamclone

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
)

type tEntry struct {
	name string
	data string
}

// smallRevlog is a valid one-revision inline revlog-ish payload; content
// does not matter to the stream layer.
var smallEntries = []tEntry{
	{"data/Foo_Bar.txt.i", "\x00\x01\x00\x01index-and-data"},
	{"data/b.d", strings.Repeat("d", 300)},
	{"00manifest.i", inlineIndex("manifest")},
	{"00changelog.i", inlineIndex("changelog")},
}

// inlineIndex is a one-revision inline revlog holding chunk: the
// changelog and manifest must be well-formed for the applier to finish
// (indexCheck); their content does not matter otherwise.
func inlineIndex(chunk string) string {
	e := make([]byte, 64)
	binary.BigEndian.PutUint32(e[0:], 1<<16|1) // version 1, inline data
	binary.BigEndian.PutUint32(e[8:], uint32(len(chunk)))
	binary.BigEndian.PutUint32(e[12:], uint32(len(chunk)))
	binary.BigEndian.PutUint32(e[24:], 0xFFFFFFFF) // no parents
	binary.BigEndian.PutUint32(e[28:], 0xFFFFFFFF)
	return string(e) + chunk
}

// v1Body builds a stream_out body; files/bytes < 0 take the true values.
func v1Body(entries []tEntry, files, bytes int) []byte {
	var b strings.Builder
	total := 0
	for _, e := range entries {
		total += len(e.data)
	}
	if files < 0 {
		files = len(entries)
	}
	if bytes < 0 {
		bytes = total
	}
	fmt.Fprintf(&b, "0\n%d %d\n", files, bytes)
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\x00%d\n%s", e.name, len(e.data), e.data)
	}
	return []byte(b.String())
}

func applyV1Mem(t testing.TB, body []byte, opt Options) (*memSink, *Result, error) {
	sink := newMemSink()
	res, err := ApplyV1(context.Background(), bytes.NewReader(body), sink, opt)
	sink.checkOutcome(t, err)
	return sink, res, err
}

func TestApplyV1(t *testing.T) {
	var calls int
	var last int64
	sink, res, err := applyV1Mem(t, v1Body(smallEntries, -1, -1), Options{
		Requirements: []string{"generaldelta", "revlogv1", "sparserevlog"},
		Progress: func(files int, bytes int64) {
			if bytes < last {
				t.Errorf("progress went back: %d < %d", bytes, last)
			}
			last = bytes
			calls++
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".hg/store/data/_foo___bar.txt.i": smallEntries[0].data,
		".hg/store/data/b.d":              smallEntries[1].data,
		".hg/store/00manifest.i":          smallEntries[2].data,
		".hg/store/00changelog.i":         smallEntries[3].data,
		".hg/store/fncache":               "data/Foo_Bar.txt.i\ndata/b.d\n",
		".hg/00changelog.i":               store.DummyChangelog,
		".hg/requires":                    "share-safe\n",
		".hg/store/requires":              "dotencode\nfncache\ngeneraldelta\nrevlogv1\nsparserevlog\nstore\n",
	}
	for name, content := range want {
		if got, ok := sink.files[name]; !ok || string(got) != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if len(sink.files) != len(want) {
		t.Errorf("files %q", sink.order)
	}
	if sink.order[len(sink.order)-1] != ".hg/requires" {
		t.Errorf(".hg/requires not written last: %q", sink.order)
	}
	total := 0
	for _, e := range smallEntries {
		total += len(e.data)
	}
	if res.Files != 4 || res.Bytes != int64(total) {
		t.Errorf("result %+v, want 4 files, %d bytes", res, total)
	}
	if calls == 0 || last != res.Bytes || sink.expected != 4 {
		t.Errorf("progress calls %d last %d result %+v expected %d", calls, last, res, sink.expected)
	}
}

func TestApplyV1Status(t *testing.T) {
	for _, tc := range []struct {
		body string
		is   error
		msg  string
	}{
		{"1\n", ErrForbidden, "operation forbidden by server"},
		{"2\n", ErrRemoteLock, "locking the remote repository failed"},
		{"3\n", ErrRemote, "the server sent an unknown error code"},
		{"", ErrCorrupt, "stream ended unexpectedly"},
		{"0\n", ErrCorrupt, "stream ended unexpectedly"},
		{"0\n1\n", ErrCorrupt, "unexpected response"},
		{"0\n-1 0\n", ErrCorrupt, "invalid file count"},
		{"0\n1 x\n", ErrCorrupt, "invalid byte count"},
	} {
		_, _, err := applyV1Mem(t, []byte(tc.body), Options{})
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: got %v, want %v containing %q", tc.body, err, tc.is, tc.msg)
		}
	}
}

func TestApplyV1BadNames(t *testing.T) {
	for _, name := range []string{
		"../hgrc", "../../etc/passwd", "/etc/passwd", "data/../../hgrc", "data/../../../x.i",
		".hg/hgrc", "hgrc", "requires", "fncache", "lock", "undo.i", "journal", "data//a.i",
		"data/./a.i", "", "C:/x.i", "data\\a.i", "data/a\rb.i", "data/a.txt", "x/y.i",
	} {
		body := v1Body([]tEntry{{name, "x"}}, -1, -1)
		sink, _, err := applyV1Mem(t, body, Options{})
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("name %q: got %v, want ErrCorrupt", name, err)
		}
		for f := range sink.files {
			if f != ".hg/00changelog.i" {
				t.Errorf("name %q: files written: %q", name, sink.order)
			}
		}
	}
	// A NUL or newline inside a name breaks the line structure: still an error.
	for _, body := range []string{"0\n1 1\ndata/a\x00b.i\x001\nx", "0\n1 1\ndata/a\nb.i\x001\nx", "0\n1 1\ndata/a.i\n"} {
		if _, _, err := applyV1Mem(t, []byte(body), Options{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: got %v", body, err)
		}
	}
}

func TestApplyV1Counts(t *testing.T) {
	body := func(files, bytes int) []byte { return v1Body(smallEntries, files, bytes) }
	total := 0
	for _, e := range smallEntries {
		total += len(e.data)
	}
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"fewer files declared", body(3, -1), "declared"},
		{"more files declared", body(5, -1), "stream ended unexpectedly"},
		{"fewer bytes declared", body(-1, total-1), "exceeds the declared total"},
		{"more bytes declared", body(-1, total+1), "declared"},
		{"size beyond stream", []byte("0\n1 100\ndata/a.i\x00100\nshort"), "stream ended unexpectedly"},
		{"huge size", []byte("0\n1 100\ndata/a.i\x0099999999999999\nx"), "exceeds the declared total"},
		{"negative size", []byte("0\n1 100\ndata/a.i\x00-1\nx"), "invalid size"},
		{"duplicate", v1Body([]tEntry{{"data/a.i", "x"}, {"data/a.i", "y"}}, -1, -1), "twice"},
	} {
		_, _, err := applyV1Mem(t, tc.body, Options{})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want ErrCorrupt with %q", tc.name, err, tc.msg)
		}
	}
}

func TestApplyV1Requirements(t *testing.T) {
	_, _, err := applyV1Mem(t, v1Body(smallEntries, -1, -1), Options{Requirements: []string{"revlogv1", "frobnicate", "alpha"}})
	if !errors.Is(err, ErrUnsupportedRequirement) || !strings.Contains(err.Error(), "unable to apply stream clone: unsupported format: alpha, frobnicate") {
		t.Fatalf("got %v", err)
	}
}

// TestApplyNoStore applies a stream into a repository without the
// "store" requirement (a local clone of one): the store is .hg itself,
// names are encoded as basicstore encodes them, there is no dummy
// changelog, and a name that is not a revlog, phaseroots or obsstore
// (hgrc, requires, dirstate) is refused there as anywhere.
func TestApplyNoStore(t *testing.T) {
	sink, _, err := applyV1Mem(t, v1Body(append([]tEntry{{"data/dir.i/x.i", "\x00\x01\x00\x01y"}}, smallEntries...), -1, -1), Options{DefaultRequirements: []string{"revlogv1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".hg/data/Foo_Bar.txt.i", ".hg/data/b.d", ".hg/data/dir.i.hg/x.i", ".hg/00manifest.i", ".hg/requires"} {
		if _, ok := sink.files[name]; !ok {
			t.Errorf("%s missing; files: %v", name, sink.order)
		}
	}
	if got := string(sink.files[".hg/00changelog.i"]); got != inlineIndex("changelog") {
		t.Errorf(".hg/00changelog.i = %q, want the streamed changelog", got)
	}
	for name := range sink.files {
		if strings.HasPrefix(name, ".hg/store/") && name != ".hg/store/requires" {
			t.Errorf("%s written into a repository without a store", name)
		}
	}
	for _, bad := range []string{"hgrc", "requires", "dirstate", "undo.i"} {
		_, _, err := applyV1Mem(t, v1Body([]tEntry{{bad, "x"}}, -1, -1), Options{DefaultRequirements: []string{"revlogv1"}})
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", bad, err)
		}
	}
}

// TestApplyV1Truncated cuts a valid stream at every offset: each must fail
// cleanly (aborted, never finished), never panic.
func TestApplyV1Truncated(t *testing.T) {
	body := v1Body(smallEntries, -1, -1)
	for i := 0; i < len(body); i++ {
		sink, _, err := applyV1Mem(t, body[:i], Options{})
		if err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
		if sink.finished {
			t.Fatalf("truncated at %d: finished", i)
		}
	}
}

func TestApplyV1Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sink := newMemSink()
	_, err := ApplyV1(ctx, bytes.NewReader(v1Body(smallEntries, -1, -1)), sink, Options{})
	sink.checkOutcome(t, err)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func FuzzV1(f *testing.F) {
	f.Add(v1Body(smallEntries, -1, -1))
	if b, err := os.ReadFile("testdata/hg63-stream_out.bin"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("0\n1 1\n../x\x001\nx"))
	f.Add([]byte("1\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		applyV1Mem(t, body, Options{})
	})
}

// TestApplyNoReadAhead: with a *bufio.Reader, what follows a v1 stream or
// a bundle2 stream on the connection stays readable (ssh peers).
func TestApplyNoReadAhead(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		v1   bool
	}{
		{"v1", v1Body(smallEntries, -1, -1), true},
		{"bundle2", stream2Bundle(t, smallV2, -1, -1, testReqs, nil), false},
	} {
		br := bufio.NewReader(bytes.NewReader(append(append([]byte(nil), tc.data...), "NEXT"...)))
		var err error
		if tc.v1 {
			_, err = ApplyV1(context.Background(), br, newMemSink(), Options{})
		} else {
			_, err = ApplyBundle(context.Background(), br, newMemSink(), Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if rest, _ := io.ReadAll(br); string(rest) != "NEXT" {
			t.Errorf("%s: left %q", tc.name, rest)
		}
	}
}
