package revlog

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// nodemapNodes are n node-like hashes, with some sharing long prefixes so
// the trie goes deep.
func nodemapNodes(n int) []Node {
	rng := rand.New(rand.NewSource(1))
	nodes := make([]Node, n)
	seen := map[Node]bool{}
	for i := range nodes {
		nodes[i] = Node(sha1.Sum(fmt.Appendf(nil, "%d", i)))
		if i > 0 && rng.Intn(10) == 0 {
			// Share the first 2..38 hex digits with an earlier node.
			prev := nodes[rng.Intn(i)]
			k := 1 + rng.Intn(19)
			copy(nodes[i][:k], prev[:k])
			if seen[nodes[i]] {
				nodes[i] = Node(sha1.Sum(fmt.Appendf(nil, "%d", i)))
			}
		}
		seen[nodes[i]] = true
	}
	return nodes
}

// TestNodemapDataAsHg compares NodemapData and the docket encoding with
// hg's own nodemap.persistent_data and NodeMapDocket.serialize.
func TestNodemapDataAsHg(t *testing.T) {
	script := `
import sys
from mercurial.revlogutils import nodemap
from mercurial.node import bin
nodes = [bin(l) for l in sys.stdin.read().split()]
index = [(0, 0, 0, 0, 0, 0, 0, n) for n in nodes]
sys.stdout.write(nodemap.persistent_data(index).hex() + "\n")
d = nodemap.NodeMapDocket(b"0123abcd")
d.tip_rev = len(nodes) - 1
d.tip_node = nodes[-1]
d.data_length = 4096
d.data_unused = 64
sys.stdout.write(d.serialize().hex() + "\n")
`
	for _, n := range []int{1, 2, 17, 300, 5000} {
		nodes := nodemapNodes(n)
		var in strings.Builder
		for _, nd := range nodes {
			in.WriteString(nd.String() + "\n")
		}
		cmd := testenv.HgPython(t, script)
		cmd.Stdin = strings.NewReader(in.String())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hg's nodemap of %d nodes: %v\n%s", n, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		data, err := NodemapData(n, func(rev int) Node { return nodes[rev] })
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(data); got != lines[0] {
			t.Errorf("%d nodes: data differs (%d bytes, hg's %d)", n, len(data), len(lines[0])/2)
		}
		d := &NodemapDocket{UID: "0123abcd", TipRev: n - 1, TipNode: nodes[n-1], DataLength: 4096, DataUnused: 64}
		if got := hex.EncodeToString(d.Encode()); got != lines[1] {
			t.Errorf("docket: %s, hg's %s", got, lines[1])
		}
		back, err := ParseNodemapDocket(d.Encode())
		if err != nil || *back != *d {
			t.Errorf("docket round trip: %+v %v", back, err)
		}
		for rev, nd := range nodes {
			if r, ok, err := NodemapLookup(data, nd); err != nil || !ok || r != rev {
				t.Fatalf("lookup of rev %d: %d %v %v", rev, r, ok, err)
			}
		}
	}
}

func TestNodemapErrors(t *testing.T) {
	a := Node(sha1.Sum([]byte("a")))
	if _, err := NodemapData(2, func(int) Node { return a }); !errors.Is(err, ErrNodemap) {
		t.Errorf("duplicate node: %v", err)
	}
	if _, _, err := NodemapLookup(make([]byte, 63), a); !errors.Is(err, ErrNodemap) {
		t.Errorf("partial block: %v", err)
	}
	loop := bytes.Repeat([]byte{0, 0, 0, 0}, 16) // every entry: block 0
	if _, _, err := NodemapLookup(loop, a); !errors.Is(err, ErrNodemap) {
		t.Errorf("looping blocks: %v", err)
	}
	for _, b := range [][]byte{nil, {1}, {2, 8}, (&NodemapDocket{UID: "XY"}).Encode()} {
		if _, err := ParseNodemapDocket(b); !errors.Is(err, ErrNodemap) {
			t.Errorf("docket %x: %v", b, err)
		}
	}
}

// FuzzNodemap checks that any docket and data parse or fail cleanly.
func FuzzNodemap(f *testing.F) {
	nodes := nodemapNodes(40)
	data, _ := NodemapData(len(nodes), func(rev int) Node { return nodes[rev] })
	f.Add((&NodemapDocket{UID: "abcd0123", TipRev: 39, TipNode: nodes[39], DataLength: int64(len(data))}).Encode(), data, nodes[3][:])
	f.Fuzz(func(t *testing.T, docket, data, node []byte) {
		if d, err := ParseNodemapDocket(docket); err == nil {
			if !bytes.Equal(d.Encode(), docket[:nodemapHeaderLen+len(d.UID)+NodeLen]) {
				t.Fatalf("docket round trip: %x", docket)
			}
		}
		var n Node
		copy(n[:], node)
		NodemapLookup(data, n)
	})
}
