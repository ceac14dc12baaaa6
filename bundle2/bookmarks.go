package bundle2

// Payload of the "bookmarks" part (bookmarks.binaryencode and
// binarydecode), per bookmark:
//
//	node         [20]byte; all 0xff (wdirid): the bookmark is deleted
//	name length  uint16 (big-endian)
//	name         name length bytes
//
// Keep in sync with mercurial/bookmarks.py.

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
)

// MaxKeysPayload bounds the bookmarks and listkeys payloads a decoder
// holds in memory.
const MaxKeysPayload = 256 << 20

// bookmarkEntrySize is a bookmarks entry before its name: node[20] and
// the name's length (bookmarks._binaryentry, '>20sH').
const bookmarkEntrySize = 22

// DeletedNode is the node of a deleted bookmark in a bookmarks part
// (nodeconstants wdirid: all bits set).
var DeletedNode = [20]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// EncodeBookmarks encodes a bookmarks payload: marks (name -> node)
// sorted by name, then the deleted names in the order given.
func EncodeBookmarks(marks map[string][20]byte, deleted []string) ([]byte, error) {
	names := make([]string, 0, len(marks))
	for n := range marks {
		names = append(names, n)
	}
	sort.Strings(names)
	var b []byte
	add := func(name string, node [20]byte) error {
		if len(name) > 0xffff {
			return fmt.Errorf("bundle2: bookmark name of %d bytes", len(name))
		}
		b = append(b, node[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
		b = append(b, name...)
		return nil
	}
	for _, n := range names {
		if err := add(n, marks[n]); err != nil {
			return nil, err
		}
	}
	for _, n := range deleted {
		if err := add(n, DeletedNode); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// DecodeBookmarks reads a bookmarks payload (at most MaxKeysPayload
// bytes): the bookmarks it sets (name -> node) and, in order, the names
// it deletes. A later entry for a name overrides an earlier one, as
// bookmarks.applychanges does. Errors of r pass through unchanged.
func DecodeBookmarks(r io.Reader) (marks map[string][20]byte, deleted []string, err error) {
	data, err := readKeysPayload(r, "bookmarks", malformedf)
	if err != nil {
		return nil, nil, err
	}
	marks = map[string][20]byte{}
	for len(data) > 0 {
		if len(data) < bookmarkEntrySize {
			return nil, nil, malformedf("bad bookmark stream: %d trailing bytes", len(data))
		}
		node := [20]byte(data[:20])
		n := int(binary.BigEndian.Uint16(data[20:bookmarkEntrySize]))
		data = data[bookmarkEntrySize:]
		if len(data) < n {
			return nil, nil, malformedf("bad bookmark stream: name of %d bytes, %d left", n, len(data))
		}
		name := string(data[:n])
		data = data[n:]
		if node == DeletedNode {
			delete(marks, name)
			deleted = append(deleted, name)
			continue
		}
		marks[name] = node
	}
	return marks, deleted, nil
}

// readKeysPayload reads a bookmarks or listkeys payload whole; one
// larger than MaxKeysPayload is an error made by errorf.
func readKeysPayload(r io.Reader, what string, errorf func(string, ...any) error) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxKeysPayload+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxKeysPayload {
		return nil, errorf("%s payload larger than %d bytes", what, MaxKeysPayload)
	}
	return data, nil
}
