package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFncacheMemo walks a store whose fncache is large enough to be kept
// between walks, changes the fncache without changing its size, and
// checks the next walk follows the file, not the memo; the same content
// under another layout is parsed for that layout.
func TestFncacheMemo(t *testing.T) {
	root := copyTree(t, layoutRepo(t, LayoutDotencode))
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Fncache()
	if err != nil {
		t.Fatal(err)
	}
	// Entries naming no file are skipped by the walk, so padding the
	// fncache past memoMinFncache adds nothing to it.
	var pad []string
	for i := 0; len(FormatFncache(pad)) < memoMinFncache; i++ {
		pad = append(pad, fmt.Sprintf("data/pad/%06d.i", i))
	}
	extra := "data/zz-memo.i"
	if err := os.WriteFile(filepath.Join(st.Dir, "data", "zz-memo.i"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFncache := func(es []string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(st.Dir, "fncache"), FormatFncache(es), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		t.Helper()
		files, err := st.Walk()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			out = append(out, f.Name)
		}
		return out
	}

	// "data/zz-memo.d" has the length of "data/zz-memo.i" but names no
	// file (and is still a revlog name).
	other := "data/zz-memo.d"
	writeFncache(append(slices.Clone(entries), append(pad, other)...))
	first := names()
	if slices.Contains(first, extra) {
		t.Fatalf("walk lists %s before the fncache names it", extra)
	}
	if again := names(); !slices.Equal(again, first) {
		t.Fatalf("second walk of the same fncache differs:\n%q\n%q", again, first)
	}
	if lookupFncache(mustRead(t, filepath.Join(st.Dir, "fncache")), st.Layout) == nil {
		t.Fatal("a fncache over memoMinFncache was not kept")
	}

	writeFncache(append(slices.Clone(entries), append(pad, extra)...))
	if got := names(); !slices.Contains(got, extra) {
		t.Fatalf("walk after the fncache changed (same size) misses %s", extra)
	}

	// Same bytes, other layout: encoded for that layout, not taken from
	// the dotencode parse.
	data := mustRead(t, filepath.Join(st.Dir, "fncache"))
	if p := lookupFncache(data, LayoutFncache); p != nil {
		t.Fatal("memo answered for a layout it was not parsed for")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
