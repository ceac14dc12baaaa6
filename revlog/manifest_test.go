package revlog

import (
	"errors"
	"strings"
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

// TestFindManifestEntry finds every path of a manifest, and paths
// between, before and after them, as ParseManifest's entries do.
func TestFindManifestEntry(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	var text []byte
	var paths []string
	for _, p := range []string{".hgtags", "a", "a.b", "a/b", "a/b/c", "ab", "b/" + strings.Repeat("x", 300), "z"} {
		paths = append(paths, p)
		text = append(text, p+"\x00"+h+"x\n"...)
	}
	checkFind(t, text)
	for _, p := range paths {
		if e, ok, err := FindManifestEntry(text, p); err != nil || !ok || e.Path != p || e.Flags != "x" || e.Node.String() != h {
			t.Errorf("%q: %+v %v %v", p, e, ok, err)
		}
	}
	for name, bad := range map[string]string{
		"no NUL":     "a\x00" + h + "\n" + "b " + h + "\n" + "c\x00" + h + "\n",
		"short node": ".hgtags\x00" + h[:39] + "\n",
		"no newline": ".hgtags\x00" + h,
	} {
		if _, _, err := FindManifestEntry([]byte(bad), ".hgtags"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// checkFind checks FindManifestEntry against ParseManifest on text,
// which ParseManifest must take: each entry's path, and the paths that
// sort just before, just after and between them.
func checkFind(t *testing.T, text []byte) {
	t.Helper()
	m, err := ParseManifest(text)
	if err != nil {
		t.Fatal(err)
	}
	probes := []string{"", "\x00", "\xff"}
	for _, e := range m {
		probes = append(probes, e.Path, e.Path+"\x00", e.Path+"0")
		if e.Path != "" {
			probes = append(probes, e.Path[:len(e.Path)-1])
		}
	}
	for _, p := range probes {
		want := -1
		for i := range m {
			if m[i].Path == p {
				want = i
			}
		}
		e, ok, err := FindManifestEntry(text, p)
		switch {
		case err != nil:
			t.Fatalf("%q: %v", p, err)
		case ok != (want >= 0 && p != ""):
			t.Fatalf("%q: found %v, want %v", p, ok, want >= 0)
		case ok && e != m[want]:
			t.Fatalf("%q: %+v, want %+v", p, e, m[want])
		}
	}
}

func FuzzManifest(f *testing.F) {
	f.Add([]byte("a\x000123456789abcdef0123456789abcdef01234567\nb\x000123456789abcdef0123456789abcdef01234567x\n"))
	f.Add([]byte("\x00\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		// Whatever the text, finding a path is an answer or an error.
		for _, p := range []string{".hgtags", "a", "b"} {
			_, _, _ = FindManifestEntry(text, p)
		}
		m, err := ParseManifest(text)
		if err != nil {
			return
		}
		for i := 1; i < len(m); i++ {
			if m[i].Path < m[i-1].Path {
				t.Fatalf("unsorted result accepted: %q after %q", m[i].Path, m[i-1].Path)
			}
		}
		checkFind(t, text)
	})
}
