package exchange

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestB85Decode decodes what Mercurial's util.b85encode writes, for every
// length of a final partial group.
func TestB85Decode(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var inputs [][]byte
	for n := 0; n < 40; n++ {
		b := make([]byte, n)
		rng.Read(b)
		inputs = append(inputs, b)
	}
	inputs = append(inputs, bytes.Repeat([]byte{0xff}, 9), make([]byte, 7))
	var in strings.Builder
	for _, b := range inputs {
		in.WriteString(hex.EncodeToString(b) + "\n")
	}
	cmd := testenv.HgPython(t, `
import sys
from mercurial import util
for l in sys.stdin.read().split("\n")[:-1]:
    sys.stdout.write(util.b85encode(bytes.fromhex(l)).decode() + "\n")
`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(out), "\n")
	for i, b := range inputs {
		got, err := b85decode(lines[i])
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%q: %x %v, want %x", lines[i], got, err, b)
		}
	}
	for _, bad := range []string{"\"", "~~~~~" /* more than 2^32 */} {
		if _, err := b85decode(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
