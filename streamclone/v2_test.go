package streamclone

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
)

type v2Entry struct {
	src  byte
	name string
	data string
}

var smallV2 = []v2Entry{
	{'s', "data/Foo_Bar.txt.i", "foo revlog"},
	{'s', "meta/Dir/00manifest.i", "tree manifest"},
	{'s', "00manifest.i", inlineIndex("manifest")},
	{'s', "00changelog.i", inlineIndex(strings.Repeat("c", 40000))},
	{'s', "phaseroots", "1 0123\n"},
	{'c', "branch2-served", "cache"},
}

func stream2Payload(entries []v2Entry) []byte {
	var b []byte
	for _, e := range entries {
		b = append(b, e.src)
		b = binary.AppendUvarint(b, uint64(len(e.name)))
		b = binary.AppendUvarint(b, uint64(len(e.data)))
		b = append(b, e.name...)
		b = append(b, e.data...)
	}
	return b
}

// stream2Bundle builds an HG20 bundle with one stream2 part (counts < 0
// take the true values) followed by extra parts.
func stream2Bundle(t testing.TB, entries []v2Entry, files int, bytes int64, reqs string, extra func(*bundle2.Writer)) []byte {
	t.Helper()
	var total int64
	for _, e := range entries {
		total += int64(len(e.data))
	}
	if files < 0 {
		files = len(entries)
	}
	if bytes < 0 {
		bytes = total
	}
	var buf strings.Builder
	bw, err := bundle2.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.WritePart("stream2", true, []bundle2.Param{
		{Name: "bytecount", Value: strconv.FormatInt(bytes, 10)}, {Name: "filecount", Value: strconv.Itoa(files)}, {Name: "requirements", Value: bundle2.Quote(reqs)}}, nil, stream2Payload(entries)); err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		extra(bw)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

const testReqs = "generaldelta,revlogv1,sparserevlog"

func applyBundleMem(t testing.TB, data []byte, opt Options) (*memSink, *Result, error) {
	sink := newMemSink()
	res, err := ApplyBundle(context.Background(), bytes.NewReader(data), sink, opt)
	sink.checkOutcome(t, err)
	return sink, res, err
}

func TestApplyStream2(t *testing.T) {
	node := bytes.Repeat([]byte{0xab}, 20)
	data := stream2Bundle(t, smallV2, -1, -1, testReqs+",bookmarksinstore", func(bw *bundle2.Writer) {
		var bm []byte
		for _, name := range []string{"zz", "a b"} {
			bm = append(bm, node...)
			bm = binary.BigEndian.AppendUint16(bm, uint16(len(name)))
			bm = append(bm, name...)
		}
		bw.WritePart("bookmarks", false, nil, nil, bm)
		bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "bookmarks"}}, nil, []byte("other\t"+strings.Repeat("0", 40)+"\n"))
		bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "phases"}}, nil, []byte("publishing\tTrue\n"))
		bw.WritePart("output", false, nil, nil, []byte("hello from server\n"))
		bw.WritePart("phase-heads", false, nil, nil, append(append(be32(0), node...), append(be32(1), node...)...))
		bw.WritePart("cache:rev-branch-cache", false, nil, nil, []byte("ignored"))
		bw.WritePart("some-advisory-part", false, []bundle2.Param{{Name: "Whatever", Value: "1"}}, nil, []byte("skipped"))
	})
	var out string
	sink, res, err := applyBundleMem(t, data, Options{Output: func(s string) { out += s }})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".hg/store/data/_foo___bar.txt.i":  "foo revlog",
		".hg/store/meta/_dir/00manifest.i": "tree manifest",
		".hg/store/00manifest.i":           smallV2[2].data,
		".hg/store/00changelog.i":          smallV2[3].data,
		".hg/store/phaseroots":             "1 0123\n",
		".hg/cache/branch2-served":         "cache",
		".hg/store/fncache":                "data/Foo_Bar.txt.i\nmeta/Dir/00manifest.i\n",
		".hg/store/bookmarks":              strings.Repeat("ab", 20) + " a b\n" + strings.Repeat("ab", 20) + " zz\n",
		".hg/00changelog.i":                store.DummyChangelog,
		".hg/requires":                     "share-safe\n",
		".hg/store/requires":               "bookmarksinstore\ndotencode\nfncache\ngeneraldelta\nrevlogv1\nsparserevlog\nstore\n",
	}
	for name, content := range want {
		if got, ok := sink.files[name]; !ok || string(got) != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if len(sink.files) != len(want) {
		t.Errorf("files %q", sink.order)
	}
	if out != "hello from server\n" {
		t.Errorf("output %q", out)
	}
	if res.Files != len(smallV2) || strings.Join(res.Bookmarks, ",") != "a b,zz" {
		t.Errorf("result %+v", res)
	}
}

func TestApplyStream2ListkeysBookmarks(t *testing.T) {
	node := strings.Repeat("0f", 20)
	data := stream2Bundle(t, smallV2[:1], -1, -1, testReqs, func(bw *bundle2.Writer) {
		bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "bookmarks"}}, nil, []byte("bm\t"+node+"\n"))
	})
	sink, _, err := applyBundleMem(t, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(sink.files[".hg/bookmarks"]); got != node+" bm\n" {
		t.Errorf("bookmarks %q", got)
	}
}

func TestApplyStream2Bad(t *testing.T) {
	entry := func(src byte, name, data string) []v2Entry { return []v2Entry{{src, name, data}} }
	for _, tc := range []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"dotdot", stream2Bundle(t, entry('s', "data/../../hgrc", "x"), -1, -1, testReqs, nil), ErrUnsafeName, "hgrc"},
		{"hgrc", stream2Bundle(t, entry('s', "../hgrc", "x"), -1, -1, testReqs, nil), ErrUnsafeName, "hgrc"},
		{"dot-hg", stream2Bundle(t, entry('s', ".hg/hgrc", "x"), -1, -1, testReqs, nil), ErrUnsafeName, "hgrc"},
		{"absolute", stream2Bundle(t, entry('s', "/etc/passwd", "x"), -1, -1, testReqs, nil), ErrUnsafeName, "passwd"},
		{"nul", stream2Bundle(t, entry('s', "data/a\x00.i", "x"), -1, -1, testReqs, nil), ErrUnsafeName, ""},
		{"newline", stream2Bundle(t, entry('s', "data/a\n.i", "x"), -1, -1, testReqs, nil), ErrUnsafeName, ""},
		{"requires", stream2Bundle(t, entry('s', "requires", "x"), -1, -1, testReqs, nil), ErrUnsafeName, ""},
		{"cache dotdot", stream2Bundle(t, entry('c', "../hgrc", "x"), -1, -1, testReqs, nil), ErrUnsafeName, ""},
		{"cache subdir", stream2Bundle(t, entry('c', "a/b", "x"), -1, -1, testReqs, nil), ErrUnsafeName, ""},
		{"bad source", stream2Bundle(t, entry('x', "data/a.i", "x"), -1, -1, testReqs, nil), ErrCorrupt, "unknown source"},
		// The applier refuses a name sent twice before its sink sees it
		// (memSink would refuse it too, with another message).
		{"store file twice", stream2Bundle(t, append(append([]v2Entry{}, smallV2...), smallV2[1]), -1, -1, testReqs, nil), ErrCorrupt, `file "meta/Dir/00manifest.i" appears twice in the stream`},
		{"cache file twice", stream2Bundle(t, append(append([]v2Entry{}, smallV2...), smallV2[5]), -1, -1, testReqs, nil), ErrCorrupt, `file "branch2-served" appears twice in the stream`},
		{"more files than declared", stream2Bundle(t, smallV2, 2, 10+13, testReqs, nil), ErrCorrupt, "after its 2 declared files"},
		{"fewer files than declared", stream2Bundle(t, smallV2, 7, -1, testReqs, nil), ErrCorrupt, "stream ended unexpectedly in stream2 file entry 7"},
		{"bytes too small", stream2Bundle(t, smallV2, -1, 5, testReqs, nil), ErrCorrupt, "exceeds the declared total"},
		{"bytes too large", stream2Bundle(t, smallV2, -1, 1<<40, testReqs, nil), ErrCorrupt, "declared"},
		{"unknown requirement", stream2Bundle(t, smallV2, -1, -1, testReqs+",exp-frobnicate", nil), ErrUnsupportedRequirement, "unable to apply stream clone: unsupported format: exp-frobnicate"},
		{"two stream2", stream2Bundle(t, smallV2[:1], -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("stream2", true, []bundle2.Param{{Name: "bytecount", Value: "0"}, {Name: "filecount", Value: "0"}, {Name: "requirements", Value: ""}}, nil, nil)
		}), ErrCorrupt, "second stream2"},
		{"unknown mandatory part", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("frobnicate", true, nil, nil, nil)
		}), ErrUnsupportedPart, "missing support for frobnicate"},
		{"unknown mandatory param", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "x"}, {Name: "zz", Value: "1"}, {Name: "aa", Value: "1"}}, nil, nil)
		}), ErrUnsupportedPart, "missing support for listkeys - aa, zz"},
		{"obsmarkers", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("obsmarkers", true, nil, nil, []byte{1})
		}), ErrUnsupportedPart, "obsmarkers"},
		{"error:abort", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("error:abort", false, []bundle2.Param{{Name: "message", Value: "it broke"}}, []bundle2.Param{{Name: "hint", Value: "try later"}}, nil)
		}), ErrRemote, "remote: abort: it broke (try later)"},
		{"error:unsupportedcontent", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("error:unsupportedcontent", false, []bundle2.Param{{Name: "parttype", Value: "foo"}, {Name: "params", Value: "a\x00b"}}, nil, nil)
		}), ErrRemote, "missing support for foo - a, b"},
		{"error:pushraced", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("error:pushraced", false, []bundle2.Param{{Name: "message", Value: "raced"}}, nil, nil)
		}), ErrRemote, "push failed: raced"},
		{"bad bookmarks", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("bookmarks", false, nil, nil, []byte("short"))
		}), ErrCorrupt, "bad bookmark stream"},
		{"bookmark newline", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("bookmarks", false, nil, nil, append(bytes.Repeat([]byte{1}, 20), 0, 3, 'a', '\n', 'b'))
		}), ErrCorrupt, "invalid bookmark name"},
		{"phase-heads truncated", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("phase-heads", false, nil, nil, append(be32(0), bytes.Repeat([]byte{1}, 21)...))
		}), ErrCorrupt, "bad phase-heads stream: 1 trailing bytes"},
		{"phase-heads unknown phase", stream2Bundle(t, smallV2, -1, -1, testReqs, func(bw *bundle2.Writer) {
			bw.WritePart("phase-heads", false, nil, nil, append(be32(3), bytes.Repeat([]byte{1}, 20)...))
		}), ErrCorrupt, "unknown phase 3"},
		{"no stream2", func() []byte {
			var b bytes.Buffer
			bw, _ := bundle2.NewWriter(&b)
			bw.WritePart("output", false, nil, nil, []byte("x"))
			bw.Close()
			return b.Bytes()
		}(), ErrNotStream, "no stream2 part"},
		{"changegroup bundle", []byte("HG10UN..."), ErrNotStream, ""},
		{"garbage", []byte("GARBAGE"), ErrCorrupt, "unknown bundle magic"},
	} {
		sink, _, err := applyBundleMem(t, tc.data, Options{})
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %v with %q", tc.name, err, tc.is, tc.msg)
		}
		if tc.is == ErrUnsupportedRequirement && len(sink.files) != 0 {
			t.Errorf("%s: files written before the requirement check: %q", tc.name, sink.order)
		}
	}
}

func TestApplyStream2Truncated(t *testing.T) {
	data := stream2Bundle(t, smallV2[:3], -1, -1, testReqs, func(bw *bundle2.Writer) {
		bw.WritePart("bookmarks", false, nil, nil, append(bytes.Repeat([]byte{1}, 20), 0, 1, 'a'))
	})
	if _, _, err := applyBundleMem(t, data, Options{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(data); i++ {
		sink, _, err := applyBundleMem(t, data[:i], Options{})
		if err == nil || sink.finished {
			t.Fatalf("truncated at %d of %d: err %v finished %v", i, len(data), err, sink.finished)
		}
	}
}

func FuzzStream2(f *testing.F) {
	f.Add([]byte(testReqs), stream2Payload(smallV2), int64(len(smallV2)), int64(60000))
	f.Add([]byte(""), stream2Payload([]v2Entry{{'s', "../x", "y"}}), int64(1), int64(1))
	f.Add([]byte("revlogv1"), []byte{'c', 0xff, 0xff, 0xff, 0xff, 0x0f, 1}, int64(1), int64(1))
	if b, err := os.ReadFile("testdata/hg63-bundle-stream2.hg"); err == nil {
		// The raw payload of hg's bundle (after the part header).
		if i := bytes.Index(b, []byte("sparserevlog")); i > 0 && i+16 < len(b) {
			f.Add([]byte(testReqs), b[i+len("sparserevlog")+4:], int64(10), int64(1294))
		}
	}
	f.Fuzz(func(t *testing.T, reqs, payload []byte, files, nbytes int64) {
		var buf bytes.Buffer
		bw, _ := bundle2.NewWriter(&buf)
		bw.WritePart("stream2", true, []bundle2.Param{
			{Name: "bytecount", Value: strconv.FormatInt(nbytes, 10)}, {Name: "filecount", Value: strconv.FormatInt(files, 10)},
			{Name: "requirements", Value: bundle2.Quote(string(reqs))}}, nil, payload)
		bw.Close()
		sink, _, err := applyBundleMem(t, buf.Bytes(), Options{})
		revlogs := 0
		for name := range sink.files {
			if !strings.HasPrefix(name, ".hg/store/") && !strings.HasPrefix(name, ".hg/cache/") &&
				name != ".hg/requires" && name != ".hg/00changelog.i" {
				t.Fatalf("unexpected file %q (err %v)", name, err)
			}
			for _, dir := range []string{"data/", "meta/", "dh/"} {
				if strings.HasPrefix(name, ".hg/store/"+dir) {
					revlogs++
				}
			}
		}
		// The fncache names each data/ and meta/ file once: the files
		// under data/, meta/ and (hashed) dh/.
		if fncache, ok := sink.files[".hg/store/fncache"]; ok && err == nil {
			lines := strings.Split(strings.TrimSuffix(string(fncache), "\n"), "\n")
			seen := map[string]bool{}
			for _, l := range lines {
				if seen[l] {
					t.Fatalf("fncache names %q twice", l)
				}
				seen[l] = true
			}
			if len(lines) != revlogs {
				t.Fatalf("fncache has %d names for %d files under data/, meta/ and dh/", len(lines), revlogs)
			}
		}
	})
}

// TestApplyViewCaches: a branch or tags cache of a filtered view that
// records filtered (or obsolete) changesets is left out of the clone,
// whatever its format; the others, and every other cache, are copied.
func TestApplyViewCaches(t *testing.T) {
	tip := strings.Repeat("ab", 20)
	caches := []v2Entry{
		{'c', "branch2-served", tip + " 3 " + strings.Repeat("cd", 20) + "\n" + tip + " o default\n"},
		{'c', "branch2-visible", tip + " 3\n" + tip + " o default\n"},
		{'c', "branch3-served", "filtered-hash=" + strings.Repeat("cd", 20) + " tip-rev=3\ndefault\n"},
		{'c', "branch3-exp-visible", "obsolete-hash=" + strings.Repeat("cd", 20) + " tip-rev=3\n"},
		{'c', "branch3-base", "tip-node=" + tip + " tip-rev=3\ndefault\n"},
		{'c', "tags2-served", "3 " + tip + " " + strings.Repeat("cd", 20) + "\n"},
		{'c', "branch2", tip + " 3 " + strings.Repeat("cd", 20) + "\n"},
		{'c', "rbc-revs-v1", strings.Repeat("x", 5000)},
	}
	sink, _, err := applyBundleMem(t, stream2Bundle(t, append(smallV2[:5:5], caches...), -1, -1, testReqs, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caches {
		got, kept := sink.files[".hg/cache/"+c.name]
		want := c.name == "branch2-visible" || c.name == "branch3-base" || c.name == "branch2" || c.name == "rbc-revs-v1"
		if kept != want {
			t.Errorf("%s: kept %v, want %v", c.name, kept, want)
		}
		if kept && string(got) != c.data {
			t.Errorf("%s: %d bytes, want the %d streamed", c.name, len(got), len(c.data))
		}
	}
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// FuzzBundle2 applies arbitrary bundles: errors, never panics, and the
// sink is aborted or finished (bundle2's own fuzz targets cover the
// framing alone).
func FuzzBundle2(f *testing.F) {
	for _, name := range []string{"hg63-getbundle-stream2.hg", "hg63-bundle-stream2.hg"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("HG20\x00\x00\x00\x0eCompression=GZx\x9c\x03\x00\x00\x00\x00\x01"))
	var b bytes.Buffer
	bw, _ := bundle2.NewWriter(&b)
	bw.WritePart("output", false, nil, nil, []byte("out"))
	bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: "bookmarks"}}, nil, []byte("bm\t"+strings.Repeat("0", 40)))
	bw.Close()
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = applyBundleMem(t, data, Options{})
	})
}
