package changegroup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
)

type testPart struct {
	typ       string
	mandatory bool
	man, adv  []bundle2.Param
	data      []byte
}

// encodeBundle2 encodes an uncompressed HG20 bundle of the given parts.
func encodeBundle2(t testing.TB, parts ...testPart) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw, err := bundle2.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if err := bw.WritePart(p.typ, p.mandatory, p.man, p.adv, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func param(kv ...string) []bundle2.Param {
	var out []bundle2.Param
	for i := 0; i < len(kv); i += 2 {
		out = append(out, bundle2.Param{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

func cgPart(t testing.TB, version string, extra string) testPart {
	return testPart{typ: "changegroup", mandatory: true, man: param("version", version),
		adv: param("nbchanges", "2", "targetphase", "2"), data: append(sampleCG(t, version), extra...)}
}

func TestBundle2Parts(t *testing.T) {
	heads := []PhaseHead{{PhasePublic, node(1)}, {PhaseSecret, node(2)}}
	books, err := bundle2.EncodeBookmarks(map[string][20]byte{"b": node(2), "a": node(1)}, []string{"gone"})
	if err != nil {
		t.Fatal(err)
	}
	data := encodeBundle2(t,
		cgPart(t, Version3, ""),
		testPart{typ: "cache:rev-branch-cache", data: []byte("ignored")},
		testPart{typ: "unknown-advisory", data: []byte("skipped")},
		testPart{typ: "hgtagsfnodes", mandatory: true, data: []byte("x")},
		testPart{typ: "phase-heads", mandatory: true, data: EncodePhaseHeads(heads)},
		testPart{typ: "bookmarks", mandatory: true, data: books},
		testPart{typ: "listkeys", mandatory: true, man: param("namespace", "phases"), data: []byte("k1\tv1\nk2\tv2")},
		testPart{typ: "changegroup", man: param("version", "02", "unknownparam", "x")}, // advisory, skipped
	)
	d, err := readBundle(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range d.parts {
		types = append(types, p.Type)
	}
	if got := strings.Join(types, " "); got != "changegroup cache:rev-branch-cache hgtagsfnodes phase-heads bookmarks listkeys" {
		t.Fatalf("parts %s", got)
	}
	cg, ph, bm, lk := d.parts[0], d.parts[3], d.parts[4], d.parts[5]
	if cg.NbChanges != 2 || cg.TargetPhase != 2 || d.version != Version3 || len(d.groups) != 4 {
		t.Errorf("changegroup part: nbchanges %d targetphase %d version %s, %d groups", cg.NbChanges, cg.TargetPhase, d.version, len(d.groups))
	}
	if fmt.Sprint(ph.PhaseHeads) != fmt.Sprint(heads) {
		t.Errorf("phase heads %v", ph.PhaseHeads)
	}
	if len(bm.Bookmarks) != 2 || bm.Bookmarks["a"] != node(1) || bm.Bookmarks["b"] != node(2) || fmt.Sprint(bm.DeletedBookmarks) != "[gone]" {
		t.Errorf("bookmarks %v deleted %v", bm.Bookmarks, bm.DeletedBookmarks)
	}
	if lk.Params["namespace"] != "phases" || fmt.Sprint(lk.Listkeys) != "map[k1:v1 k2:v2]" {
		t.Errorf("listkeys %v %v", lk.Params, lk.Listkeys)
	}
}

// TestBundle2Skip: a changegroup part left unread is skipped by NextPart.
func TestBundle2Skip(t *testing.T) {
	data := encodeBundle2(t, cgPart(t, Version2, ""), testPart{typ: "phase-heads", data: EncodePhaseHeads([]PhaseHead{{PhaseDraft, node(9)}})})
	b, err := OpenBundle(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := b.NextPart(); err != nil || p.Changegroup == nil {
		t.Fatalf("first part: %v %v", p, err)
	}
	p, err := b.NextPart()
	if err != nil || len(p.PhaseHeads) != 1 {
		t.Fatalf("second part: %v %v", p, err)
	}
	if _, err := b.NextPart(); err != io.EOF {
		t.Fatalf("after the last part: %v", err)
	}
}

func TestBundle2BadParts(t *testing.T) {
	var remote *bundle2.RemoteError
	cases := []struct {
		name  string
		parts []testPart
		want  error
	}{
		{"unknown mandatory part", []testPart{{typ: "pushvars2", mandatory: true}}, ErrUnsupported},
		{"unknown mandatory param", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "02", "foo", "1")}}, ErrUnsupported},
		{"changegroup 04", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "04")}}, ErrUnsupported},
		{"tree manifests", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "03", "treemanifest", "1")}}, ErrUnsupported},
		{"stream2", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "02"), data: sampleCG(t, "02")}, {typ: "stream2", mandatory: true}}, ErrStreamBundle},
		{"bad nbchanges", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "02"), adv: param("nbchanges", "x")}}, ErrCorrupt},
		{"bad targetphase", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "02"), adv: param("targetphase", "7")}}, ErrCorrupt},
		{"trailing data after changegroup", []testPart{cgPart(t, Version2, "junk")}, ErrCorrupt},
		{"empty changegroup part", []testPart{{typ: "changegroup", mandatory: true, man: param("version", "02")}}, ErrCorrupt},
		{"bad phase-heads length", []testPart{{typ: "phase-heads", data: make([]byte, 25)}}, ErrCorrupt},
		{"unknown phase", []testPart{{typ: "phase-heads", data: EncodePhaseHeads([]PhaseHead{{Phase: 5}})}}, ErrCorrupt},
		{"truncated bookmark", []testPart{{typ: "bookmarks", data: append(make([]byte, 20), 0, 5, 'a')}}, ErrCorrupt},
		{"bad listkeys", []testPart{{typ: "listkeys", man: param("namespace", "x"), data: []byte("novalue")}}, ErrCorrupt},
	}
	for _, c := range cases {
		_, err := readBundle(bytes.NewReader(encodeBundle2(t, c.parts...)))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	_, err := readBundle(bytes.NewReader(encodeBundle2(t, testPart{typ: "error:abort", adv: param("message", "nope", "hint", "try again")})))
	if !errors.As(err, &remote) || remote.Message != "nope" || remote.Hint != "try again" {
		t.Errorf("error:abort part: %v", err)
	}
}

// TestBundle2Corrupt: errors of the bundle2 layer read as ErrCorrupt.
func TestBundle2Corrupt(t *testing.T) {
	data := encodeBundle2(t, cgPart(t, Version2, ""))
	bad := bytes.Clone(data)
	bad[9] = 0xff // first part header size: negative
	_, err := readBundle(bytes.NewReader(bad))
	mustCorrupt(t, "negative part header size", err)
	for n := 0; n < len(data); n++ {
		_, err := readBundle(bytes.NewReader(data[:n]))
		mustCorrupt(t, fmt.Sprintf("cut at %d", n), err)
	}
}

// errReader fails after n bytes with an I/O error.
type errReader struct {
	r   io.Reader
	n   int
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, e.err
	}
	if len(p) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= n
	return n, err
}

// TestIOErrorsPassThrough: an error of the underlying reader is not
// reported as corruption.
func TestIOErrorsPassThrough(t *testing.T) {
	ioErr := errors.New("disk on fire")
	var gz bytes.Buffer
	w, _ := NewBundleWriter(&gz, BundleOptions{Type: "HG10GZ"})
	w.Close()
	for name, data := range map[string][]byte{"HG20": encodeBundle2(t, cgPart(t, Version2, "")), "HG10GZ": gz.Bytes()} {
		_, err := readBundle(&errReader{r: bytes.NewReader(data), n: 8, err: ioErr})
		if !errors.Is(err, ioErr) || errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want the I/O error and not ErrCorrupt", name, err)
		}
	}
}
