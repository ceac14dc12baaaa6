package streamclone

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestNameSet adds names, many of them again, and compares the set with a
// map: what add reports, each name by its index, and every name in the
// order added. There are enough names (some long enough to fill a chunk
// alone, some sharing nothing with the one before, some prefixes of the
// one before) to fill several chunks and grow the table many times.
func TestNameSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newNameSet()
	want := map[string]bool{}
	var order []string
	for i := range 200_000 {
		var name string
		switch {
		case i > 0 && rng.IntN(5) == 0: // a name already added
			name = fmt.Sprintf("data/d%d/f%d.i", rng.IntN(i)%97, rng.IntN(i))
		case rng.IntN(5000) == 0:
			name = "data/" + strings.Repeat("x", maxNameLen-20) + fmt.Sprint(i)
		case rng.IntN(50) == 0 && len(order) > 0: // a prefix of the last name
			last := order[len(order)-1]
			name = last[:1+rng.IntN(len(last))]
		case rng.IntN(50) == 0:
			name = fmt.Sprintf("meta/%d", rng.Uint64())
		default:
			name = fmt.Sprintf("data/d%d/f%d.i", i%97, i)
		}
		if got := s.add(name); got == want[name] {
			t.Fatalf("add(%q) = %v with the name already there %v", name, got, want[name])
		}
		if !want[name] {
			order = append(order, name)
		}
		want[name] = true
	}
	if int(s.n) != len(order) {
		t.Fatalf("%d names, want %d", s.n, len(order))
	}
	for _, i := range rng.Perm(len(order))[:5000] {
		if got := string(s.name(uint32(i))); got != order[i] {
			t.Fatalf("name(%d) = %q, want %q", i, got, order[i])
		}
	}
	var got []string
	if err := s.each(func(b []byte) error { got = append(got, string(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, order) {
		t.Errorf("each: %d names, want %d in the order added", len(got), len(order))
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.each(func([]byte) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("each with fn failing: %v after %d calls, want its error after 1", err, calls)
	}
}

// TestNameSetEmpty: a set nothing was added to has no names, and the
// empty name is a name like another.
func TestNameSetEmpty(t *testing.T) {
	s := newNameSet()
	if err := s.each(func(b []byte) error { return fmt.Errorf("name %q", b) }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "", "a", ""} {
		s.add(name)
	}
	var got []string
	s.each(func(b []byte) error { got = append(got, string(b)); return nil })
	if !slices.Equal(got, []string{"a", ""}) {
		t.Errorf("names %q, want [a \"\"]", got)
	}
}

// TestApplyFncacheEncodeDir: the fncache is written name by name, and
// each name is encodedir'd as the whole file used to be, in the
// stream's order.
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
	if got, want := string(sink.files[".hg/store/fncache"]), "data/z.i.hg/b.d.hg/c.hg.hg/f.i\ndata/a.i\n"; got != want {
		t.Errorf("fncache %q, want %q", got, want)
	}
}
