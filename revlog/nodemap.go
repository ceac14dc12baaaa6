package revlog

// The persistent nodemap (requirement persistent-nodemap): a revlog's
// node -> revision map kept on disk for the changelog and the manifest
// once they are no longer inline. Two files beside the index, named after
// its radix ("00changelog"):
//
//	<radix>.n           the docket, rewritten whole:
//	                    uint8 version (1)
//	                    uint8 uid length, uint64 tip rev, uint64 data
//	                    length, uint64 unused bytes, uint64 tip node
//	                    length (all big endian)
//	                    uid (ASCII hex), tip node
//	<radix>-<uid>.nd    the data: a trie of blocks of 16 int32 (big
//	                    endian), one per hex digit of the node at the
//	                    block's depth: -1 empty, >= 0 the index of a
//	                    child block, <= -2 the revision -(v+2) whose node
//	                    is the only one with that prefix. Children come
//	                    before their parent, the root block last.
//
// Keep in sync with mercurial/revlogutils/nodemap.py (NodeMapDocket,
// persistent_data, _build_trie, _persist_trie, parse_data). Without
// Rust, hg writes the whole trie anew in each transaction, with a new
// uid, as NodemapData does.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrNodemap means a nodemap docket or data file is malformed.
var ErrNodemap = errors.New("malformed persistent nodemap")

const (
	nodemapVersion   = 1
	nodemapHeaderLen = 1 + 1 + 4*8
	nodemapBlockLen  = 16 * 4
	nodemapNoEntry   = -1
	nodemapRevOffset = 2
)

// NodemapDocket is the content of a <radix>.n file.
type NodemapDocket struct {
	UID        string // names the data file: <radix>-<UID>.nd
	TipRev     int    // the last revision the data maps
	TipNode    Node
	DataLength int64 // bytes of the data file in use
	DataUnused int64 // bytes of it no longer referenced
}

// Encode serializes the docket as NodeMapDocket.serialize.
func (d *NodemapDocket) Encode() []byte {
	b := make([]byte, 0, nodemapHeaderLen+len(d.UID)+NodeLen)
	b = append(b, nodemapVersion, byte(len(d.UID)))
	b = binary.BigEndian.AppendUint64(b, uint64(d.TipRev))
	b = binary.BigEndian.AppendUint64(b, uint64(d.DataLength))
	b = binary.BigEndian.AppendUint64(b, uint64(d.DataUnused))
	b = binary.BigEndian.AppendUint64(b, NodeLen)
	b = append(b, d.UID...)
	return append(b, d.TipNode[:]...)
}

// ParseNodemapDocket reads a docket. hg ignores a docket of another
// version (the nodemap is then rebuilt); that is ErrNodemap here too, as
// is anything truncated or out of range.
func ParseNodemapDocket(b []byte) (*NodemapDocket, error) {
	if len(b) < nodemapHeaderLen {
		return nil, fmt.Errorf("%w: docket of %d bytes", ErrNodemap, len(b))
	}
	if b[0] != nodemapVersion {
		return nil, fmt.Errorf("%w: docket version %d", ErrNodemap, b[0])
	}
	uidLen := int(b[1])
	tip := binary.BigEndian.Uint64(b[2:])
	dlen := binary.BigEndian.Uint64(b[10:])
	unused := binary.BigEndian.Uint64(b[18:])
	nodeLen := binary.BigEndian.Uint64(b[26:])
	rest := b[nodemapHeaderLen:]
	if nodeLen != NodeLen || uint64(len(rest)) < uint64(uidLen)+nodeLen {
		return nil, fmt.Errorf("%w: docket with a %d-byte uid and a %d-byte node in %d bytes", ErrNodemap, uidLen, nodeLen, len(rest))
	}
	const maxInt = int64(^uint64(0) >> 1)
	if tip > uint64(maxInt) || dlen > uint64(maxInt) || unused > uint64(maxInt) {
		return nil, fmt.Errorf("%w: docket values out of range", ErrNodemap)
	}
	d := &NodemapDocket{UID: string(rest[:uidLen]), TipRev: int(tip), DataLength: int64(dlen), DataUnused: int64(unused)}
	if !validNodemapUID(d.UID) {
		return nil, fmt.Errorf("%w: docket uid %q", ErrNodemap, d.UID)
	}
	copy(d.TipNode[:], rest[uidLen:])
	return d, nil
}

// validNodemapUID accepts what names a data file hg would find
// (nodemap.py's "<radix>-[0-9a-f]+.nd").
func validNodemapUID(uid string) bool {
	if uid == "" {
		return false
	}
	for i := 0; i < len(uid); i++ {
		if c := uid[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NodemapDataName is the data file of radix ("00changelog") for uid.
func NodemapDataName(radix, uid string) string { return radix + "-" + uid + ".nd" }

// nodeNibble is the hex digit of node at depth level.
func nodeNibble(n *Node, level int) int {
	b := n[level/2]
	if level%2 == 0 {
		return int(b >> 4)
	}
	return int(b & 0xf)
}

// trieBlock is one block of the trie being built: per hex digit a child
// block, or a revision (-1: none).
type trieBlock struct {
	child [16]*trieBlock
	rev   [16]int
	id    int32
}

func newTrieBlock() *trieBlock {
	b := &trieBlock{}
	for i := range b.rev {
		b.rev[i] = -1
	}
	return b
}

// NodemapData returns the data file hg writes for the nodes of revisions
// 0..n-1 (node(rev) gives each): persistent_data. Two revisions with the
// same node are an error (hg would recurse without end).
func NodemapData(n int, node func(rev int) Node) ([]byte, error) {
	root := newTrieBlock()
	blocks := 1
	for rev := 0; rev < n; rev++ {
		cur := node(rev)
		b := root
		for level := 0; ; level++ {
			if level == 2*NodeLen {
				return nil, fmt.Errorf("%w: node %s twice", ErrNodemap, cur)
			}
			d := nodeNibble(&cur, level)
			if b.child[d] != nil {
				b = b.child[d]
				continue
			}
			other := b.rev[d]
			if other < 0 {
				b.rev[d] = rev
				break
			}
			// A prefix shared with an earlier revision: both move one
			// level down.
			on := node(other)
			nb := newTrieBlock()
			blocks++
			b.rev[d] = -1
			b.child[d] = nb
			if level+1 < 2*NodeLen {
				nb.rev[nodeNibble(&on, level+1)] = other
			} else {
				return nil, fmt.Errorf("%w: node %s at revisions %d and %d", ErrNodemap, cur, other, rev)
			}
			b = nb
		}
	}
	out := make([]byte, 0, blocks*nodemapBlockLen)
	var next int32
	var persist func(b *trieBlock)
	persist = func(b *trieBlock) {
		for _, c := range b.child {
			if c != nil {
				persist(c)
			}
		}
		b.id = next
		next++
		for d := 0; d < 16; d++ {
			v := int32(nodemapNoEntry)
			switch {
			case b.child[d] != nil:
				v = b.child[d].id
			case b.rev[d] >= 0:
				v = int32(-(b.rev[d] + nodemapRevOffset))
			}
			out = binary.BigEndian.AppendUint32(out, uint32(v))
		}
	}
	persist(root)
	return out, nil
}

// NodemapLookup finds node in nodemap data as hg's lookup does: from the
// root block (the last), one hex digit per level, to a revision or
// nothing. The revision is the trie's answer for the node's shortest
// unique prefix; callers compare the revision's node. Data that is not a
// whole number of blocks, or whose block references lead nowhere or
// loop, is ErrNodemap.
func NodemapLookup(data []byte, node Node) (rev int, ok bool, err error) {
	if len(data)%nodemapBlockLen != 0 {
		return 0, false, fmt.Errorf("%w: nodemap data size is not a multiple of block size (%d): %d", ErrNodemap, nodemapBlockLen, len(data))
	}
	nblocks := len(data) / nodemapBlockLen
	if nblocks == 0 {
		return 0, false, nil
	}
	block := nblocks - 1
	for level := 0; level < 2*NodeLen; level++ {
		off := block*nodemapBlockLen + 4*nodeNibble(&node, level)
		v := int32(binary.BigEndian.Uint32(data[off:]))
		switch {
		case v == nodemapNoEntry:
			return 0, false, nil
		case v < 0:
			return int(-(int64(v) + nodemapRevOffset)), true, nil
		case int(v) >= nblocks:
			return 0, false, fmt.Errorf("%w: block %d refers to block %d of %d", ErrNodemap, block, v, nblocks)
		}
		block = int(v)
	}
	return 0, false, fmt.Errorf("%w: no revision after %d levels", ErrNodemap, 2*NodeLen)
}
