package revlog

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// checkDiff asserts that Diff(a, b) is a valid delta turning a into b,
// applied by both the package's patch code and the naive reference.
func checkDiff(t testing.TB, a, b []byte) []byte {
	t.Helper()
	d := Diff(a, b)
	if _, _, err := decodeDelta(nil, d, len(a)); err != nil {
		t.Fatalf("Diff produced an invalid delta: %v", err)
	}
	got, err := Patch(a, d)
	if err != nil {
		t.Fatalf("Patch(a, Diff(a, b)): %v", err)
	}
	if !bytes.Equal(got, b) {
		t.Fatalf("Patch(a, Diff(a, b)) != b\na=%q\nb=%q\ngot=%q", a, b, got)
	}
	if naive, err := naivePatch(a, d); err != nil || !bytes.Equal(naive, b) {
		t.Fatalf("naive patch disagrees: %v", err)
	}
	if bytes.Equal(a, b) && len(d) != 0 {
		t.Fatalf("delta between equal texts is %d bytes", len(d))
	}
	return d
}

// randomLines makes a text from a small vocabulary, so that lines repeat
// (the hard case for a unique-line matcher).
func randomLines(rng *rand.Rand, n int) [][]byte {
	lines := make([][]byte, n)
	for i := range lines {
		switch rng.Intn(6) {
		case 0:
			lines[i] = []byte("\n")
		case 1:
			lines[i] = []byte(fmt.Sprintf("common %d\n", rng.Intn(3)))
		default:
			lines[i] = []byte(fmt.Sprintf("line %d\n", rng.Intn(1000)))
		}
	}
	return lines
}

func mutateLines(rng *rand.Rand, lines [][]byte) [][]byte {
	out := make([][]byte, 0, len(lines)+8)
	for _, l := range lines {
		switch rng.Intn(10) {
		case 0: // delete
		case 1:
			out = append(out, []byte(fmt.Sprintf("inserted %d\n", rng.Intn(100))), l)
		case 2:
			out = append(out, []byte(fmt.Sprintf("replaced %d\n", rng.Intn(100))))
		default:
			out = append(out, l)
		}
	}
	return out
}

// TestDiffRoundTrip: for seeded random pairs of texts (repeated lines,
// edits anywhere, missing final newline, binary bytes), applying
// Diff(a, b) to a gives b.
func TestDiffRoundTrip(t *testing.T) {
	for seed := int64(0); seed < 2000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		la := randomLines(rng, rng.Intn(40))
		lb := mutateLines(rng, la)
		if rng.Intn(4) == 0 {
			lb = randomLines(rng, rng.Intn(40))
		}
		a, b := bytes.Join(la, nil), bytes.Join(lb, nil)
		if rng.Intn(3) == 0 && len(a) > 0 {
			a = a[:rng.Intn(len(a))] // cut mid-line
		}
		if rng.Intn(3) == 0 && len(b) > 0 {
			b = b[:rng.Intn(len(b))]
		}
		if rng.Intn(5) == 0 {
			a = append(a, 0, 1, 2, '\n', 0)
		}
		checkDiff(t, a, b)
	}
	for _, c := range [][2]string{
		{"", ""}, {"", "x"}, {"x", ""}, {"a\nb\n", "a\nb\n"}, {"a\nb", "a\nb\n"},
		{"a\nb\nc\n", "a\nc\n"}, {"x\nx\nx\n", "x\nx\n"}, {"abc", "abd"}, {"\n\n\n", "\n"},
	} {
		checkDiff(t, []byte(c[0]), []byte(c[1]))
	}
}

// TestDiffSmall: local edits give deltas about the size of the edit,
// which is what makes revlogs (and hg's delta choice) work.
func TestDiffSmall(t *testing.T) {
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("src/dir%d/file%d.c\x00%040x\n", i/100, i, i*7919))
	}
	a := []byte(strings.Join(lines, ""))
	// A manifest-like change: a few scattered files modified, one added.
	lines[10] = "src/dir0/file10.c\x00" + strings.Repeat("f", 40) + "\n"
	lines[2500] = "src/dir25/file2500.c\x00" + strings.Repeat("e", 40) + "\n"
	lines[4999] = "src/dir49/file4999.c\x00" + strings.Repeat("d", 40) + "\n"
	lines = append(lines[:3000], append([]string{"src/new.c\x00" + strings.Repeat("0", 40) + "\n"}, lines[3000:]...)...)
	b := []byte(strings.Join(lines, ""))
	d := checkDiff(t, a, b)
	if len(d) > 4*(12+70) {
		t.Errorf("delta for 4 changed lines is %d bytes", len(d))
	}
	// Binary: an appended tail costs the tail.
	bin := make([]byte, 100<<10)
	rand.New(rand.NewSource(1)).Read(bin)
	d = checkDiff(t, bin, append(bytes.Clone(bin), "tail"...))
	if len(d) > 12+4+1024 {
		t.Errorf("delta for an appended tail is %d bytes", len(d))
	}
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	f.Add([]byte("x\nx\nx\n"), []byte("x\ny\nx\n"))
	f.Add([]byte(""), []byte("new\n"))
	f.Add([]byte("\x00\x01\x02"), []byte("\x00\x02"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkDiff(t, a, b)
	})
}

// TestDiffPathological: a reversed file gives one anchor per level of
// recursion; the work budget keeps it fast and the delta valid.
func TestDiffPathological(t *testing.T) {
	var a, b []string
	for i := range 20000 {
		a = append(a, fmt.Sprintf("line %d\n", i))
	}
	for i := len(a) - 1; i >= 0; i-- {
		b = append(b, a[i])
	}
	checkDiff(t, []byte(strings.Join(a, "")), []byte(strings.Join(b, "")))
}
