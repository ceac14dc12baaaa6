package streamclone

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestNameSet adds names, many of them again, and compares the set with a
// map: what add reports, and the sorted names. There are enough names
// (and some long enough) to fill several chunks and grow the table many
// times.
func TestNameSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newNameSet()
	want := map[string]bool{}
	for i := range 200_000 {
		var name string
		switch {
		case i > 0 && rng.IntN(5) == 0: // a name already added
			name = fmt.Sprintf("data/d%d/f%d.i", rng.IntN(i)%97, rng.IntN(i))
		case rng.IntN(5000) == 0:
			name = "data/" + strings.Repeat("x", maxNameLen-20) + fmt.Sprint(i)
		default:
			name = fmt.Sprintf("data/d%d/f%d.i", i%97, i)
		}
		if got := s.add(name); got == want[name] {
			t.Fatalf("add(%q) = %v with the name already there %v", name, got, want[name])
		}
		want[name] = true
	}
	var all []string
	for n := range want {
		all = append(all, n)
	}
	slices.Sort(all)
	var got []string
	for _, i := range s.sorted(func([]byte) bool { return true }) {
		got = append(got, string(s.name(int(i))))
	}
	if !slices.Equal(got, all) {
		t.Errorf("sorted: %d names, want %d", len(got), len(all))
	}
	odd := s.sorted(func(b []byte) bool { return b[len(b)-3]%2 == 1 })
	for k, i := range odd {
		if n := s.name(int(i)); n[len(n)-3]%2 != 1 || k > 0 && string(s.name(int(odd[k-1]))) >= string(n) {
			t.Fatalf("sorted with a filter: %q at %d", n, k)
		}
	}
}

// TestApplyFncacheEncodeDir: the fncache is written name by name, and
// each name is encodedir'd as the whole file used to be.
func TestApplyFncacheEncodeDir(t *testing.T) {
	entries := []v2Entry{
		{'s', "data/z.i/b.d/c.hg/f.i", "1"},
		{'s', "data/a.i", "2"},
		{'s', "00changelog.i", inlineIndex("c")},
	}
	sink, _, err := applyBundleMem(t, stream2Bundle(t, entries, -1, -1, testReqs, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(sink.files[".hg/store/fncache"]), "data/a.i\ndata/z.i.hg/b.d.hg/c.hg.hg/f.i\n"; got != want {
		t.Errorf("fncache %q, want %q", got, want)
	}
}
