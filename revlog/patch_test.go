package revlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

// naivePatch applies one delta the obvious way, as pure/mpatch.py's
// semantics define it, validating the same rules. It is the reference the
// folding implementation is compared with.
func naivePatch(text, delta []byte) ([]byte, error) {
	var out []byte
	last := 0
	for pos := 0; pos < len(delta); {
		if len(delta)-pos < 12 {
			return nil, errors.New("truncated")
		}
		start := int(int32(binary.BigEndian.Uint32(delta[pos:])))
		end := int(int32(binary.BigEndian.Uint32(delta[pos+4:])))
		n := int(int32(binary.BigEndian.Uint32(delta[pos+8:])))
		pos += 12
		if start < last || end < start || end > len(text) || n < 0 || n > len(delta)-pos {
			return nil, errors.New("bad hunk")
		}
		out = append(out, text[last:start]...)
		out = append(out, delta[pos:pos+n]...)
		pos += n
		last = end
	}
	return append(out, text[last:]...), nil
}

func naiveChain(base []byte, deltas [][]byte) ([]byte, error) {
	text := base
	for _, d := range deltas {
		var err error
		if text, err = naivePatch(text, d); err != nil {
			return nil, err
		}
	}
	return text, nil
}

// randomDelta makes a valid delta against text: sorted hunks, including
// empty ones, pure inserts, pure deletes, adjacent hunks.
func randomDelta(rng *rand.Rand, text []byte) []byte {
	var d []byte
	pos := 0
	for pos <= len(text) && rng.Intn(4) != 0 {
		start := pos + rng.Intn(len(text)-pos+1)
		if rng.Intn(5) == 0 {
			start = pos // adjacent to the previous hunk
		}
		end := start + rng.Intn(len(text)-start+1)/2
		if rng.Intn(3) == 0 {
			end = start // insert only
		}
		data := make([]byte, rng.Intn(12))
		for i := range data {
			data[i] = byte('a' + rng.Intn(26))
		}
		d = append(d, hunkBytes(start, end, data)...)
		pos = end
	}
	return d
}

// TestPatchChainMatchesNaive compares folding with sequential naive
// application over 1024 seeded random chains.
func TestPatchChainMatchesNaive(t *testing.T) {
	for seed := int64(0); seed < 1024; seed++ {
		rng := rand.New(rand.NewSource(seed))
		base := make([]byte, rng.Intn(64))
		for i := range base {
			base[i] = byte('A' + rng.Intn(26))
		}
		n := 1 + rng.Intn(40)
		deltas := make([][]byte, n)
		text := base
		for i := range deltas {
			deltas[i] = randomDelta(rng, text)
			var err error
			if text, err = naivePatch(text, deltas[i]); err != nil {
				t.Fatalf("seed %d: reference rejects its own delta: %v", seed, err)
			}
		}
		got, err := PatchChain(base, deltas)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !bytes.Equal(got, text) {
			t.Fatalf("seed %d (%d deltas): got %q want %q", seed, n, got, text)
		}
		if n, err := PatchedSize(len(base), deltas[0]); err != nil || n != len(mustNaive(t, base, deltas[0])) {
			t.Fatalf("seed %d: PatchedSize %d %v", seed, n, err)
		}
	}
}

func mustNaive(t *testing.T, text, delta []byte) []byte {
	out, err := naivePatch(text, delta)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPatchInvalid(t *testing.T) {
	base := []byte("0123456789")
	cases := map[string][]byte{
		"truncated header": {0, 0, 0},
		"end before start": hunkBytes(5, 4, nil),
		"end past base":    hunkBytes(5, 11, nil),
		"unsorted":         append(hunkBytes(5, 6, nil), hunkBytes(2, 3, nil)...),
		"overlapping":      append(hunkBytes(2, 6, nil), hunkBytes(5, 7, nil)...),
		"data past end":    hunkBytes(1, 2, []byte("x"))[:12],
		"negative start":   hunkBytes(-1, 2, nil),
		"negative length": func() []byte {
			h := hunkBytes(1, 2, nil)
			binary.BigEndian.PutUint32(h[8:], 0xFFFFFFFF)
			return h
		}(),
	}
	for name, d := range cases {
		if _, err := Patch(base, d); !errors.Is(err, ErrBadDelta) {
			t.Errorf("%s: %v", name, err)
		}
		// Valid first delta, broken second: still caught, with its position.
		_, err := PatchChain(base, [][]byte{hunkBytes(0, 0, nil), d})
		if !errors.Is(err, ErrBadDelta) {
			t.Errorf("%s as second delta: %v", name, err)
		}
	}
	// The second delta is checked against the first's output length.
	_, err := PatchChain(base, [][]byte{hunkBytes(0, 10, []byte("ab")), hunkBytes(0, 3, nil)})
	if !errors.Is(err, ErrBadDelta) {
		t.Errorf("second delta past shortened text: %v", err)
	}
	if out, err := PatchChain(base, nil); err != nil || !bytes.Equal(out, base) {
		t.Errorf("no deltas: %q %v", out, err)
	}
	if out, err := Patch(base, nil); err != nil || !bytes.Equal(out, base) {
		t.Errorf("empty delta: %q %v", out, err)
	}
}

// TestPatchLongChain checks a 1000-delta chain (sparse-revlog's maximum
// chain length) over a 32 KiB text.
func TestPatchLongChain(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	base := bytes.Repeat([]byte("0123456789abcdef"), 1<<11)
	text := base
	var deltas [][]byte
	for range 1000 {
		p := rng.Intn(len(text) - 10)
		d := hunkBytes(p, p+3, []byte(fmt.Sprint(rng.Intn(1000))))
		deltas = append(deltas, d)
		text = mustNaive(t, text, d)
	}
	got, err := PatchChain(base, deltas)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("long chain: %v", err)
	}
}

// FuzzPatch applies arbitrary deltas (mostly invalid: errors must agree
// with the reference) and, from the seed, a random valid chain over base
// (results must agree).
func FuzzPatch(f *testing.F) {
	f.Add([]byte("hello world"), hunkBytes(6, 11, []byte("there")), []byte{}, int64(1))
	f.Add([]byte("abc"), append(hunkBytes(0, 0, []byte("x")), hunkBytes(0, 1, nil)...), hunkBytes(1, 3, []byte("yz")), int64(2))
	f.Add([]byte(""), hunkBytes(0, 0, []byte("new")), hunkBytes(3, 3, []byte("!")), int64(3))
	f.Add([]byte("abc"), hunkBytes(2, 1, nil), []byte{}, int64(4))
	f.Fuzz(func(t *testing.T, base, d1, d2 []byte, seed int64) {
		for _, deltas := range [][][]byte{{d1}, {d1, d2}, {d1, d2, d1}} {
			want, wantErr := naiveChain(base, deltas)
			got, err := PatchChain(base, deltas)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("PatchChain err %v, reference err %v", err, wantErr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("PatchChain %q, reference %q", got, want)
			}
		}
		rng := rand.New(rand.NewSource(seed))
		deltas := make([][]byte, 1+rng.Intn(16))
		text := base
		for i := range deltas {
			deltas[i] = randomDelta(rng, text)
			text, _ = naivePatch(text, deltas[i])
		}
		got, err := PatchChain(base, deltas)
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("valid chain (seed %d): %q, %v; want %q", seed, got, err, text)
		}
	})
}

func TestDecodeDelta(t *testing.T) {
	d := append(hunkBytes(1, 3, []byte("xy")), hunkBytes(5, 5, []byte("z"))...)
	hs, _, err := decodeDelta(nil, d, 6)
	if err != nil || len(hs) != 2 || hs[0].start != 1 || hs[0].end != 3 || string(hs[0].data) != "xy" || hs[1].start != 5 || string(hs[1].data) != "z" {
		t.Fatalf("%+v %v", hs, err)
	}
	if _, _, err := decodeDelta(nil, d, 4); !errors.Is(err, ErrBadDelta) {
		t.Errorf("short base: %v", err)
	}
}
