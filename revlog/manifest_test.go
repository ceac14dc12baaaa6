package revlog

import (
	"errors"
	"testing"
)

func TestParseManifest(t *testing.T) {
	const h1, h2 = "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789ABCDEF"
	text := "a\x00" + h1 + "\n" + "b/c\x00" + h2 + "x\n" + "link\x00" + h1 + "l\n" + "t\x00" + h2 + "t\n"
	m, err := ParseManifest([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ path, flags, node string }{{"a", "", h1}, {"b/c", "x", "89abcdef0123456789abcdef0123456789abcdef"}, {"link", "l", h1}, {"t", "t", "89abcdef0123456789abcdef0123456789abcdef"}}
	if len(m) != len(want) {
		t.Fatalf("%d entries", len(m))
	}
	for i, w := range want {
		if m[i].Path != w.path || m[i].Flags != w.flags || m[i].Node.String() != w.node {
			t.Errorf("entry %d: %+v", i, m[i])
		}
	}
	if m, err := ParseManifest(nil); err != nil || m != nil {
		t.Errorf("empty: %v %v", m, err)
	}
	for name, bad := range map[string]string{
		"no final newline": "a\x00" + h1,
		"no NUL":           "a " + h1 + "\n",
		"short node":       "a\x00" + h1[:39] + "\n",
		"unknown flag":     "a\x00" + h1 + "z\n",
		"not hex":          "a\x00" + "g" + h1[1:] + "\n",
		"unsorted":         "b\x00" + h1 + "\n" + "a\x00" + h1 + "\n",
		// hg's C parser refuses a path twice; Update would otherwise
		// pair the target's entry with one and remove the file for the
		// other.
		"path twice": "a\x00" + h1 + "\n" + "a\x00" + h2 + "\n",
	} {
		if _, err := ParseManifest([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzManifest(f *testing.F) {
	f.Add([]byte("a\x000123456789abcdef0123456789abcdef01234567\nb\x000123456789abcdef0123456789abcdef01234567x\n"))
	f.Add([]byte("\x00\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		m, err := ParseManifest(text)
		if err != nil {
			return
		}
		for i := 1; i < len(m); i++ {
			if m[i].Path < m[i-1].Path {
				t.Fatalf("unsorted result accepted: %q after %q", m[i].Path, m[i-1].Path)
			}
		}
	})
}
