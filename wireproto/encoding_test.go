package wireproto

import (
	"errors"
	"testing"
)

func TestDecodeHelpers(t *testing.T) {
	n := "8cfdfd66ca5f2f4e0e36d5a6b6f4fb1d0a0e1e5c"
	heads, err := decodeHeads([]byte(n + " " + NullHex + "\n"))
	if err != nil || len(heads) != 2 || heads[0] != n {
		t.Fatalf("heads %v %v", heads, err)
	}
	if heads, err := decodeHeads([]byte("\n")); err != nil || len(heads) != 0 {
		t.Errorf("empty heads: %v %v", heads, err)
	}
	for _, bad := range []string{n, n[:39] + "\n", "ZZ" + n[2:] + "\n", n + "  " + n + "\n"} {
		if _, err := decodeHeads([]byte(bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("heads %q: %v", bad, err)
		}
	}
	if got, err := decodeLookup([]byte("1 " + n + "\n")); err != nil || got != n {
		t.Errorf("lookup: %q %v", got, err)
	}
	if _, err := decodeLookup([]byte("0 unknown revision 'nope'\n")); !errors.Is(err, ErrLookup) || err.Error() != "unknown revision 'nope'" {
		t.Errorf("lookup failure: %v", err)
	}
	if _, err := decodeLookup([]byte("2 x\n")); !errors.Is(err, ErrProtocol) {
		t.Errorf("lookup garbage: %v", err)
	}
	keys, err := decodeKeys([]byte("a\t" + n + "\nb\tx"))
	if err != nil || keys["a"] != n || keys["b"] != "x" || len(keys) != 2 {
		t.Errorf("keys %v %v", keys, err)
	}
	if _, err := decodeKeys([]byte("novalue\n")); !errors.Is(err, ErrProtocol) {
		t.Errorf("keys without tab: %v", err)
	}
}

func TestStreamCloneArgs(t *testing.T) {
	c, _ := ParseCaps([]byte(hgServeCaps))
	b2, _ := c.Bundle2()
	args := StreamCloneArgs(b2)
	want := map[string]string{
		"bundlecaps": "HG20,bundle2=HG20%0Abookmarks%0Aerror%3Dabort%2Cunsupportedcontent%2Cpushraced%2Cpushkey%0Alistkeys%0Aobsmarkers%3DV0%2CV1%0Aphases%3Dheads%0Astream%3Dv2",
		"common":     NullHex,
		"cg":         "0",
		"stream":     "1",
		"bookmarks":  "1",
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("%s = %q, want %q", k, args[k], v)
		}
	}
	if len(args) != len(want) {
		t.Errorf("args %v", args)
	}
	if _, ok := StreamCloneArgs(Bundle2Caps{})["bookmarks"]; ok {
		t.Error("bookmarks requested from a server without binary bookmarks")
	}
	if _, ok := args["heads"]; ok {
		t.Error("heads sent with a stream clone's getbundle")
	}
}
