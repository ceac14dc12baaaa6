package revlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestParseHeaderVersions(t *testing.T) {
	word := func(v uint32) []byte {
		b := make([]byte, EntrySize)
		binary.BigEndian.PutUint32(b, v)
		return b
	}
	for _, c := range []struct {
		name string
		v    uint32
		msg  string
	}{
		{"v0", 0, "version 0"},
		{"revlogv2", 0xDEAD, "0xdead"},
		{"changelogv2", 0xD34D, "0xd34d"},
		{"unknown", 7, "unknown version (7) in revlog data/x"},
		{"unknown flags", 1 | 1<<18, "unknown flags (0x04) in version 1 revlog data/x"},
	} {
		_, err := FromBytes("data/x.i", word(c.v), nil)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "data/x") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	r, err := FromBytes("empty.i", nil, nil)
	if err != nil || r.Len() != 0 || r.Heads() != nil {
		t.Errorf("empty revlog: %v", err)
	}
}

func TestIndexRoundTrip(t *testing.T) {
	for _, inline := range []bool{true, false} {
		b := build(t, sampleRevs(), inline, true)
		r := b.open(t)
		if r.Inline() != inline || !r.GeneralDelta() || r.Len() != len(sampleRevs()) || r.Version() != 1 {
			t.Fatalf("inline %v: header read as inline %v gd %v len %d", inline, r.Inline(), r.GeneralDelta(), r.Len())
		}
		var off int64
		for rev, s := range sampleRevs() {
			e := r.Entry(rev)
			if e.Offset != off || e.P1 != s.p1 || e.P2 != s.p2 || e.LinkRev != rev || e.RawLen != int64(len(s.text)) || e.Node != b.nodes[rev] {
				t.Errorf("inline %v rev %d: %+v", inline, rev, e)
			}
			off += e.CompressedLen
			wantDP := s.base
			if s.base == -2 {
				wantDP = NullRev
			}
			if dp := r.DeltaParent(rev); dp != wantDP {
				t.Errorf("rev %d DeltaParent %d want %d", rev, dp, wantDP)
			}
		}
		if got := r.DeltaChain(5); len(got) != 4 || got[0] != 0 || got[3] != 5 {
			t.Errorf("DeltaChain(5) = %v", got)
		}
		if r.ChainBase(4) != 3 {
			t.Errorf("ChainBase(4) = %d", r.ChainBase(4))
		}
	}
}

// corruptEntry copies the built sample revlog, lets mutate change rev's entry
// bytes, and returns the Open error.
func corruptEntry(built map[bool]builtRevlog, inline bool, rev int, mutate func(e []byte)) error {
	src := built[inline]
	b := builtRevlog{index: bytes.Clone(src.index), data: src.data}
	pos := 0
	for i := 0; i < rev; i++ {
		pos += EntrySize
		if inline {
			pos += int(binary.BigEndian.Uint32(b.index[pos-EntrySize+8:]))
		}
	}
	mutate(b.index[pos : pos+EntrySize])
	_, err := FromBytes("c.i", b.index, b.data)
	return err
}

func TestIndexCorruption(t *testing.T) {
	put := func(off int, v int32) func([]byte) {
		return func(e []byte) { binary.BigEndian.PutUint32(e[off:], uint32(v)) }
	}
	built := map[bool]builtRevlog{true: build(t, sampleRevs(), true, true), false: build(t, sampleRevs(), false, true)}
	cases := []struct {
		name   string
		rev    int
		mutate func([]byte)
		msg    string
	}{
		{"parent forward", 2, put(24, 2), "parent"},
		{"parent far", 2, put(28, 1<<30), "parent"},
		{"parent negative", 2, put(24, -5), "parent"},
		{"base forward", 2, put(16, 3), "delta base"},
		{"base negative", 2, put(16, -2), "delta base"},
		{"link negative", 1, put(20, -1), "link"},
		{"rawlen", 1, put(12, -2), "uncompressed length"},
	}
	for _, c := range cases {
		for _, inline := range []bool{false, true} {
			err := corruptEntry(built, inline, c.rev, c.mutate)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Rev != c.rev || !strings.Contains(err.Error(), c.msg) || ce.File != "c.i" {
				t.Errorf("%s (inline %v): %v", c.name, inline, err)
			}
		}
	}
	// Negative compressed length: split index is decoded, then checked.
	if err := corruptEntry(built, false, 3, put(8, -1)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("negative complen: %v", err)
	}
	// Inline: a chunk length running past the end.
	if err := corruptEntry(built, true, 3, put(8, 1<<20)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("inline complen past end: %v", err)
	}
	// Truncated index.
	b := build(t, sampleRevs(), false, true)
	if _, err := FromBytes("t.i", b.index[:len(b.index)-10], b.data); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated split index: %v", err)
	}
	b = build(t, sampleRevs(), true, true)
	for _, n := range []int{10, EntrySize + 3, len(b.index) - 1} {
		if _, err := FromBytes("t.i", b.index[:n], nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated inline index at %d: %v", n, err)
		}
	}
}

func TestLegacyChains(t *testing.T) {
	revs := []buildRev{
		{text: []byte("a\n"), p1: -1, p2: -1, base: -2, comp: 'u'},
		{text: []byte("a\nb\n"), p1: 0, p2: -1, base: 0, comp: 'x'},
		{text: []byte("a\nb\nc\n"), p1: 1, p2: -1, base: 1, comp: 'u'},
		{text: []byte("fresh\n"), p1: 2, p2: -1, base: -2, comp: 'x'},
		{text: []byte("fresh\nagain\n"), p1: 3, p2: -1, base: 3, comp: '('},
	}
	for _, inline := range []bool{true, false} {
		r := build(t, revs, inline, false).open(t)
		if r.GeneralDelta() {
			t.Fatal("generaldelta set")
		}
		if r.Entry(2).BaseRev != 0 || r.Entry(4).BaseRev != 3 || r.DeltaParent(2) != 1 || r.DeltaParent(3) != NullRev {
			t.Errorf("legacy bases: %+v %+v", r.Entry(2), r.Entry(4))
		}
		for rev, s := range revs {
			got, err := r.Revision(rev)
			if err != nil || string(got) != string(s.text) {
				t.Errorf("rev %d: %q, %v", rev, got, err)
			}
		}
	}
}
