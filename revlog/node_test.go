package revlog

import (
	"strings"
	"testing"
)

func TestNodeStringParse(t *testing.T) {
	const h = "b80de5d138758541c5f05265ad144ab9fa86d1db"
	n, err := ParseNode(strings.ToUpper(h))
	if err != nil {
		t.Fatal(err)
	}
	if n.String() != h || n.Short() != h[:12] {
		t.Errorf("String %s Short %s", n, n.Short())
	}
	if !NullNode.IsNull() || n.IsNull() {
		t.Error("IsNull")
	}
	for _, bad := range []string{"", h[:39], h + "0", "g" + h[1:]} {
		if _, err := ParseNode(bad); err == nil {
			t.Errorf("ParseNode(%q) succeeded", bad)
		}
	}
}

func TestHashRevision(t *testing.T) {
	// The empty file with no parents: hg's well-known b80de5d1... node
	// (seen as empty.txt in the oracle fixture's manifests).
	if got := HashRevision(nil, NullNode, NullNode).String(); got != "b80de5d138758541c5f05265ad144ab9fa86d1db" {
		t.Errorf("empty text node %s", got)
	}
	a, _ := ParseNode("1111111111111111111111111111111111111111")
	b, _ := ParseNode("2222222222222222222222222222222222222222")
	if HashRevision([]byte("x"), a, b) != HashRevision([]byte("x"), b, a) {
		t.Error("parent order must not matter")
	}
	if HashRevision([]byte("x"), a, NullNode) == HashRevision([]byte("y"), a, NullNode) {
		t.Error("text must matter")
	}
}
