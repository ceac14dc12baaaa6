package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// The doctests of mercurial/store.py.
func TestEncodeDoctests(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"data/foo.i", "data/foo.i"},
		{"data/foo.i/bla.i", "data/foo.i.hg/bla.i"},
		{"data/foo.i.hg/bla.i", "data/foo.i.hg.hg/bla.i"},
		{"data/foo.i\ndata/foo.i/bla.i\ndata/foo.i.hg/bla.i\n", "data/foo.i\ndata/foo.i.hg/bla.i\ndata/foo.i.hg.hg/bla.i\n"},
	} {
		if got := EncodeDir(c.in); got != c.want {
			t.Errorf("EncodeDir(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := DecodeDir(c.want); got != c.in {
			t.Errorf("DecodeDir(%q) = %q, want %q", c.want, got, c.in)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"nothing/special.txt", "nothing/special.txt"},
		{"HELLO", "_h_e_l_l_o"},
		{"hello:world?", "hello~3aworld~3f"},
		{"the\x07quick\xadshot", "the~07quick~adshot"},
		{"foo.i/bar.d/bla.hg/hi:world?/HELLO", "foo.i.hg/bar.d.hg/bla.hg.hg/hi~3aworld~3f/_h_e_l_l_o"},
	} {
		if got := EncodeFilename(c.in); got != c.want {
			t.Errorf("EncodeFilename(%q) = %q, want %q", c.in, got, c.want)
		}
		got, err := DecodeFilename(c.want)
		if err != nil || got != c.in {
			t.Errorf("DecodeFilename(%q) = %q, %v; want %q", c.want, got, err, c.in)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"nothing/special.txt", "nothing/special.txt"},
		{"HELLO", "hello"},
		{"hello:world?", "hello~3aworld~3f"},
		{"the\x07quick\xADshot", "the~07quick~adshot"},
	} {
		if got := lowerEncode(c.in); got != c.want {
			t.Errorf("lowerEncode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in        string
		dotencode bool
		want      string
	}{
		{".foo/aux.txt/txt.aux/con/prn/nul/foo.", true, "~2efoo/au~78.txt/txt.aux/co~6e/pr~6e/nu~6c/foo~2e"},
		{".com1com2/lpt9.lpt4.lpt1/conprn/com0/lpt0/foo.", false, ".com1com2/lp~749.lpt4.lpt1/conprn/com0/lpt0/foo~2e"},
		{"foo. ", true, "foo.~20"},
		{" .foo", true, "~20.foo"},
	} {
		parts := strings.Split(c.in, "/")
		auxEncode(parts, c.dotencode)
		if got := strings.Join(parts, "/"); got != c.want {
			t.Errorf("auxEncode(%q, %v) = %q, want %q", c.in, c.dotencode, got, c.want)
		}
	}
}

func TestDecodeFilenameRejects(t *testing.T) {
	for _, s := range []string{"A", "_", "_1", "~", "~4", "~41", "~7E", "x\x01", "\xff", "a:b", "_A"} {
		if got, err := DecodeFilename(s); !errors.Is(err, ErrUndecodable) {
			t.Errorf("DecodeFilename(%q) = %q, %v; want ErrUndecodable", s, got, err)
		}
	}
}

// pythonOracle runs Mercurial's own store.py (and its C pathencode) on
// inputs and returns, per input, the fields:
// encodedir, decodedir(input), encodefilename, decodefilename(input) or
// "!", _hybridencode(False), _pathencode (C, dotencode), _hybridencode(True).
func pythonOracle(t *testing.T, inputs []string) [][]string {
	t.Helper()
	const script = `
import binascii
from mercurial import store
h = lambda b: binascii.hexlify(b).decode()
def f(fn, *a):
    try:
        return h(fn(*a))
    except (KeyError, IndexError):
        return '!'
for line in sys.stdin:
    s = binascii.unhexlify(line.strip())
    print('\t'.join([f(store.encodedir, s), f(store.decodedir, s),
        f(store.encodefilename, s), f(store.decodefilename, s),
        f(store._hybridencode, s, False), f(store._pathencode, s),
        f(store._hybridencode, s, True)]))
`
	var in bytes.Buffer
	for _, s := range inputs {
		in.WriteString(hex.EncodeToString([]byte(s)) + "\n")
	}
	cmd := testenv.HgPython(t, script)
	cmd.Stdin = &in
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python oracle: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python oracle: %d lines for %d inputs", len(lines), len(inputs))
	}
	res := make([][]string, len(lines))
	for i, l := range lines {
		fields := strings.Split(l, "\t")
		for j, f := range fields {
			if f == "!" {
				continue
			}
			b, err := hex.DecodeString(f)
			if err != nil {
				t.Fatal(err)
			}
			fields[j] = string(b)
		}
		res[i] = fields
	}
	return res
}

// randomStorePath builds paths from an alphabet rich in the bytes and
// substrings the encodings treat specially.
func randomStorePath(r *rand.Rand) string {
	atoms := []string{"a", "B", "_", "~", ".", " ", "/", ".i/", ".d/", ".hg/", "aux", "con", "COM1", "lpt9", "nul.", "prn",
		"\x01", "\x7f", "\xe9", ":", "*", "?", "\"", "<", ">", "|", "\\", "x", "yz", "~2e", "_x", "Ü"}
	var b strings.Builder
	b.WriteString([]string{"data/", "meta/", "data/", ""}[r.IntN(4)])
	n := r.IntN(20)
	if r.IntN(4) == 0 {
		n += 60 // long enough to be hashed
	}
	for range n {
		b.WriteString(atoms[r.IntN(len(atoms))])
	}
	b.WriteString([]string{".i", ".d", "", ".i"}[r.IntN(4)])
	return b.String()
}

func oracleInputs() []string {
	var in []string
	for _, f := range trickyFiles() {
		in = append(in, "data/"+f+".i", "data/"+f+".d")
	}
	in = append(in, "00changelog.i", "00manifest.d", "meta/Dir/00manifest.i",
		"data/"+strings.Repeat("/", 130)+"x.i", // empty components, hashed
		"data/"+strings.Repeat("ab/", 50)+".i",
		"data/"+strings.Repeat("x", 150)+".",
		"data/"+strings.Repeat("x", 150)+"/.hidden",
		"data/"+strings.Repeat("x", 150)+"/...",
		"data/"+strings.Repeat("AUX.", 40)+"/f.i",
		"data/"+strings.Repeat("com1 ", 30)+"/f.i",
		"data/"+strings.Repeat("ab.cd", 30),
		"dat", "data/", "",
		"a.hg.hg/", "x.d.hg/", "..i/", ".hg/.hg/", "a.i/.d/.hg/x",
	)
	r := rand.New(rand.NewPCG(42, 6))
	for range 3000 {
		in = append(in, randomStorePath(r))
	}
	return in
}

// TestEncodeMatchesMercurial compares every encoding with Mercurial's
// Python and C implementations on tricky and random paths.
func TestEncodeMatchesMercurial(t *testing.T) {
	t.Parallel()
	inputs := oracleInputs()
	want := pythonOracle(t, inputs)
	fails := 0
	check := func(what, in, got, want string) {
		if want == "!" && what != "DecodeFilename" {
			return // Python raised (empty path component); Go need not match
		}
		if got != want && fails < 30 {
			fails++
			t.Errorf("%s(%q) = %q, Mercurial %q", what, in, got, want)
		}
	}
	for i, in := range inputs {
		w := want[i]
		check("EncodeDir", in, EncodeDir(in), w[0])
		check("DecodeDir", in, DecodeDir(in), w[1])
		check("EncodeFilename", in, EncodeFilename(in), w[2])
		dec, err := DecodeFilename(in)
		if err != nil {
			dec = "!"
		}
		check("DecodeFilename", in, dec, w[3])
		check("HybridEncode(false)", in, HybridEncode(in, false), w[4])
		// Mercurial never makes a path with an empty component (and
		// ValidateName refuses one); there C and Python differ.
		if !strings.Contains(in, "//") {
			check("HybridEncode(true) vs C pathencode", in, HybridEncode(in, true), w[5])
		}
		check("HybridEncode(true)", in, HybridEncode(in, true), w[6])
	}
}

// TestMaxNameLenMatchesMercurial: hg's C fncache encoder takes names of
// MaxNameLen bytes and refuses one byte more, whatever the bytes.
func TestMaxNameLenMatchesMercurial(t *testing.T) {
	t.Parallel()
	const script = `
from mercurial.cext import parsers
n = int(sys.argv[1])
for fill in (b'x', b'X', b'\xe9', b'/a'):
    for size in (n, n + 1):
        p = b'data/' + (fill * size)[:size - 7] + b'.i'
        try:
            parsers.pathencode(p)
            print(size, 'ok')
        except ValueError:
            print(size, 'refused')
`
	out, err := testenv.HgPython(t, script, strconv.Itoa(MaxNameLen)).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	want := strings.Repeat(fmt.Sprintf("%d ok\n%d refused\n", MaxNameLen, MaxNameLen+1), 4)
	if string(out) != want {
		t.Errorf("Mercurial's pathencode around MaxNameLen:\n%s\nwant\n%s", out, want)
	}
}

// TestLayoutsMatchDisk checks Encode against the files real hg created
// for trickyFiles in each layout, and the fncache contents.
func TestLayoutsMatchDisk(t *testing.T) {
	t.Parallel()
	tracked := map[string]bool{}
	for _, f := range trickyFiles() {
		tracked[f] = true
	}
	for _, l := range []Layout{LayoutBasic, LayoutEncoded, LayoutFncache, LayoutDotencode} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			root := layoutRepo(t, l)
			st, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if st.Layout != l {
				t.Fatalf("layout %v, want %v (requirements %v)", st.Layout, l, st.Requirements)
			}
			// hg's own list of tracked files.
			files := strings.Split(strings.TrimSuffix(string(testenv.Hg(t, root, "files", "-0", "-r", "tip")), "\x00"), "\x00")
			if len(files) != len(tracked) {
				t.Errorf("hg tracks %d files, test wrote %d", len(files), len(tracked))
			}
			for _, f := range files {
				if _, err := os.Stat(filepath.Join(st.Dir, filepath.FromSlash(st.FilelogIndex(f)))); err != nil {
					t.Errorf("FilelogIndex(%q) = %q: %v", f, st.FilelogIndex(f), err)
				}
			}
			onDisk := diskFiles(t, st.Dir, "data", "meta", "dh")
			expected := map[string]bool{}
			hashed := 0
			if l.HasFncache() {
				entries, err := st.Fncache()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					p := st.Encode(e)
					expected[p] = true
					if strings.HasPrefix(p, "dh/") {
						hashed++
					}
					f := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(e, "data/"), ".i"), ".d")
					if !tracked[f] {
						t.Errorf("fncache entry %q is not a tracked file", e)
					}
				}
				if len(entries) <= len(files) {
					t.Errorf("fncache has %d entries for %d files: no .d files?", len(entries), len(files))
				}
			} else {
				if e, err := st.Fncache(); e != nil || err != nil {
					t.Errorf("Fncache without fncache layout = %q, %v", e, err)
				}
				for p := range onDisk {
					var name string
					if l == LayoutBasic {
						name = DecodeDir(p)
					} else if name, err = DecodeFilename(p); err != nil {
						t.Errorf("on-disk %q: %v", p, err)
						continue
					}
					f := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "data/"), ".i"), ".d")
					if !tracked[f] {
						t.Errorf("on-disk %q decodes to %q, not a tracked file", p, name)
					}
					expected[st.Encode(name)] = true
				}
			}
			if l.HasFncache() && hashed < 5 {
				t.Errorf("only %d hashed (dh/) names: the fixture does not exercise hashing", hashed)
			}
			var missing, extra []string
			for p := range expected {
				if !onDisk[p] {
					missing = append(missing, p)
				}
			}
			for p := range onDisk {
				if !expected[p] {
					extra = append(extra, p)
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			if len(missing) > 0 || len(extra) > 0 {
				t.Errorf("encoded names not on disk: %q\non disk but not produced by Encode: %q", missing, extra)
			}
		})
	}
}

func TestEncodeDirRoundTripExamples(t *testing.T) {
	for _, s := range []string{"a.hg.hg/", "x.d.hg/", "..i/", ".hg/.hg/", "a.i/.d/.hg/x", "x.i.hg/y", "x.d/.hg/"} {
		if got := DecodeDir(EncodeDir(s)); got != s {
			t.Errorf("DecodeDir(EncodeDir(%q)) = %q", s, got)
		}
	}
}

func FuzzEncodeDir(f *testing.F) {
	for _, s := range []string{"data/foo.i/bla.i", "data/foo.i.hg/bla.i", "a.hg.hg/", "x.d.hg/", ".hg/.hg/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EncodeDir(s)
		if d := DecodeDir(e); d != s {
			t.Fatalf("DecodeDir(EncodeDir(%q)) = %q (encoded %q)", s, d, e)
		}
	})
}

func FuzzEncodeFilename(f *testing.F) {
	for _, s := range []string{"foo.i/bar.d/bla.hg/hi:world?/HELLO", "the\x07quick\xadshot", "__~_", "~7e", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EncodeFilename(s)
		d, err := DecodeFilename(e)
		if err != nil || d != s {
			t.Fatalf("DecodeFilename(EncodeFilename(%q)) = %q, %v (encoded %q)", s, d, err, e)
		}
		// Decoding arbitrary input must not panic. The byte layer is a
		// bijection on its image (DecodeDir is not: it accepts ".i/").
		_, _ = DecodeFilename(s)
		if d, err := decodeFname(s); err == nil && encodeFname(d) != s {
			t.Fatalf("encodeFname(decodeFname(%q)) = %q", s, encodeFname(d))
		}
	})
}

func FuzzHybridEncode(f *testing.F) {
	for _, s := range oracleInputs()[:200] {
		f.Add(s, true)
	}
	f.Add("data/"+strings.Repeat("A.", 100), false)
	f.Fuzz(func(t *testing.T, s string, dotencode bool) {
		e := HybridEncode(s, dotencode)
		if full := hybridEncode(s, dotencode); e != full {
			t.Fatalf("HybridEncode(%q, %v) = %q, the full encoding %q (plainStorePath %v)", s, dotencode, e, full, plainStorePath(s))
		}
		if err := checkEncodedBytes(e); err != nil {
			t.Fatalf("HybridEncode(%q, %v) = %q: %v", s, dotencode, e, err)
		}
		parts := strings.Split(encodeFname(EncodeDir(s)), "/")
		auxEncode(parts, dotencode)
		if plain := strings.Join(parts, "/"); e == plain {
			if len(e) > maxStorePathLen {
				t.Fatalf("HybridEncode(%q) = %q: %d bytes, not hashed", s, e, len(e))
			}
			return
		}
		if !strings.HasPrefix(e, hashedPrefix) {
			t.Fatalf("HybridEncode(%q) = %q: neither plain nor hashed", s, e)
		}
		// Hashed: the prefix, short dirs, a filler, 40 hex digits and the
		// extension; only the extension can push it past 120 bytes. (With
		// empty directory components, which Mercurial never produces and
		// where its Python code raises, the short dirs are unbounded. The
		// hashed form drops a 5-byte prefix, so a "/" right after it
		// makes one too.)
		if strings.Contains(s[min(len(s), 4):], "//") || strings.HasPrefix(s[min(len(s), 5):], "/") {
			return
		}
		ext := pySplitextExt(e[strings.LastIndexByte(e, '/')+1:])
		if limit := max(maxStorePathLen, len(hashedPrefix)+maxShortDirsLen+1+40+len(ext)); len(e) > limit {
			t.Fatalf("HybridEncode(%q) = %q: %d bytes > %d", s, e, len(e), limit)
		}
	})
}

// checkEncodedBytes: no byte a filesystem could misread survives the
// fncache encodings ('~' is the escape byte itself).
func checkEncodedBytes(e string) error {
	for i := 0; i < len(e); i++ {
		c := e[i]
		if c < 32 || c > 126 || strings.IndexByte(winReserved, c) >= 0 || ('A' <= c && c <= 'Z') {
			return fmt.Errorf("byte %#02x at %d", c, i)
		}
	}
	return nil
}

func BenchmarkHybridEncode(b *testing.B) {
	paths := []string{
		"data/src/main/java/org/example/Plain.java.i",
		"data/" + strings.Repeat("Some_Long/Directory_", 8) + "File.txt.i",
	}
	for _, p := range paths {
		b.Run(fmt.Sprint(len(p)), func(b *testing.B) {
			for b.Loop() {
				HybridEncode(p, true)
			}
		})
	}
}

func BenchmarkPlainStorePath(b *testing.B) {
	p := "data/f/039/file3998.txt.i"
	for b.Loop() {
		if !plainStorePath(p) {
			b.Fatal("not plain")
		}
	}
}
