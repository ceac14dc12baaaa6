package changegroup

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"

	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// oracleSpecs are the generated repositories the bundle tests cover: every
// history feature (merges, copies, binary, branches, tags), odd file names
// and a split revlog, and a legacy (non-generaldelta) store.
var oracleSpecs = []struct {
	name string
	spec testenv.Spec
}{
	{"small", testenv.Small},
	{"encodings", testenv.Encodings},
	{"nogeneraldelta", testenv.NoGeneralDelta},
}

// wantType is the bundle header and changegroup version each hg bundle
// type gives.
var wantType = map[string][3]string{
	"none-v1":               {"HG10UN", "UN", "01"},
	"gzip-v1":               {"HG10GZ", "GZ", "01"},
	"bzip2-v1":              {"HG10BZ", "BZ", "01"},
	"none-v2":               {"HG20", "", "02"},
	"zstd-v2":               {"HG20", "ZS", "02"},
	"bzip2-v2":              {"HG20", "BZ", "02"},
	"none-v2;cg.version=03": {"HG20", "", "03"},
}

// TestHgBundles decodes `hg bundle -a` of each repository in every bundle
// type and checks every delta against the source repository's revlogs.
func TestHgBundles(t *testing.T) {
	for _, rs := range oracleSpecs {
		t.Run(rs.name, func(t *testing.T) {
			root := testenv.Generate(t, rs.spec)
			o := newOracle(t, root)
			types := bundleTypes
			if rs.name != "small" {
				// Compression is independent of the content: the other
				// repositories cover each changegroup version once.
				types = []string{"none-v1", "none-v2", "none-v2;cg.version=03"}
			}
			for _, typ := range types {
				t.Run(strings.ReplaceAll(typ, ";", "_"), func(t *testing.T) {
					d := readBundleFile(t, hgBundle(t, root, typ))
					want := wantType[typ]
					if d.b.Type != want[0] || d.b.Compression != want[1] || d.version != want[2] {
						t.Errorf("type %s compression %q version %s, want %v", d.b.Type, d.b.Compression, d.version, want)
					}
					o.check(t, d.groups)
					if d.version != "01" {
						cg := d.parts[0]
						if cg.Type != "changegroup" || !cg.Mandatory || cg.NbChanges != o.cl.Len() {
							t.Errorf("first part %s mandatory %v nbchanges %d, want changegroup, true, %d",
								cg.Type, cg.Mandatory, cg.NbChanges, o.cl.Len())
						}
					}
				})
			}
		})
	}
}

// oracle is the source repository's view of what a full bundle carries.
type oracle struct {
	root  string
	st    *store.Store
	cl    *revlog.Revlog
	files []string // tracked paths with a filelog, sorted
	order []string // changelog nodes in revision order, from hg log
}

func newOracle(t *testing.T, root string) *oracle {
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{root: root, st: st}
	o.cl = o.open(t, "00changelog.i")
	t.Cleanup(func() { o.cl.Close() })
	fn, err := st.Fncache()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range fn {
		if p, ok := strings.CutPrefix(n, "data/"); ok {
			p = strings.TrimSuffix(strings.TrimSuffix(p, ".i"), ".d")
			if !seen[p] {
				seen[p] = true
				o.files = append(o.files, p)
			}
		}
	}
	sort.Strings(o.files)
	o.order = hgLines(t, root, "log", "-r", "all()", "-T", "{node}\n")
	return o
}

func (o *oracle) open(t *testing.T, name string) *revlog.Revlog {
	t.Helper()
	rl, err := revlog.Open(o.st.FS(), o.st.Encode(name))
	if err != nil {
		t.Fatalf("opening %s: %v", name, err)
	}
	return rl
}

// check compares decoded groups with the repository: same revlogs, same
// revisions (node, parents, linknode), and each delta applied to its base
// gives the stored text.
func (o *oracle) check(t *testing.T, groups []group) {
	t.Helper()
	if len(groups) < 2 || groups[0].kind != Changelog || groups[1].kind != Manifest {
		t.Fatalf("groups do not start with changelog, manifest")
	}
	var files []string
	for _, g := range groups[2:] {
		if g.kind != File {
			t.Fatalf("group %v after the manifest", g.kind)
		}
		files = append(files, g.name)
	}
	sort.Strings(files)
	if fmt.Sprint(files) != fmt.Sprint(o.files) {
		t.Errorf("file groups %q, want (fncache) %q", files, o.files)
	}
	var clOrder []string
	for _, d := range groups[0].deltas {
		clOrder = append(clOrder, hex.EncodeToString(d.Node[:]))
	}
	if fmt.Sprint(clOrder) != fmt.Sprint(o.order) {
		t.Errorf("changelog nodes %v, want (hg log) %v", clOrder, o.order)
	}
	for _, g := range groups {
		var rl *revlog.Revlog
		switch g.kind {
		case Changelog:
			rl = o.cl
		case Manifest:
			rl = o.open(t, "00manifest.i")
			defer rl.Close()
		default:
			rl = o.open(t, "data/"+g.name+".i")
			defer rl.Close()
		}
		o.checkGroup(t, g, rl)
	}
}

func (o *oracle) checkGroup(t *testing.T, g group, rl *revlog.Revlog) {
	t.Helper()
	if len(g.deltas) != rl.Len() {
		t.Errorf("%v %q: %d deltas, revlog has %d revisions", g.kind, g.name, len(g.deltas), rl.Len())
	}
	node := func(rev int) [20]byte {
		if rev == revlog.NullRev {
			return [20]byte{}
		}
		return rl.Node(rev)
	}
	texts := map[[20]byte][]byte{{}: nil}
	for i, d := range g.deltas {
		rev, ok := rl.Rev(d.Node)
		if !ok {
			t.Fatalf("%v %q delta %d: node %x not in the revlog", g.kind, g.name, i, d.Node)
		}
		e := rl.Entry(rev)
		if d.P1 != node(e.P1) || d.P2 != node(e.P2) {
			t.Errorf("%v %q rev %d: parents %x %x, want %x %x", g.kind, g.name, rev, d.P1, d.P2, node(e.P1), node(e.P2))
		}
		if d.LinkNode != [20]byte(o.cl.Node(e.LinkRev)) {
			t.Errorf("%v %q rev %d: linknode %x, want %x", g.kind, g.name, rev, d.LinkNode, o.cl.Node(e.LinkRev))
		}
		if d.Flags != e.Flags {
			t.Errorf("%v %q rev %d: flags %#x, want %#x", g.kind, g.name, rev, d.Flags, e.Flags)
		}
		base, ok := texts[d.Base]
		if !ok {
			t.Fatalf("%v %q rev %d: delta base %x not sent before", g.kind, g.name, rev, d.Base)
		}
		text, err := revlog.Patch(base, d.Data)
		if err != nil {
			t.Fatalf("%v %q rev %d: applying delta: %v", g.kind, g.name, rev, err)
		}
		want, err := rl.Revision(rev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(text, want) {
			t.Errorf("%v %q rev %d: rebuilt text differs from the stored one", g.kind, g.name, rev)
		}
		if revlog.HashRevision(text, d.P1, d.P2) != d.Node {
			t.Errorf("%v %q rev %d: text does not hash to its node", g.kind, g.name, rev)
		}
		texts[d.Node] = text
	}
}

// TestHgDebugdataOracle checks rebuilt texts against hg itself for one
// bundle: manifest revisions (the first, one in the middle, the last)
// equal `hg debugdata -m REV`.
func TestHgDebugdataOracle(t *testing.T) {
	root := testenv.Generate(t, testenv.Small)
	d := readBundleFile(t, hgBundle(t, root, "none-v2"))
	texts := map[[20]byte][]byte{{}: nil}
	for i, delta := range d.groups[1].deltas {
		text, err := revlog.Patch(texts[delta.Base], delta.Data)
		if err != nil {
			t.Fatal(err)
		}
		texts[delta.Node] = text
		if n := len(d.groups[1].deltas); i != 0 && i != n/2 && i != n-1 {
			continue
		}
		want := testenv.Hg(t, root, "debugdata", "-m", fmt.Sprint(i))
		if !bytes.Equal(text, want) {
			t.Errorf("manifest rev %d differs from hg debugdata", i)
		}
	}
}

func TestOpenBundleErrors(t *testing.T) {
	cases := []struct {
		name string
		data string
		want error
	}{
		{"empty", "", ErrCorrupt},
		{"short magic", "HG", ErrCorrupt},
		{"not a bundle", "GIT0abc", ErrCorrupt},
		{"packed1", "HGS1UN\x00\x00", ErrStreamBundle},
		{"unknown version", "HG30", ErrUnsupported},
		{"unknown bundle2 version", "HG21\x00\x00\x00\x00", ErrUnsupported},
		{"unknown compression", "HG10XX", ErrUnsupported},
		{"hg10 no alg", "HG10", ErrCorrupt},
		{"hg20 bad compression", "HG20\x00\x00\x00\x0eCompression=XX", ErrUnsupported},
		{"hg20 truncated params", "HG20\x00\x00\x00\x0eCompress", ErrCorrupt},
	}
	for _, c := range cases {
		_, err := readBundle(strings.NewReader(c.data))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

// TestStream2Bundle: a stream bundle made by hg is refused as such.
func TestStream2Bundle(t *testing.T) {
	root := testenv.Generate(t, testenv.Small)
	packed1 := tmpRoot + "/packed1.hg"
	testenv.Hg(t, root, "debugcreatestreamclonebundle", "--config", "server.uncompressedallowsecret=true", packed1)
	for _, path := range []string{hgBundle(t, root, "none-v2;stream=v2"), packed1} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = OpenBundle(f)
		f.Close()
		if !errors.Is(err, ErrStreamBundle) {
			t.Errorf("%s: got %v, want ErrStreamBundle", path, err)
		}
	}
}

// hgCorpus returns the bundles hg made for the fuzz corpus (see
// testdata/README), by name.
func hgCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/fuzz/FuzzOpenBundle/hg-*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no hg bundles in the corpus: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lit, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "go test fuzz v1\n[]byte(")
		if !ok || !strings.HasSuffix(lit, ")") {
			t.Fatalf("%s: not a []byte corpus entry", p)
		}
		data, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = []byte(data)
	}
	return out
}

// TestTruncatedHgBundles cuts small hg bundles of every type at every
// byte offset: each prefix is a corrupt bundle, never a panic or a hang.
func TestTruncatedHgBundles(t *testing.T) {
	for name, data := range hgCorpus(t) {
		d, err := readBundle(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: whole bundle: %v", name, err)
		}
		if len(d.groups) != 4 || len(d.groups[0].deltas) != 3 {
			t.Fatalf("%s: %d groups, want changelog, manifest, a, b with 3 changesets", name, len(d.groups))
		}
		if strings.HasSuffix(name, "phases_yes") && (len(d.parts) < 2 || len(d.parts[len(d.parts)-1].PhaseHeads) == 0) {
			t.Errorf("%s: no phase-heads part", name)
		}
		for n := 0; n < len(data); n++ {
			_, err := readBundle(bytes.NewReader(data[:n]))
			mustCorrupt(t, fmt.Sprintf("%s cut at %d of %d", name, n, len(data)), err)
		}
	}
}

// FuzzOpenBundle opens and walks a bundle file: any input gives parts or
// an error, never a panic or a hang. The committed corpus holds hg's own
// bundles of every type.
func FuzzOpenBundle(f *testing.F) {
	for _, typ := range []string{"HG10UN", "HG10GZ"} {
		var buf bytes.Buffer
		w, err := NewBundleWriter(&buf, BundleOptions{Type: typ})
		if err != nil {
			f.Fatal(err)
		}
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add(encodeBundle2(f, cgPart(f, Version3, ""),
		testPart{typ: "phase-heads", data: EncodePhaseHeads([]PhaseHead{{PhaseDraft, node(1)}})},
		testPart{typ: "listkeys", man: param("namespace", "bookmarks"), data: []byte("a\t01")}))
	f.Add([]byte("HGS1UN"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := readBundle(bytes.NewReader(data))
		var re *bundle2.RemoteError
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) &&
			!errors.Is(err, ErrStreamBundle) && !errors.As(err, &re) {
			t.Fatalf("unclassified error: %v", err)
		}
	})
}
