package bundle2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPartsPayloads re-encodes the bookmarks and listkeys parts of the
// getbundle reply captured from hg 6.3 serve and gets hg's bytes back.
func TestPartsPayloads(t *testing.T) {
	data, err := os.ReadFile("../streamclone/testdata/hg63-getbundle-stream2.hg")
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
	bm, err := EncodeBookmarks(map[string][20]byte{"bm2": n, "bm1": n}, nil)
	if err != nil || !bytes.Equal(bm, payloads[1]) {
		t.Errorf("bookmarks payload %q, hg's %q", bm, payloads[1])
	}
	lk := EncodeKeys(map[string]string{"bm1": hex.EncodeToString(node), "bm2": hex.EncodeToString(node)})
	if !bytes.Equal(lk, payloads[2]) {
		t.Errorf("listkeys payload %q, hg's %q", lk, payloads[2])
	}
	marks, deleted, err := DecodeBookmarks(bytes.NewReader(payloads[1]))
	if err != nil || len(deleted) != 0 || fmt.Sprint(marks) != fmt.Sprint(map[string][20]byte{"bm1": n, "bm2": n}) {
		t.Errorf("decoded bookmarks %v %v %v", marks, deleted, err)
	}
	keys, err := DecodeKeys(bytes.NewReader(payloads[2]))
	if err != nil || len(keys) != 2 || keys["bm1"] != hex.EncodeToString(node) {
		t.Errorf("decoded listkeys %v %v", keys, err)
	}
}

func TestBookmarks(t *testing.T) {
	n1, n2 := [20]byte{1}, [20]byte{2}
	data, err := EncodeBookmarks(map[string][20]byte{"b": n2, "a": n1}, []string{"gone"})
	if err != nil {
		t.Fatal(err)
	}
	// A later entry overrides an earlier one; a deletion removes a mark.
	data = append(data, append(DeletedNode[:], 0, 1, 'b')...)
	marks, deleted, err := DecodeBookmarks(bytes.NewReader(data))
	if err != nil || len(marks) != 1 || marks["a"] != n1 || fmt.Sprint(deleted) != "[gone b]" {
		t.Errorf("got %v %v %v", marks, deleted, err)
	}
	if _, err := EncodeBookmarks(map[string][20]byte{strings.Repeat("x", 1<<16): n1}, nil); err == nil {
		t.Error("64 KiB name encoded")
	}
	for _, tc := range []struct{ data, msg string }{
		{"\x01\x02", "bad bookmark stream: 2 trailing bytes"},
		{strings.Repeat("\x00", 20) + "\x00\x05ab", "bad bookmark stream: name of 5 bytes, 2 left"},
	} {
		_, _, err := DecodeBookmarks(strings.NewReader(tc.data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: got %v, want %q", tc.data, err, tc.msg)
		}
	}
}

func TestDecodeKeys(t *testing.T) {
	m, err := DecodeKeys(strings.NewReader("a\t1\r\nb\t2\rc\t"))
	if err != nil || fmt.Sprint(m) != "map[a:1 b:2 c:]" {
		t.Errorf("%v %v", m, err)
	}
	if m, err := DecodeKeys(strings.NewReader("")); err != nil || m == nil || len(m) != 0 {
		t.Errorf("empty: %v %v", m, err)
	}
	for _, bad := range []string{"novalue", "a\tb\tc", "a\t1\n\nb\t2"} {
		if _, err := DecodeKeys(strings.NewReader(bad)); !errors.Is(err, ErrMalformedKeys) || !strings.Contains(err.Error(), "not key<TAB>value") {
			t.Errorf("%q: got %v", bad, err)
		}
	}
	if got := string(EncodeKeys(map[string]string{"b": "2", "a": ""})); got != "a\t\nb\t2" {
		t.Errorf("encoded %q", got)
	}
	h := strings.Repeat("ab", 20)
	marks, err := DecodeBookmarkKeys(map[string]string{"x": h, "y": strings.ToUpper(h)})
	if err != nil || marks["x"] != marks["y"] || marks["x"][0] != 0xab {
		t.Errorf("bookmark keys %v %v", marks, err)
	}
	for _, bad := range []string{"", h[:39], h + "0", h[:38] + "zz"} {
		if _, err := DecodeBookmarkKeys(map[string]string{"x": bad}); !errors.Is(err, ErrMalformedKeys) {
			t.Errorf("bookmark node %q: got %v", bad, err)
		}
	}
}
