package revlog

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// A minimal revlog writer for unit tests and fuzz seeds: it lays out
// entries and chunks the way hg does, so tests can also break them on
// purpose. The oracle tests use revlogs written by hg itself.

type buildRev struct {
	text   []byte
	p1, p2 int
	base   int  // delta parent; -2 stores a full text
	comp   byte // 'u', 'x' (zlib), '(' (zstd), 0 (plain, text must start with \0 or be empty)
	flags  uint16
}

type builtRevlog struct {
	index, data []byte
	nodes       []Node
}

// simpleDelta returns a one-hunk delta turning a into b.
func simpleDelta(a, b []byte) []byte {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return hunkBytes(p, len(a)-s, b[p:len(b)-s])
}

func hunkBytes(start, end int, data []byte) []byte {
	h := make([]byte, 12, 12+len(data))
	binary.BigEndian.PutUint32(h[0:], uint32(start))
	binary.BigEndian.PutUint32(h[4:], uint32(end))
	binary.BigEndian.PutUint32(h[8:], uint32(len(data)))
	return append(h, data...)
}

// testEncoder is shared: EncodeAll is safe for concurrent use, and making
// an encoder per chunk dominated the unit tests' time.
var testEncoder = sync.OnceValues(func() (*zstd.Encoder, error) { return zstd.NewWriter(nil) })

func compressChunk(t testing.TB, b []byte, comp byte) []byte {
	switch comp {
	case 'u':
		return append([]byte{'u'}, b...)
	case 'x':
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	case '(':
		enc, err := testEncoder()
		if err != nil {
			t.Fatal(err)
		}
		return enc.EncodeAll(b, nil)
	}
	return b
}

// build writes revs as a version 1 revlog.
func build(t testing.TB, revs []buildRev, inline, generalDelta bool) builtRevlog {
	var out builtRevlog
	var data []byte
	var index []byte
	var chainBase []int
	for i, r := range revs {
		p1, p2 := NullNode, NullNode
		if r.p1 >= 0 {
			p1 = out.nodes[r.p1]
		}
		if r.p2 >= 0 {
			p2 = out.nodes[r.p2]
		}
		node := HashRevision(r.text, p1, p2)
		out.nodes = append(out.nodes, node)
		payload, base := r.text, i
		if r.base != -2 {
			var prev []byte
			if r.base >= 0 {
				prev = revs[r.base].text
			}
			payload = simpleDelta(prev, r.text)
			base = r.base
			if !generalDelta {
				// Legacy: deltas are against the previous revision and
				// base names the chain's first revision.
				if r.base != i-1 {
					t.Fatalf("legacy revlog: rev %d deltas against %d", i, r.base)
				}
				base = chainBase[i-1]
			}
		}
		chainBase = append(chainBase, base)
		chunk := compressChunk(t, payload, r.comp)
		e := make([]byte, EntrySize)
		binary.BigEndian.PutUint64(e[0:], uint64(len(data))<<16|uint64(r.flags))
		binary.BigEndian.PutUint32(e[8:], uint32(len(chunk)))
		binary.BigEndian.PutUint32(e[12:], uint32(len(r.text)))
		binary.BigEndian.PutUint32(e[16:], uint32(int32(base)))
		binary.BigEndian.PutUint32(e[20:], uint32(i))
		binary.BigEndian.PutUint32(e[24:], uint32(int32(r.p1)))
		binary.BigEndian.PutUint32(e[28:], uint32(int32(r.p2)))
		copy(e[32:], node[:])
		if i == 0 {
			v := uint32(versionV1)
			if inline {
				v |= FlagInlineData
			}
			if generalDelta {
				v |= FlagGeneralDelta
			}
			binary.BigEndian.PutUint32(e[0:], v)
		}
		index = append(index, e...)
		if inline {
			index = append(index, chunk...)
		}
		data = append(data, chunk...)
	}
	out.index = index
	if !inline {
		out.data = data
	}
	return out
}

// withFlags returns a copy of the inline revlog b with rev's flags set.
func (b builtRevlog) withFlags(rev int, flags uint16) builtRevlog {
	c := builtRevlog{index: bytes.Clone(b.index), data: b.data, nodes: b.nodes}
	pos := 0
	for range rev {
		pos += EntrySize + int(binary.BigEndian.Uint32(c.index[pos+8:]))
	}
	binary.BigEndian.PutUint16(c.index[pos+6:], flags)
	return c
}

func (b builtRevlog) open(t testing.TB) *Revlog {
	t.Helper()
	r, err := FromBytes("test.i", b.index, b.data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sampleRevs is a small history exercising every chunk encoding, a full
// snapshot in the middle, a merge and a delta against the null revision.
func sampleRevs() []buildRev {
	return []buildRev{
		{text: []byte("hello world\n"), p1: -1, p2: -1, base: -2, comp: 'u'},
		{text: []byte("hello brave world\n"), p1: 0, p2: -1, base: 0, comp: 'x'},
		{text: []byte("hello brave new world\n"), p1: 1, p2: -1, base: 1, comp: '('},
		{text: []byte("\x00binary\x00"), p1: 2, p2: -1, base: -2, comp: 0},
		{text: []byte("\x00binary\x00 more"), p1: 3, p2: -1, base: 3, comp: 'u'},
		{text: bytes.Repeat([]byte("zz"), 500), p1: 2, p2: 4, base: 2, comp: 'x'},
		{text: nil, p1: 5, p2: -1, base: -2, comp: 0},
		{text: []byte("from nothing"), p1: -1, p2: -1, base: -1, comp: 'u'},
	}
}
