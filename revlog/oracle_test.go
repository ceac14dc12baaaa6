package revlog

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestOracleRevlogs reads every revlog of every variant and compares each
// index field, delta parent, head set and raw text with what Mercurial's
// own revlog code reports (testdata/hgdump.py).
func TestOracleRevlogs(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir := fixtures(t)[v.name]
			logs := hgDump(t, v.name)
			st, err := storeFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			fsys := os.DirFS(st)
			var sawSplit, sawInline, sawLongChain bool
			censored := 0
			splitCompressed := false
			markers := map[byte]int{}
			for _, want := range logs {
				r, err := Open(fsys, want.Path)
				if err != nil {
					t.Fatalf("Open(%s): %v", want.Path, err)
				}
				censored += checkAgainstDump(t, r, &want)
				for rev := range r.Len() {
					c, _, err := r.readChunks([]int{rev})
					if err != nil {
						t.Fatal(err)
					}
					if len(c[0]) > 0 {
						markers[c[0][0]]++
						if !r.Inline() && (c[0][0] == 'x' || c[0][0] == '(') {
							splitCompressed = true
						}
					}
				}
				if v.name == "nogd" && r.GeneralDelta() || v.name == "zstd" && want.Path == "data/mf.i" && !r.GeneralDelta() {
					t.Errorf("%s: generaldelta %v in variant %s", want.Path, r.GeneralDelta(), v.name)
				}
				sawSplit = sawSplit || !r.Inline()
				sawInline = sawInline || r.Inline()
				for rev := range r.Len() {
					if len(r.DeltaChain(rev)) > 100 {
						sawLongChain = true
					}
				}
				if err := r.Close(); err != nil {
					t.Error(err)
				}
			}
			// Each engine must really be exercised.
			want := map[string]byte{"zstd": '(', "zlib": 'x', "nogd": 'x'}[v.name]
			if want != 0 && markers[want] == 0 || v.name != "zstd" && markers['('] > 0 || v.name == "none" && markers['x'] > 0 {
				t.Errorf("chunk markers %v do not fit variant %s", markers, v.name)
			}
			if splitCompressed != (v.name != "none") {
				t.Errorf("variant %s: compressed chunks in a split revlog: %v", v.name, splitCompressed)
			}
			if !sawSplit || !sawInline || !sawLongChain || censored != 2 {
				t.Errorf("fixture lacks coverage: split %v, inline %v, chain>100 %v, censored %d (want 2: both walks)", sawSplit, sawInline, sawLongChain, censored)
			}
		})
	}
}

// checkAgainstDump compares r with hg's view and returns how many
// censored revisions it saw.
func checkAgainstDump(t *testing.T, r *Revlog, want *dumpRevlog) (censored int) {
	t.Helper()
	name := want.Path
	if r.Len() != len(want.Revs) {
		t.Fatalf("%s: Len %d, hg %d", name, r.Len(), len(want.Revs))
	}
	if r.Inline() != want.Inline || r.GeneralDelta() != want.GeneralDelta {
		t.Errorf("%s: inline %v generaldelta %v, hg %v %v", name, r.Inline(), r.GeneralDelta(), want.Inline, want.GeneralDelta)
	}
	wantHeads := want.Heads
	if len(wantHeads) == 1 && wantHeads[0] == NullRev {
		wantHeads = nil
	}
	if h := r.Heads(); !slices.Equal(h, wantHeads) {
		t.Errorf("%s: Heads %v, hg %v", name, h, wantHeads)
	}
	// Walk backwards first (cold cache: whole chains), then forwards.
	order := make([]int, 0, 2*r.Len())
	for rev := r.Len() - 1; rev >= 0; rev-- {
		order = append(order, rev)
	}
	for rev := range r.Len() {
		order = append(order, rev)
	}
	for _, rev := range order {
		w := want.Revs[rev]
		e := r.Entry(rev)
		got := [...]int64{e.Offset, int64(e.Flags), e.CompressedLen, e.RawLen, int64(e.BaseRev), int64(e.LinkRev), int64(e.P1), int64(e.P2)}
		exp := [...]int64{w.Offset, int64(w.Flags), w.CompLen, w.RawLen, int64(w.Base), int64(w.Link), int64(w.P1), int64(w.P2)}
		if got != exp {
			t.Fatalf("%s rev %d: entry %v, hg %v", name, rev, got, exp)
		}
		if e.Node.String() != w.Node {
			t.Fatalf("%s rev %d: node %s, hg %s", name, rev, e.Node, w.Node)
		}
		if dp := r.DeltaParent(rev); dp != w.DeltaParent {
			t.Errorf("%s rev %d: DeltaParent %d, hg %d", name, rev, dp, w.DeltaParent)
		}
		if got, ok := r.Rev(e.Node); !ok || got != rev {
			t.Errorf("%s: Rev(%s) = %d, %v", name, e.Node, got, ok)
		}
		text, err := r.Revision(rev)
		if w.Data == nil {
			// hg refuses censored revisions; nothing else fails here.
			if !errors.Is(err, ErrCensored) || w.Flags&FlagCensored == 0 || !strings.Contains(*w.Error, "CensoredNodeError") {
				t.Errorf("%s rev %d: hg failed (%s), Revision: %v", name, rev, *w.Error, err)
			}
			censored++
			continue
		}
		if err != nil {
			t.Fatalf("%s rev %d: %v", name, rev, err)
		}
		if !bytes.Equal(text, mustHex(t, *w.Data)) {
			t.Fatalf("%s rev %d: Revision differs from hg rawdata (%d vs %d bytes)", name, rev, len(text), len(*w.Data)/2)
		}
	}
	return censored
}

// TestOracleDebugdataCLI spot-checks the dump script itself against the
// hg command line: `hg debugdata` for the changelog, the manifest, a split
// filelog and the long chain, byte for byte.
func TestOracleDebugdataCLI(t *testing.T) {
	dir := fixtures(t)["zstd"]
	st, _ := storeFS(dir)
	fsys := os.DirFS(st)
	cases := []struct {
		args  []string
		index string
		rev   int
	}{
		{[]string{"-c", "0"}, "00changelog.i", 0},
		{[]string{"-m", "301"}, "00manifest.i", 301},
		{[]string{"big.bin", "1"}, "data/big.bin.i", 1},
		{[]string{"mf", "299"}, "data/mf.i", 299},
		{[]string{"Upper Case.txt", "0"}, "data/_upper _case.txt.i", 0},
	}
	for _, c := range cases {
		want := testenv.Hg(t, dir, append([]string{"debugdata"}, c.args...)...)
		r, err := Open(fsys, c.index)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Revision(c.rev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("hg debugdata %v: %d bytes, we have %d", c.args, len(want), len(got))
		}
		r.Close()
	}
}

// TestOracleDebugindex compares Entry fields with `hg debugindex --debug`
// columns for the changelog and a split filelog.
func TestOracleDebugindex(t *testing.T) {
	dir := fixtures(t)["nogd"]
	st, _ := storeFS(dir)
	fsys := os.DirFS(st)
	for _, c := range []struct{ arg, index string }{{"-c", "00changelog.i"}, {"big.bin", "data/big.bin.i"}} {
		out := string(testenv.Hg(t, dir, "debugindex", "--debug", c.arg))
		r, err := Open(fsys, c.index)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines)-1 != r.Len() {
			t.Fatalf("%s: hg lists %d revisions, we have %d", c.index, len(lines)-1, r.Len())
		}
		// rev rank linkrev nodeid p1-rev p1-nodeid p2-rev p2-nodeid
		// full-size delta-base flags comp-mode data-offset chunk-size ...
		for rev, l := range lines[1:] {
			f := strings.Fields(l)
			e := r.Entry(rev)
			num := func(i int) int64 {
				n, err := strconv.ParseInt(f[i], 10, 64)
				if err != nil {
					t.Fatalf("%s: column %d of %q: %v", c.index, i, l, err)
				}
				return n
			}
			got := []int64{int64(rev), int64(e.LinkRev), int64(e.P1), int64(e.P2), e.RawLen, int64(e.BaseRev), int64(e.Flags), e.Offset, e.CompressedLen}
			want := []int64{num(0), num(2), num(4), num(6), num(8), num(9), num(10), num(12), num(13)}
			if !slices.Equal(got, want) || f[3] != e.Node.String() || f[5] != r.Node(e.P1).String() {
				t.Errorf("%s rev %d: have %v %s, hg %v %s", c.index, rev, got, e.Node, want, f[3])
			}
		}
		r.Close()
	}
}

// TestOracleChangesets compares ParseChangeset with hg log's view of every
// real commit (the debugbuilddag ones are checked for a sample).
func TestOracleChangesets(t *testing.T) {
	dir := fixtures(t)["zlib"]
	st, _ := storeFS(dir)
	cl, err := Open(os.DirFS(st), "00changelog.i")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const tmpl = "{rev}\x1f{node}\x1f{manifest % '{node}'}\x1f{author}\x1f{date|hgdate}\x1f{join(files, '\x1d')}\x1f{join(extras, '\x1d')}\x1f{desc}\x1e"
	out := testenv.Hg(t, dir, "log", "-r", "0+1+259+260+299:", "-T", tmpl)
	recs := strings.Split(strings.TrimSuffix(string(out), "\x1e"), "\x1e")
	if len(recs) != 8 {
		t.Fatalf("hg log gave %d records", len(recs))
	}
	for _, rec := range recs {
		f := strings.Split(rec, "\x1f")
		rev, _ := strconv.Atoi(f[0])
		cs, err := readChangeset(cl, rev)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Node(rev).String() != f[1] || cs.Manifest.String() != f[2] || cs.User != f[3] {
			t.Errorf("rev %d: node/manifest/user %s %s %q, hg %v", rev, cl.Node(rev), cs.Manifest, cs.User, f[1:4])
		}
		// hgdate prints the integer part of the time.
		if got := strconv.FormatInt(cs.Time, 10) + " " + strconv.Itoa(cs.TZ); got != f[4] {
			t.Errorf("rev %d: date %q (text %q), hg %q", rev, got, cs.DateText, f[4])
		}
		var files []string
		if f[5] != "" {
			files = strings.Split(f[5], "\x1d")
		}
		if !slices.Equal(cs.Files, files) {
			t.Errorf("rev %d: files %q, hg %q", rev, cs.Files, files)
		}
		var extras []string
		for k, v := range cs.Extra {
			extras = append(extras, k+"="+v)
		}
		slices.Sort(extras)
		if strings.Join(extras, "\x1d") != f[6] {
			t.Errorf("rev %d: extras %q, hg %q", rev, extras, f[6])
		}
		if cs.Description != f[7] {
			t.Errorf("rev %d: description %q, hg %q", rev, cs.Description, f[7])
		}
	}
	last, _ := readChangeset(cl, cl.Len()-1)
	if last.Branch() != "feature" || last.Extra["close"] != "1" || last.TZ != 19800 {
		t.Errorf("tip: branch %q extra %v tz %d", last.Branch(), last.Extra, last.TZ)
	}
}

// TestOracleManifestsAndFiles compares the tip manifest with `hg manifest
// --debug -T json` and file contents with `hg cat`, and copy metadata
// with hg's copy records.
func TestOracleManifestsAndFiles(t *testing.T) {
	dir := fixtures(t)["zstd"]
	st, _ := storeFS(dir)
	fsys := os.DirFS(st)
	cl, err := Open(fsys, "00changelog.i")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ml, err := Open(fsys, "00manifest.i")
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Close()
	for _, crev := range []int{cl.Len() - 3, cl.Len() - 2} {
		cs, err := readChangeset(cl, crev)
		if err != nil {
			t.Fatal(err)
		}
		mrev, ok := ml.Rev(cs.Manifest)
		if !ok {
			t.Fatalf("manifest %s not found", cs.Manifest)
		}
		text, err := ml.Revision(mrev)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := ParseManifest(text)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Path+" "+e.Flags+" "+e.Node.String())
		}
		// hg manifest --debug: "<hex> <perm> <'*' exec, '@' link, ' '> <path>"
		var want []string
		out := testenv.Hg(t, dir, "manifest", "--debug", "-r", strconv.Itoa(crev))
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			flag := map[byte]string{'*': "x", '@': "l", ' ': ""}[l[45]]
			want = append(want, l[47:]+" "+flag+" "+l[:40])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("manifest of rev %d:\n%q\nhg:\n%q", crev, got, want)
		}
		// One hg cat for all files of the revision.
		outDir := t.TempDir()
		args := []string{"cat", "-r", strconv.Itoa(crev), "-o", filepath.Join(outDir, "%p")}
		for _, e := range entries {
			if e.Path != "secret.txt" || crev != cl.Len()-3 {
				args = append(args, filepath.Join(dir, e.Path))
			}
		}
		testenv.Hg(t, dir, args...)
		for _, e := range entries {
			fl, err := Open(fsys, encodeSimple(e.Path))
			if err != nil {
				t.Fatal(err)
			}
			frev, ok := fl.Rev(e.Node)
			if !ok {
				t.Fatalf("%s: node %s not in filelog", e.Path, e.Node)
			}
			text, err := fl.Revision(frev)
			if e.Path == "secret.txt" && crev == cl.Len()-3 {
				// hg cat aborts on it ("censored node"); so do we.
				if !errors.Is(err, ErrCensored) {
					t.Errorf("censored secret.txt: %v", err)
				}
				fl.Close()
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			meta, data, err := ParseFileMeta(text)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(outDir, e.Path))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("%s at %d: %d bytes, hg cat %d", e.Path, crev, len(data), len(want))
			}
			switch {
			case e.Path == "copy.txt" && crev == cl.Len()-2:
				if copyRev, err := ParseNode(meta["copyrev"]); meta["copy"] != "a.txt" || err != nil || copyRev.IsNull() {
					t.Errorf("copy.txt: copy info %q %q", meta["copy"], meta["copyrev"])
				}
			case e.Path == "moved.dat":
				if meta["copy"] != "bin.dat" {
					t.Errorf("moved.dat: copy from %q", meta["copy"])
				}
			case e.Path == "meta.txt":
				if !bytes.HasPrefix(data, []byte("\x01\n")) {
					t.Errorf("meta.txt: escaped content not restored: %q", data)
				}
			}
			fl.Close()
		}
	}
}

// readChangeset reads and parses changelog revision rev.
func readChangeset(cl *Revlog, rev int) (*Changeset, error) {
	text, err := cl.Revision(rev)
	if err != nil {
		return nil, err
	}
	return ParseChangeset(text)
}

// encodeSimple is the store encoding for the fixture's names (the store
// package owns the general one): upper case becomes _x.
func encodeSimple(path string) string {
	var b strings.Builder
	for _, c := range "data/" + path + ".i" {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			b.WriteRune(c + 'a' - 'A')
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// TestOracleLookup checks prefix lookup against hg's own resolution.
func TestOracleLookup(t *testing.T) {
	dir := fixtures(t)["zstd"]
	st, _ := storeFS(dir)
	cl, err := Open(os.DirFS(st), "00changelog.i")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, rev := range []int{0, 17, 299, cl.Len() - 1} {
		n := cl.Node(rev).String()
		for _, l := range []int{6, 7, 12, 40} {
			got, err := cl.LookupPrefix(strings.ToUpper(n[:l]))
			if err != nil || got != rev {
				t.Errorf("LookupPrefix(%s) = %d, %v; want %d", n[:l], got, err, rev)
			}
		}
	}
	// A one-digit prefix is shared by many of 303 nodes.
	if _, err := cl.LookupPrefix("a"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("LookupPrefix(a): %v, want ErrAmbiguous", err)
	}
	for _, p := range []string{"zz", "", strings.Repeat("f", 41)} {
		if _, err := cl.LookupPrefix(p); !errors.Is(err, ErrNotFound) {
			t.Errorf("LookupPrefix(%q): %v, want ErrNotFound", p, err)
		}
	}
	if rev, err := cl.LookupPrefix(strings.Repeat("0", 40)); err != nil || rev != NullRev {
		t.Errorf("null node: %d, %v", rev, err)
	}
	want := strings.TrimSpace(string(testenv.Hg(t, dir, "log", "-r", "tip", "-T", "{node}")))
	if h := cl.Heads(); len(h) == 0 || cl.Node(h[len(h)-1]).String() != want {
		t.Errorf("heads %v, hg tip %s", h, want)
	}
}

// TestRevisionChunk checks RevisionChunk against Revision and RawChunk of
// a second reader of the same revlog, on every revlog of every variant,
// walked backwards (whole chains) then forwards (the text cache holds
// the delta parent, or rev itself on the second read), and StoredChunks
// with DecompressChunk against RawChunk.
func TestRevisionChunk(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir := fixtures(t)[v.name]
			st, err := storeFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			fsys := os.DirFS(st)
			for _, want := range hgDump(t, v.name) {
				r, err := Open(fsys, want.Path)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := Open(fsys, want.Path)
				if err != nil {
					t.Fatal(err)
				}
				var order []int
				for rev := r.Len() - 1; rev >= 0; rev-- {
					order = append(order, rev)
				}
				for rev := range r.Len() {
					order = append(order, rev, rev)
				}
				for _, rev := range order {
					text, chunk, err := r.RevisionChunk(rev)
					wantText, wantErr := ref.Revision(rev)
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("%s rev %d: RevisionChunk: %v, Revision: %v", want.Path, rev, err, wantErr)
					}
					if err != nil {
						continue
					}
					wantChunk, err := ref.RawChunk(rev)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(text, wantText) || !bytes.Equal(chunk, wantChunk) {
						t.Fatalf("%s rev %d: RevisionChunk differs from Revision and RawChunk", want.Path, rev)
					}
				}
				// StoredChunks of every revision, then of every other one
				// (gaps between the chunks), decoded by DecompressChunk.
				for _, step := range []int{1, 2} {
					var revs []int
					for rev := 0; rev < r.Len(); rev += step {
						revs = append(revs, rev)
					}
					stored, err := r.StoredChunks(revs)
					if err != nil || len(stored) != len(revs) {
						t.Fatalf("%s: StoredChunks: %d chunks, %v", want.Path, len(stored), err)
					}
					for i, rev := range revs {
						got, err := r.DecompressChunk(rev, stored[i])
						wantChunk, wantErr := ref.RawChunk(rev)
						if err != nil || wantErr != nil || !bytes.Equal(got, wantChunk) {
							t.Fatalf("%s rev %d: DecompressChunk differs from RawChunk (%v, %v)", want.Path, rev, err, wantErr)
						}
					}
				}
				if _, err := r.StoredChunks([]int{r.Len()}); err == nil {
					t.Errorf("%s: StoredChunks of revision %d: no error", want.Path, r.Len())
				}
				r.Close()
				if _, err := r.StoredChunks([]int{0}); !errors.Is(err, fs.ErrClosed) {
					t.Errorf("%s: StoredChunks after Close: %v", want.Path, err)
				}
				ref.Close()
			}
		})
	}
}
