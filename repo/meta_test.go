package repo

import (
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
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
