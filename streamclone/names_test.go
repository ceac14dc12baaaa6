package streamclone

import (
	"errors"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
)

func TestStoreSinkName(t *testing.T) {
	l := layout{fncache: true, dotencode: true}
	for in, want := range map[string]string{
		"data/Foo_Bar.txt.i":     ".hg/store/data/_foo___bar.txt.i",
		"data/.hidden/AUX.txt.i": ".hg/store/data/~2ehidden/_a_u_x.txt.i",
		"meta/Dir/00manifest.i":  ".hg/store/meta/_dir/00manifest.i",
		"00changelog.i":          ".hg/store/00changelog.i",
		"phaseroots":             ".hg/store/phaseroots",
	} {
		got, err := l.storeSinkName(in)
		if err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", in, got, err, want)
		}
	}
	tooLong := "data/" + strings.Repeat("x", store.MaxNameLen) + ".i" // hg cannot encode it
	for _, bad := range []string{"../x.i", "data/../../x.i", "/x.i", "requires", "fncache", "hgrc", ".hg/hgrc", "data/x", "data/a\x00.i", "store/x.i", tooLong} {
		if _, err := l.storeSinkName(bad); !errors.Is(err, ErrUnsafeName) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
	if got, err := cacheSinkName("branch2-served"); err != nil || got != ".hg/cache/branch2-served" {
		t.Errorf("cache: %q %v", got, err)
	}
	for _, bad := range []string{"../hgrc", "a/b", "", ".."} {
		if _, err := cacheSinkName(bad); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("cache %q: got %v", bad, err)
		}
	}
}

func TestCheckRelative(t *testing.T) {
	for _, ok := range []string{"a", "data/x.i", "a/b/c", "..a/b..", "a/.b/c."} {
		if err := checkRelative(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/a", "c:a", "a/", "a//b", "./a", "a/.", "a/./b", "..", "a/..", "a/../b", "../a", "a\\b", "a\nb", "a\x00"} {
		if err := checkRelative(bad); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}

func TestIsNodemapFile(t *testing.T) {
	for name, want := range map[string]bool{
		"00changelog.n": true, "00manifest.n": true, "00changelog-abcd1234.nd": true,
		"00changelog.i": false, "data/00changelog.n": false, "data/x-1.nd": false,
	} {
		if isNodemapFile(name) != want {
			t.Errorf("%q: want %v", name, want)
		}
	}
}
