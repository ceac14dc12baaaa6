package wireproto

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func frame02(engine string, body []byte) []byte {
	return append(append([]byte{byte(len(engine))}, engine...), body...)
}

func zlibBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(b, nil)
}

func TestPayloadReader(t *testing.T) {
	payload := bytes.Repeat([]byte("HG20 payload "), 1000)
	for _, tc := range []struct {
		name         string
		major, minor int
		body         []byte
		compressible bool
	}{
		{"0.1 raw", 0, 1, payload, false},
		{"0.1 zlib", 0, 1, zlibBytes(t, payload), true},
		{"0.2 none", 0, 2, frame02("none", payload), true},
		{"0.2 zlib", 0, 2, frame02("zlib", zlibBytes(t, payload)), true},
		{"0.2 zstd", 0, 2, frame02("zstd", zstdBytes(t, payload)), true},
	} {
		r, _, err := payloadReader(tc.major, tc.minor, bytes.NewReader(tc.body), tc.compressible)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, payload) {
			t.Errorf("%s: %d bytes, %v", tc.name, len(got), err)
		}
	}
	if _, _, err := payloadReader(0, 2, bytes.NewReader(frame02("bzip2", nil)), true); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bzip2: %v", err)
	}
	if _, _, err := payloadReader(0, 3, bytes.NewReader(nil), true); !errors.Is(err, ErrUnsupported) {
		t.Errorf("0.3: %v", err)
	}
	if _, _, err := payloadReader(0, 2, bytes.NewReader([]byte{4, 'z'}), true); !errors.Is(err, ErrProtocol) {
		t.Errorf("short header: %v", err)
	}
	// A truncated compressed body is an error, not a short success.
	z := zlibBytes(t, payload)
	r, _, _ := payloadReader(0, 2, bytes.NewReader(frame02("zlib", z[:len(z)/2])), true)
	if _, err := io.ReadAll(r); err == nil {
		t.Error("truncated zlib read without error")
	}
	zs := zstdBytes(t, payload)
	r, _, _ = payloadReader(0, 2, bytes.NewReader(frame02("zstd", zs[:len(zs)/2])), true)
	if _, err := io.ReadAll(r); err == nil {
		t.Error("truncated zstd read without error")
	}
}

func TestParseMediaVersion(t *testing.T) {
	for ct, want := range map[string][2]int{
		"application/mercurial-0.1":                {0, 1},
		"application/mercurial-0.2; charset=utf-8": {0, 2},
	} {
		a, b, err := parseMediaVersion(ct)
		if err != nil || a != want[0] || b != want[1] {
			t.Errorf("%s: %d.%d %v", ct, a, b, err)
		}
	}
	if _, _, err := parseMediaVersion("text/html"); !errors.Is(err, ErrNotRepository) {
		t.Errorf("html: %v", err)
	}
	if _, _, err := parseMediaVersion("application/mercurial-x"); !errors.Is(err, ErrProtocol) {
		t.Errorf("broken: %v", err)
	}
}

// FuzzPayloadReader feeds arbitrary 0.2 framed bodies: never a panic, and
// decoding stays bounded.
func FuzzPayloadReader(f *testing.F) {
	f.Add(frame02("none", []byte("HG20\x00\x00\x00\x00")), false)
	f.Add(frame02("zlib", zlibBytes(f, []byte("HG20 some data"))), false)
	f.Add(frame02("zstd", zstdBytes(f, []byte("HG20 some data"))), false)
	f.Add([]byte{0xff, 'z'}, false)
	f.Add(zlibBytes(f, []byte("0\n1 5\n")), true)
	f.Fuzz(func(t *testing.T, body []byte, v01 bool) {
		minor := 2
		if v01 {
			minor = 1
		}
		r, _, err := payloadReader(0, minor, bytes.NewReader(body), true)
		if err != nil {
			return
		}
		defer r.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<20))
	})
}
