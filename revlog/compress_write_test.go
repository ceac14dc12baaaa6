package revlog

import (
	"bytes"
	"errors"
	"math/rand"
	"strings"
	"testing"
)

// TestCompressRules checks hg's storage rules for each engine: thresholds,
// "smaller or stored raw", the 'u' marker, and that Decompress reads
// every chunk back.
func TestCompressRules(t *testing.T) {
	random := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(random)
	text := []byte(strings.Repeat("a compressible line of text\n", 100))
	cases := []struct {
		name   string
		data   []byte
		marker map[string]byte // engine -> first byte of the chunk
	}{
		{"empty", nil, nil},
		{"short", []byte("short text under the thresholds\n"), map[string]byte{"zstd": 'u', "zlib": 'u', "none": 'u'}},
		{"short nul", []byte("\x00binary"), map[string]byte{"zstd": 0, "zlib": 0, "none": 0}},
		{"43 bytes", bytes.Repeat([]byte("x"), 43), map[string]byte{"zstd": 'u', "zlib": 'u', "none": 'u'}},
		{"44 bytes", bytes.Repeat([]byte("x"), 44), map[string]byte{"zstd": 'u', "zlib": 'x', "none": 'u'}},
		{"50 bytes", bytes.Repeat([]byte("x"), 50), map[string]byte{"zstd": '(', "zlib": 'x', "none": 'u'}},
		{"text", text, map[string]byte{"zstd": '(', "zlib": 'x', "none": 'u'}},
		{"random", random, map[string]byte{"zstd": 'u', "zlib": 'u', "none": 'u'}},
		{"random nul", append([]byte{0}, random...), map[string]byte{"zstd": 0, "zlib": 0, "none": 0}},
	}
	for _, engine := range []string{CompressionZstd, CompressionZlib, CompressionNone} {
		c, err := newCompressor(engine, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			prefix, body, err := c.compress(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			chunk := append([]byte(prefix), body...)
			if len(tc.data) == 0 {
				if len(chunk) != 0 {
					t.Errorf("%s %s: empty text stored as %d bytes", engine, tc.name, len(chunk))
				}
				continue
			}
			if want := tc.marker[engine]; chunk[0] != want {
				t.Errorf("%s %s: marker %q, want %q", engine, tc.name, chunk[0], want)
			}
			if len(chunk) > len(tc.data)+1 {
				t.Errorf("%s %s: chunk of %d bytes for %d", engine, tc.name, len(chunk), len(tc.data))
			}
			got, err := Decompress(chunk, MaxTextLen, -1)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Errorf("%s %s: round trip: %v", engine, tc.name, err)
			}
		}
	}
	if _, err := newCompressor("lz4", 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown engine: %v", err)
	}
	if _, err := newCompressor(CompressionZstd, 99); err == nil {
		t.Error("zstd level 99 accepted")
	}
}

// TestCompressReusesEncoders: compressing allocates no encoder per
// chunk (zstd encoders are shared, zlib writers pooled).
func TestCompressReusesEncoders(t *testing.T) {
	text := []byte(strings.Repeat("a compressible line of text\n", 100))
	for _, engine := range []string{CompressionZstd, CompressionZlib} {
		c, err := newCompressor(engine, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.compress(text) // warm up
		allocs := testing.AllocsPerRun(50, func() {
			if _, _, err := c.compress(text); err != nil {
				t.Fatal(err)
			}
		})
		// A fresh zstd encoder or zlib writer costs dozens of
		// allocations (tables, windows).
		if allocs > 4 {
			t.Errorf("%s: %.0f allocations per chunk", engine, allocs)
		}
	}
}
