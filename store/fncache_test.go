package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseFncache(t *testing.T) {
	got, err := ParseFncache([]byte("data/b.i\ndata/a.i.hg/x.i\ndata/b.i\ndata/a.d\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"data/a.d", "data/a.i/x.i", "data/b.i"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got, err := ParseFncache(nil); err != nil || got != nil {
		t.Errorf("empty: %q %v", got, err)
	}
	for _, bad := range []string{"data/a.i", "data/a.i\n\ndata/b.i\n", "\n"} {
		if _, err := ParseFncache([]byte(bad)); !errors.Is(err, ErrCorruptFncache) {
			t.Errorf("ParseFncache(%q) = %v, want ErrCorruptFncache", bad, err)
		}
	}
	if _, err := ParseFncache([]byte("data/a.i")); err == nil || !strings.Contains(err.Error(), "fncache does not ends with a newline") {
		t.Errorf("message: %v", err)
	}
}

func TestFormatFncache(t *testing.T) {
	in := []string{"data/z.i", "data/a.i/b.i", "data/z.i"}
	got := string(FormatFncache(in))
	if want := "data/a.i.hg/b.i\ndata/z.i\n"; got != want {
		t.Errorf("FormatFncache = %q, want %q", got, want)
	}
	if FormatFncache(nil) != nil {
		t.Error("FormatFncache(nil) not empty")
	}
}

// TestFncacheMatchesHg: hg's fncache of the fixture repository parses to
// exactly the data/ revlogs on disk, and formatting it back gives the same
// bytes up to line order.
func TestFncacheMatchesHg(t *testing.T) {
	t.Parallel()
	root := layoutRepo(t, LayoutDotencode)
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(st.Dir, "fncache"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Fncache()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	slices.Sort(lines)
	ours := strings.Split(strings.TrimSuffix(string(FormatFncache(entries)), "\n"), "\n")
	if !slices.Equal(ours, lines) {
		t.Errorf("FormatFncache differs from hg's fncache:\nours %q\nhg's %q", ours, lines)
	}
	if !strings.Contains(string(raw), ".i.hg/") {
		t.Error("fixture fncache has no EncodeDir'd entry")
	}
}

func FuzzFncache(f *testing.F) {
	f.Add([]byte("data/b.i\ndata/a.i.hg/x.i\n"))
	f.Add([]byte("data/a.i\r\n\n"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseFncache(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptFncache) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := ParseFncache(FormatFncache(entries))
		if err != nil || !slices.Equal(again, entries) {
			t.Fatalf("round trip %q -> %q, %v", entries, again, err)
		}
	})
}
