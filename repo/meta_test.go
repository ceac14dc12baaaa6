package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

func node(c byte) revlog.Node {
	var n revlog.Node
	n[0] = c
	return n
}

func tagLine(c byte, name string) string { return node(c).String() + " " + name + "\n" }

func TestReadTags(t *testing.T) {
	data := tagLine(1, "a") + "garbage\n" + "zz " + "b\n" + tagLine(2, "a") + tagLine(3, " spaced ") + "\r\n"
	tags := readTags([]byte(data))
	if len(tags) != 2 {
		t.Fatalf("tags: %v", tags)
	}
	if a := tags["a"]; a.node != node(2) || len(a.hist) != 1 || a.hist[0] != node(1) {
		t.Errorf("a: %+v", a)
	}
	if _, ok := tags["spaced"]; !ok {
		t.Errorf("names are stripped: %v", tags)
	}
}

// TestUpdateTags checks tags.py's precedence: the newer file wins unless
// the older one's tag has superseded it.
func TestUpdateTags(t *testing.T) {
	all := map[string]tagEntry{}
	updateTags(readTags([]byte(tagLine(1, "t"))), all)
	updateTags(readTags([]byte(tagLine(2, "t"))), all)
	if all["t"].node != node(2) {
		t.Errorf("tipmost should win: %+v", all["t"])
	}
	// An older head that moved the tag from 3 to 4 supersedes a newer head
	// still at 3.
	all = map[string]tagEntry{}
	updateTags(readTags([]byte(tagLine(3, "u")+tagLine(4, "u"))), all)
	updateTags(readTags([]byte(tagLine(3, "u"))), all)
	if all["u"].node != node(4) {
		t.Errorf("superseding history should win: %+v", all["u"])
	}
}

func FuzzReadTags(f *testing.F) {
	f.Add([]byte(tagLine(1, "a") + tagLine(2, "a")))
	f.Add([]byte("x y\n\n \n" + strings.Repeat("0", 40) + " null\n"))
	f.Add([]byte("0123456789012345678901234567890123456789 v1\n\nbad line\n0123456789012345678901234567890123456789  spaced \r\n"))
	f.Add([]byte("zz v\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		all := map[string]tagEntry{}
		tags := readTags(data)
		updateTags(tags, all)
		updateTags(tags, all)
		if len(all) != len(tags) {
			t.Fatalf("merge changed the tag set: %d vs %d", len(all), len(tags))
		}
	})
}

// TestTagsFnodesCache: tags read through hg's .hgtags file node cache
// equal those read through the manifests, whatever the cache holds: a
// warm cache (written by hg), records for other changesets (a stripped
// and rewritten history), file nodes the filelog lacks, a truncated or
// missing file. With the cache warm, a manifest log that cannot be read
// does not fail them.
func TestTagsFnodesCache(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	cache := filepath.Join(src, ".hg", "cache", "hgtagsfnodes1")
	os.Remove(cache)
	tagsOf := func() map[string]revlog.Node {
		t.Helper()
		r, err := Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		tags, err := r.Tags()
		if err != nil {
			t.Fatal(err)
		}
		return tags
	}
	want := tagsOf()
	if len(want) < 2 {
		t.Fatalf("the fixture has no tags but tip: %v", want)
	}
	testenv.Hg(t, src, "tags")
	warm, err := os.ReadFile(cache)
	if err != nil || len(warm) == 0 {
		t.Fatalf("hg wrote no fnodes cache: %v", err)
	}
	damage := map[string]func([]byte) []byte{
		"warm": func(b []byte) []byte { return b },
		"other-changesets": func(b []byte) []byte {
			for i := 0; i < len(b); i += fnodesRecord {
				b[i] ^= 0xff
			}
			return b
		},
		"unknown-fnodes": func(b []byte) []byte {
			for i := 0; i+fnodesRecord <= len(b); i += fnodesRecord {
				if !bytes.Equal(b[i:i+4], []byte{0xff, 0xff, 0xff, 0xff}) && !bytes.Equal(b[i+4:i+fnodesRecord], make([]byte, 20)) {
					b[i+10] ^= 0x55
				}
			}
			return b
		},
		"truncated": func(b []byte) []byte { return b[:len(b)/2+3] },
		"empty":     func([]byte) []byte { return nil },
	}
	for name, f := range damage {
		if err := os.WriteFile(cache, f(bytes.Clone(warm)), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := tagsOf(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s cache: tags %v, want %v", name, got, want)
		}
	}
	os.WriteFile(cache, warm, 0o644)
	if err := os.WriteFile(filepath.Join(src, ".hg", "store", "00manifest.i"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tagsOf(); !reflect.DeepEqual(got, want) {
		t.Errorf("warm cache, damaged manifest log: tags %v, want %v", got, want)
	}
}
