package revlog

// A node is a revision's identity: the SHA-1 of its parents' nodes and its
// raw text (see hashrevisionsha1 in mercurial/utils/storageutil.py).

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
)

// NodeLen is the length of a SHA-1 node in bytes.
const NodeLen = 20

// Node identifies a revision: the SHA-1 hash of its parents and raw text.
type Node [NodeLen]byte

// NullNode is the node of the null revision (all zeros).
var NullNode Node

// NullRev is the revision number of the null revision, the parent of roots.
const NullRev = -1

// String returns the node as 40 lowercase hex digits.
func (n Node) String() string { return hex.EncodeToString(n[:]) }

// Short returns the first 12 hex digits, as hg's short() does.
func (n Node) Short() string { return hex.EncodeToString(n[:6]) }

// IsNull reports whether n is the null node.
func (n Node) IsNull() bool { return n == NullNode }

// ParseNode parses 40 hex digits (either case).
func ParseNode(s string) (Node, error) {
	var n Node
	if len(s) != 2*NodeLen {
		return n, fmt.Errorf("invalid node %q: want %d hex digits, have %d", s, 2*NodeLen, len(s))
	}
	if _, err := hex.Decode(n[:], []byte(s)); err != nil {
		return n, fmt.Errorf("invalid node %q: %v", s, err)
	}
	return n, nil
}

// HashRevision computes the node of a revision whose raw text is text and
// whose parents are p1 and p2: SHA-1(min(p1,p2) + max(p1,p2) + text).
// Keep in sync with mercurial/utils/storageutil.py hashrevisionsha1.
func HashRevision(text []byte, p1, p2 Node) Node {
	a, b := p1, p2
	if bytes.Compare(a[:], b[:]) > 0 {
		a, b = b, a
	}
	h := sha1.New()
	h.Write(a[:])
	h.Write(b[:])
	h.Write(text)
	var n Node
	h.Sum(n[:0])
	return n
}
