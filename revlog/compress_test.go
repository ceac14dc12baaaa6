package revlog

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestDecompressMarkers(t *testing.T) {
	text := []byte(strings.Repeat("revlog chunk text ", 100))
	cases := map[string][]byte{
		"u":    compressChunk(t, text, 'u'),
		"zlib": compressChunk(t, text, 'x'),
		"zstd": compressChunk(t, text, '('),
	}
	for name, c := range cases {
		got, err := Decompress(c, MaxTextLen, int64(len(text)))
		if err != nil || !bytes.Equal(got, text) {
			t.Errorf("%s: %v", name, err)
		}
		// Exact limit passes, one less fails.
		if _, err := Decompress(c, int64(len(text)), -1); err != nil {
			t.Errorf("%s at exact limit: %v", name, err)
		}
		if _, err := Decompress(c, int64(len(text))-1, -1); !errors.Is(err, errTooLarge) {
			t.Errorf("%s over limit: %v", name, err)
		}
	}
	raw := []byte("\x00raw with its NUL")
	if got, err := Decompress(raw, MaxTextLen, -1); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("\\0 chunk: %q %v", got, err)
	}
	if got, err := Decompress(nil, MaxTextLen, -1); err != nil || len(got) != 0 {
		t.Errorf("empty chunk: %q %v", got, err)
	}
	if _, err := Decompress([]byte("Qxyz"), MaxTextLen, -1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown marker: %v", err)
	}
	// Python's zlib.decompress ignores bytes after the stream; so do we.
	trail := append(compressChunk(t, text, 'x'), "junk"...)
	if got, err := Decompress(trail, MaxTextLen, -1); err != nil || !bytes.Equal(got, text) {
		t.Errorf("zlib with trailing bytes: %v", err)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	text := []byte(strings.Repeat("abcdefgh", 1000))
	z := compressChunk(t, text, 'x')
	for _, c := range [][]byte{z[:len(z)/2], z[:2], append(bytes.Clone(z[:len(z)-4]), 1, 2, 3, 4)} {
		if _, err := Decompress(c, MaxTextLen, -1); err == nil {
			t.Errorf("corrupt zlib (%d bytes) accepted", len(c))
		}
	}
	zs := compressChunk(t, text, '(')
	for _, c := range [][]byte{zs[:len(zs)/2], zs[:3], []byte("(\xb5/\xfd")} {
		if _, err := Decompress(c, MaxTextLen, -1); err == nil {
			t.Errorf("corrupt zstd (%d bytes) accepted", len(c))
		}
	}
	// A zstd frame declaring more than the limit is refused before
	// decoding; a bomb (highly compressible) is bounded by the limit.
	big := make([]byte, 1<<20)
	enc, _ := zstd.NewWriter(nil)
	bomb := enc.EncodeAll(big, nil)
	enc.Close()
	if _, err := Decompress(bomb, 1000, -1); !errors.Is(err, errTooLarge) {
		t.Errorf("zstd bomb: %v", err)
	}
	var zb bytes.Buffer
	w := zlib.NewWriter(&zb)
	w.Write(big)
	w.Close()
	if _, err := Decompress(zb.Bytes(), 1000, 1<<30); !errors.Is(err, errTooLarge) {
		t.Errorf("zlib bomb: %v", err)
	}
	// A lying size hint costs no big allocation (the bound comes from the
	// input length), and still decodes.
	if got, err := Decompress(z, MaxTextLen, MaxTextLen); err != nil || !bytes.Equal(got, text) {
		t.Errorf("huge hint: %v", err)
	}
}

func FuzzDecompress(f *testing.F) {
	text := []byte("some text to compress, some text to compress")
	for _, m := range []byte{'u', 'x', '(', 0} {
		f.Add(compressChunk(f, append([]byte{0}, text...), m), int64(100))
	}
	f.Add([]byte("x\x9c"), int64(10))
	f.Add([]byte("(\xb5/\xfd\x00\x00"), int64(10))
	f.Fuzz(func(t *testing.T, chunk []byte, limit int64) {
		out, err := Decompress(chunk, limit, limit)
		if err == nil && limit >= 0 && int64(len(out)) > limit {
			t.Fatalf("output %d exceeds limit %d", len(out), limit)
		}
	})
}

// TestUnzstdSizeHint: a zstd frame that declares no content size (what
// hg's streaming compressor writes for a text over 1 MB) is decoded into
// a buffer of the hinted size, not one grown by doubling; a frame that
// declares it needs no hint.
func TestUnzstdSizeHint(t *testing.T) {
	// A manifest's lines: compressible as a real one is (a few times),
	// not as a repeated line (past preallocBound's ratio).
	var text []byte
	for i := range 50_000 {
		text = fmt.Appendf(text, "f/%03d/file%05d.txt\x00%040x\n", i/100, i, uint64(i)*0x9e3779b97f4a7c15)
	}
	var stream bytes.Buffer
	enc, err := zstd.NewWriter(&stream)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(text)
	enc.Close()
	var h zstd.Header
	if err := h.Decode(stream.Bytes()); err != nil || h.HasFCS {
		t.Fatalf("the streamed frame declares its size (%v, %v): the test needs one that does not", h.HasFCS, err)
	}
	chunk := append([]byte{}, stream.Bytes()...) // a zstd chunk is the frame, its magic the marker
	got, err := Decompress(chunk, MaxTextLen, int64(len(text)))
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("decoding with the hint: %v", err)
	}
	if cap(got) > len(text)+8192 { // the allocator's rounding
		t.Errorf("with the hint: a buffer of %d bytes for a %d-byte text", cap(got), len(text))
	}
	got, err = Decompress(chunk, MaxTextLen, -1)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("decoding without the hint: %v", err)
	}
	t.Logf("without the hint: a buffer of %d bytes", cap(got))
}
