package store

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// marker1 builds one version-1 marker.
func marker1(prec byte, succs []byte, parents int, meta [][2]string) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0) // size, patched below
	b = append(b, make([]byte, 8)...)       // date
	b = append(b, 0, 0, 0, 0)               // tz, flags
	npar := byte(parents)
	if parents < 0 {
		npar = obsNoParents
	}
	b = append(b, byte(len(succs)), npar, byte(len(meta)))
	node := func(c byte) []byte { n := make([]byte, 20); n[0] = c; return n }
	b = append(b, node(prec)...)
	for _, s := range succs {
		b = append(b, node(s)...)
	}
	for i := 0; i < parents; i++ {
		b = append(b, node(0xee)...)
	}
	for _, kv := range meta {
		b = append(b, byte(len(kv[0])), byte(len(kv[1])))
	}
	for _, kv := range meta {
		b = append(b, kv[0]+kv[1]...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func TestParseObsstore(t *testing.T) {
	data := append([]byte{1}, marker1(1, []byte{2}, -1, [][2]string{{"user", "test"}})...)
	data = append(data, marker1(3, nil, 1, nil)...)
	v, ms, err := ParseObsstore(data)
	if err != nil || v != 1 {
		t.Fatal(v, err)
	}
	if len(ms) != 2 || ms[0].Prec[0] != 1 || len(ms[0].Succs) != 1 || ms[0].Succs[0][0] != 2 || ms[1].Prec[0] != 3 || len(ms[1].Succs) != 0 {
		t.Fatalf("markers: %+v", ms)
	}
	if ms[0].HasParents || !ms[1].HasParents || len(ms[1].Parents) != 1 || len(ms[0].Meta) != 1 || ms[0].Meta[0] != [2]string{"user", "test"} {
		t.Fatalf("markers: %+v", ms)
	}
	for _, bad := range [][]byte{{9}, data[:len(data)-1], append([]byte{1}, 0, 0, 0, 3)} {
		if _, _, err := ParseObsstore(bad); !errors.Is(err, ErrObsstore) {
			t.Errorf("%x: err %v, want ErrObsstore", bad, err)
		}
	}
	// What EncodeObsMarkers writes reads back equal, in both formats.
	for _, version := range []int{ObsFormat0, ObsFormat1} {
		enc, err := EncodeObsMarkers(ms, true, version)
		if err != nil {
			t.Fatal(err)
		}
		_, back, err := ParseObsstore(enc)
		if err != nil || len(back) != len(ms) {
			t.Fatalf("format %d: %v", version, err)
		}
		for i := range ms {
			if back[i].Key() != ms[i].Key() {
				t.Errorf("format %d, marker %d: %+v, want %+v", version, i, back[i], ms[i])
			}
		}
	}
	if enc, _ := EncodeObsMarkers(ms, true, ObsFormat1); string(enc) != string(data) {
		t.Errorf("format 1 encoding differs:\n%x\n%x", enc, data)
	}
}

// TestParseObsstoreHg reads the obsstore hg wrote and compares with hg
// debugobsolete.
func TestParseObsstoreHg(t *testing.T) {
	dir := testenv.Generate(t, testenv.Obsolete)
	data, err := os.ReadFile(filepath.Join(dir, ".hg", "store", "obsstore"))
	if err != nil {
		t.Fatal(err)
	}
	_, ms, err := ParseObsstore(data)
	if err != nil {
		t.Fatal(err)
	}
	if enc, err := EncodeObsMarkers(ms, true, ObsFormat1); err != nil || string(enc) != string(data) {
		t.Errorf("EncodeObsMarkers does not give back hg's obsstore: %v", err)
	}
	out := string(testenv.Hg(t, dir, "debugobsolete"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(ms) {
		t.Fatalf("%d markers, hg lists %d:\n%s", len(ms), len(lines), out)
	}
	for i, m := range ms {
		f := strings.Fields(lines[i])
		if f[0] != hex.EncodeToString(m.Prec) {
			t.Errorf("marker %d: precursor %x, hg %s", i, m.Prec, f[0])
		}
		if len(m.Succs) == 1 && f[1] != hex.EncodeToString(m.Succs[0]) {
			t.Errorf("marker %d: successor %x, hg %s", i, m.Succs[0], f[1])
		}
		if len(m.Succs) == 0 && f[1] != "0" {
			t.Errorf("marker %d: hg lists successors %s", i, f[1])
		}
	}
}

func FuzzParseObsstore(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add(append([]byte{1}, marker1(1, []byte{2, 3}, 2, [][2]string{{"user", "x"}, {"ef1", "0"}})...))
	f.Add(append([]byte{1}, marker1(1, nil, -1, nil)...))
	v0 := []byte{0, 1, 0, 0, 0, 2, 0}
	v0 = append(v0, make([]byte, 40)...)
	f.Add(append(v0, 'a', 'b'))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ms, err := ParseObsstore(data)
		if err != nil {
			return
		}
		if len(ms) > len(data) {
			t.Fatalf("%d markers from %d bytes", len(ms), len(data))
		}
		// Re-encoding in the same format and reading again keeps every
		// marker (the dates and parents of format 0 included).
		if v < 0 {
			return
		}
		enc, err := EncodeObsMarkers(ms, true, v)
		if err != nil {
			return // a marker that format cannot hold (hg fails too)
		}
		_, back, err := ParseObsstore(enc)
		if err != nil || len(back) != len(ms) {
			t.Fatalf("re-encoded: %v, %d markers of %d", err, len(back), len(ms))
		}
		for i := range ms {
			if back[i].Key() != ms[i].Key() && !math.IsNaN(ms[i].Date) {
				t.Fatalf("marker %d: %+v, re-encoded %+v", i, ms[i], back[i])
			}
		}
	})
}
