package streamclone

// Encoders for the parts a server adds after stream2 in a getbundle reply
// (exchange._getbundlebookmarkpart, _getbundlelistkeysparts). hg adds them
// as mandatory parts: "BOOKMARKS" when the client asked bookmarks=1, one
// "LISTKEYS" (param namespace) per listkeys argument.

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// BookmarksPayload encodes bookmarks (name -> binary node) for a
// "bookmarks" part, sorted by name (bookmarks.binaryencode:
// node[20] + uint16 name length + name).
func BookmarksPayload(marks map[string][20]byte) ([]byte, error) {
	names := make([]string, 0, len(marks))
	for n := range marks {
		if len(n) > 0xffff {
			return nil, fmt.Errorf("streamclone: bookmark name of %d bytes", len(n))
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var b []byte
	for _, n := range names {
		node := marks[n]
		b = append(b, node[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(n)))
		b = append(b, n...)
	}
	return b, nil
}

// ListkeysPayload encodes a pushkey namespace for a "listkeys" part,
// sorted by key (pushkey.encodekeys: "key\tvalue" lines joined by "\n",
// no final newline).
func ListkeysPayload(keys map[string]string) []byte {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, k := range names {
		lines[i] = k + "\t" + keys[k]
	}
	return []byte(strings.Join(lines, "\n"))
}
