package hgfmt

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// hgPython is the Python interpreter hg runs under (its #! line), which
// imports Mercurial's own modules.
func hgPython(t *testing.T) string {
	t.Helper()
	f, err := os.Open(testenv.HgPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	py, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	if !ok {
		testenv.Missing(t, "hg is not a Python script")
	}
	return strings.Fields(py)[0]
}

// TestBlocksLikeHg compares Blocks with the C bdiff.blocks hg uses, on
// random texts built from few distinct lines (many repeated and popular
// lines, ties between matches), with and without a final newline, with
// bytes above 0x7f, and on edge cases.
func TestBlocksLikeHg(t *testing.T) {
	py := hgPython(t)
	rng := rand.New(rand.NewSource(1))
	vocab := []string{"a\n", "b\n", "c\n", "\n", "}\n", "\treturn x\n", "caf\xc3\xa9\n", "\xff\xfe\n", "x", "a"}
	gen := func() []byte {
		var b bytes.Buffer
		n := rng.Intn(60)
		for i := 0; i < n; i++ {
			b.WriteString(vocab[rng.Intn(len(vocab)-2)])
		}
		if rng.Intn(4) == 0 {
			b.WriteString(vocab[len(vocab)-2+rng.Intn(2)])
		}
		return b.Bytes()
	}
	pairs := [][2][]byte{{nil, nil}, {[]byte("a\n"), nil}, {nil, []byte("a")}, {[]byte("a\nb"), []byte("a\nb\n")}}
	// A popular line (over bdiff's threshold of 1000000/(n+1) in b).
	big := bytes.Repeat([]byte("same\n"), 1200)
	pairs = append(pairs, [2][]byte{append([]byte("x\n"), big...), append(big[:len(big)-5], "y\n"...)})
	for i := 0; i < 400; i++ {
		a := gen()
		b := a
		if rng.Intn(3) > 0 {
			b = gen()
		} else {
			// An edit of a: lines dropped, inserted, changed.
			lines := splitNewlines(a)
			var out []byte
			for _, l := range lines {
				switch rng.Intn(8) {
				case 0:
				case 1:
					out = append(out, vocab[rng.Intn(6)]...)
					out = append(out, l...)
				default:
					out = append(out, l...)
				}
			}
			b = out
		}
		pairs = append(pairs, [2][]byte{a, b})
	}
	var in bytes.Buffer
	for _, p := range pairs {
		in.WriteString(base64.StdEncoding.EncodeToString(p[0]) + " " + base64.StdEncoding.EncodeToString(p[1]) + "\n")
	}
	script := `
import base64, json, sys
from mercurial import policy
bdiff = policy.importmod('bdiff')
out = []
for line in sys.stdin.buffer:
    a, b = line.split(b' ')
    out.append([list(x) for x in bdiff.blocks(base64.b64decode(a), base64.b64decode(b))])
json.dump(out, sys.stdout)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = testenv.HgEnv()
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, stderr.String())
	}
	var want [][][4]int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(pairs) {
		t.Fatalf("%d answers for %d pairs", len(want), len(pairs))
	}
	bad := 0
	for i, p := range pairs {
		got := Blocks(p[0], p[1])
		if len(got) == 0 {
			got = nil
		}
		if len(want[i]) == 0 {
			want[i] = nil
		}
		if !equalBlocks(got, want[i]) {
			bad++
			if bad <= 5 {
				t.Errorf("Blocks(%q, %q)\n got %v\nwant %v", p[0], p[1], got, want[i])
			}
		}
	}
}

func equalBlocks(a, b [][4]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnifiedHunksNoNewline covers mdiff's missing-newline markers.
func TestUnifiedHunksNoNewline(t *testing.T) {
	got := strings.Join(unifiedHunks([]byte("a\nb"), []byte("a\nc"), 3)[0], "")
	want := "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
