package streamclone

import (
	"bytes"
	"encoding/hex"
	"os"
	"testing"
)

// TestPartsPayloads re-encodes the bookmarks and listkeys parts of the
// getbundle reply captured from hg 6.3 serve and gets hg's bytes back.
func TestPartsPayloads(t *testing.T) {
	data, err := os.ReadFile("testdata/hg63-getbundle-stream2.hg")
	if err != nil {
		t.Fatal(err)
	}
	parts, payloads, err := readAllParts(t, data)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range parts {
		types = append(types, p.Type)
		if !p.Mandatory {
			t.Errorf("part %s advisory", p.Type)
		}
	}
	if len(parts) != 3 || types[0] != "stream2" || types[1] != "bookmarks" || types[2] != "listkeys" {
		t.Fatalf("parts %q", types)
	}
	node, _ := hex.DecodeString("97b4603fccb2bab5266d6890fb8a048124316794")
	var n [20]byte
	copy(n[:], node)
	bm, err := BookmarksPayload(map[string][20]byte{"bm2": n, "bm1": n})
	if err != nil || !bytes.Equal(bm, payloads[1]) {
		t.Errorf("bookmarks payload %q, hg's %q", bm, payloads[1])
	}
	lk := ListkeysPayload(map[string]string{"bm1": hex.EncodeToString(node), "bm2": hex.EncodeToString(node)})
	if !bytes.Equal(lk, payloads[2]) {
		t.Errorf("listkeys payload %q, hg's %q", lk, payloads[2])
	}
}
