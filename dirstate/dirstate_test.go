package dirstate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/testenv"
)

// v2Allow lets hg without its Rust extensions use dirstate-v2.
var v2Allow = []string{"--config", "storage.dirstate-v2.slow-path=allow"}

// hgClone clones src with hg into a new directory (a working copy), in v2
// if v2, and returns it.
func hgClone(t *testing.T, hg testenv.Mercurial, src string, v2 bool) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "wc")
	args := []string{"clone", "-q", "--config", "format.use-dirstate-v2=" + map[bool]string{true: "1", false: "0"}[v2]}
	args = append(args, v2Allow...)
	hg.Run(t, "", append(args, src, dst)...)
	return dst
}

func debugstate(t *testing.T, hg testenv.Mercurial, dir string) string {
	t.Helper()
	return string(hg.Run(t, dir, append([]string{"debugstate", "--no-dates"}, v2Allow...)...))
}

// TestReadWriteHg reads the dirstates hg 6.3 and 7 write after a clone
// (v1 and v2), writes them back, and has both hg versions read the
// result: the same entries, and for v2 the same data file byte for byte
// (the tree is laid out as v2.pack_dirstate lays it out).
func TestReadWriteHg(t *testing.T) {
	src := testenv.Generate(t, testenv.Spec{Files: 5, Revisions: 2, History: true, Empty: true})
	hgs := testenv.Mercurials(t)
	for _, hg := range hgs {
		for _, v2 := range []bool{false, true} {
			name := hg.Name + map[bool]string{false: "-v1", true: "-v2"}[v2]
			t.Run(name, func(t *testing.T) {
				wc := hgClone(t, hg, src, v2)
				hgDir := filepath.Join(wc, ".hg")
				want := map[string]string{}
				for _, h := range hgs {
					want[h.Name] = debugstate(t, h, wc)
				}
				d, err := dirstate.Read(hgDir, v2)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Entries) == 0 {
					t.Fatal("no entries read")
				}
				if v2 {
					dk, err := dirstate.ParseDocket(mustRead(t, filepath.Join(hgDir, "dirstate")))
					if err != nil {
						t.Fatal(err)
					}
					hgData := mustRead(t, filepath.Join(hgDir, dk.DataFile()))
					d.Sort()
					data, meta, err := d.EncodeV2()
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(data, hgData[:dk.DataSize]) || meta != dk.Meta {
						t.Errorf("v2 data differs from hg's:\nhgfs %x\nhg   %x\nmeta %x\nhg   %x", data, hgData, meta, dk.Meta)
					}
				}
				if err := dirstate.Write(hgDir, d, v2); err != nil {
					t.Fatal(err)
				}
				for _, h := range hgs {
					if got := debugstate(t, h, wc); got != want[h.Name] {
						t.Errorf("%s debugstate of the rewritten dirstate:\n%s\nwant\n%s", h.Name, got, want[h.Name])
					}
				}
				// status writes the dirstate back (mtimes now known): last.
				for _, h := range hgs {
					if out := h.Run(t, wc, append([]string{"status"}, v2Allow...)...); len(out) != 0 {
						t.Errorf("%s status: %s", h.Name, out)
					}
				}
				// hg debugstate sorts by path; so does String after Sort.
				d.Sort()
				var sorted []string
				for i := range d.Entries {
					sorted = append(sorted, d.Entries[i].String())
				}
				if got := strings.Join(sorted, "\n") + "\n"; got != want[hg.Name] {
					t.Errorf("Entry.String:\n%s\nwant hg's\n%s", got, want[hg.Name])
				}
				if v2 {
					// The old data file is gone, the new one is the only one.
					m, _ := filepath.Glob(filepath.Join(hgDir, "dirstate.*"))
					if len(m) != 1 {
						t.Errorf("data files after the rewrite: %v", m)
					}
				}
			})
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTrip encodes every kind of entry hg records and reads it
// back, in both formats.
func TestRoundTrip(t *testing.T) {
	m := dirstate.Timestamp{Sec: 1700000000, Nsec: 123}
	d := &dirstate.Dirstate{Entries: []dirstate.Entry{
		dirstate.Clean("a", dirstate.ModeRegular|0o644, 3, &m),
		dirstate.Clean("d/x", dirstate.ModeRegular|0o755, 0, nil),
		dirstate.Clean("d/e/l", dirstate.ModeSymlink|0o644, 1, &m),
		{Path: "added", WCTracked: true},
		{Path: "copied", WCTracked: true, Copy: "a"},
		{Path: "gone", P1Tracked: true},
		{Path: "merged", WCTracked: true, P1Tracked: true, P2Info: true},
	}}
	d.Parents[0][0] = 1
	d.Sort()
	v1, err := d.AppendV1(nil)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := dirstate.ParseV1(v1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Entries {
		w := d.Entries[i]
		g := r1.Entries[i]
		ws, wm, wsz, wt := w.V1()
		gs, gm, gsz, gt := g.V1()
		if ws != gs || wm != gm || wsz != gsz || wt != gt || w.Path != g.Path || w.Copy != g.Copy {
			t.Errorf("v1 %s: got %c %o %d %d, want %c %o %d %d", w.Path, gs, gm, gsz, gt, ws, wm, wsz, wt)
		}
	}
	data, meta, err := d.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	dk := &dirstate.Docket{Parents: d.Parents, Meta: meta, DataSize: uint32(len(data)), ID: "abcd1234"}
	dk2, err := dirstate.ParseDocket(dk.Encode())
	if err != nil || !reflect.DeepEqual(dk, dk2) {
		t.Fatalf("docket round trip: %v %+v", err, dk2)
	}
	r2, err := dirstate.ParseV2(dk2, data)
	if err != nil {
		t.Fatal(err)
	}
	r2.Sort()
	if !reflect.DeepEqual(r2, d) {
		t.Errorf("v2 round trip:\n%+v\nwant\n%+v", r2, d)
	}
}

// FuzzParse feeds the readers untrusted bytes: an error or a dirstate,
// never a panic, and what they return encodes again.
func FuzzParse(f *testing.F) {
	m := dirstate.Timestamp{Sec: 5, Nsec: 7}
	d := &dirstate.Dirstate{Entries: []dirstate.Entry{
		dirstate.Clean("a", dirstate.ModeRegular|0o644, 3, &m),
		dirstate.Clean("d/e/x", dirstate.ModeRegular|0o755, 0, nil),
		{Path: "c", WCTracked: true, Copy: "a"},
	}}
	v1, _ := d.AppendV1(nil)
	data, meta, _ := d.EncodeV2()
	dk := &dirstate.Docket{Meta: meta, DataSize: uint32(len(data)), ID: "00ff"}
	f.Add(v1, dk.Encode(), data)
	f.Add([]byte{}, []byte("dirstate-v2\n"), []byte{})
	f.Fuzz(func(t *testing.T, v1, docket, data []byte) {
		if d, err := dirstate.ParseV1(v1); err == nil {
			if _, err := d.AppendV1(nil); err != nil && !strings.Contains(err.Error(), "invalid path") {
				t.Fatal(err)
			}
		}
		dk, err := dirstate.ParseDocket(docket)
		if err != nil {
			return
		}
		if d, err := dirstate.ParseV2(dk, data); err == nil {
			d.AppendV1(nil)
			d.EncodeV2()
		}
	})
}

// TestReliable: timestamp.reliable_mtime_of's cases.
func TestReliable(t *testing.T) {
	b := dirstate.Timestamp{Sec: 1000, Nsec: 500}
	for _, c := range []struct {
		m    dirstate.Timestamp
		want dirstate.Timestamp
		ok   bool
	}{
		{dirstate.Timestamp{Sec: 999, Nsec: 900}, dirstate.Timestamp{Sec: 999, Nsec: 900}, true},
		{dirstate.Timestamp{Sec: 1000, Nsec: 400}, dirstate.Timestamp{Sec: 1000, Nsec: 400, SecondAmbiguous: true}, true},
		{dirstate.Timestamp{Sec: 1000, Nsec: 500}, dirstate.Timestamp{}, false},
		{dirstate.Timestamp{Sec: 1000}, dirstate.Timestamp{}, false},
		{dirstate.Timestamp{Sec: 1001}, dirstate.Timestamp{}, false},
		{dirstate.Timestamp{Sec: 1000 + 3600*24}, dirstate.Timestamp{Sec: 1000 + 3600*24}, true},
	} {
		if got, ok := dirstate.Reliable(c.m, b); got != c.want || ok != c.ok {
			t.Errorf("Reliable(%+v, %+v) = %+v, %v; want %+v, %v", c.m, b, got, ok, c.want, c.ok)
		}
	}
}

// listOf is entries as a dirstate.EntryList.
type listOf []dirstate.Entry

func (l listOf) Len() int                { return len(l) }
func (l listOf) At(i int) dirstate.Entry { return l[i] }

// TestEncodeList: the entries read one at a time encode as the
// Dirstate holding them does, in both formats, an entry tracked
// nowhere left out.
func TestEncodeList(t *testing.T) {
	m := dirstate.Timestamp{Sec: 1700000000, Nsec: 5}
	d := &dirstate.Dirstate{Entries: []dirstate.Entry{
		dirstate.Clean("a", dirstate.ModeRegular|0o644, 3, &m),
		{Path: "b", WCTracked: true, Copy: "a"},
		{Path: "c"},
		dirstate.Clean("d/e", dirstate.ModeRegular|0o755, 9, nil),
		{Path: "gone", P1Tracked: true},
	}}
	d.Parents[0][0], d.Parents[1][3] = 1, 2
	for _, v2 := range []bool{false, true} {
		want, err := dirstate.Encode(d, v2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dirstate.EncodeList(d.Parents, listOf(d.Entries), v2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("v2 %v: %d files, want %d", v2, len(got), len(want))
		}
		// A v2 docket names a data file of a random id.
		if !bytes.Equal(got[0].Data, want[0].Data) {
			t.Errorf("v2 %v: %q\nwant %q", v2, got[0].Data, want[0].Data)
		}
		if !v2 && bytes.Contains(got[0].Data, []byte("c")) {
			t.Errorf("an entry tracked nowhere was recorded: %q", got[0].Data)
		}
	}
}
