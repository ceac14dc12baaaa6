package hgview

import (
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/revlog"
)

// indexColumn is one column of `hg debugindex --debug`.
type indexColumn struct {
	name  string
	size  int // 0: node width (40 with --debug)
	value func(rl *revlog.Revlog, rev int, e revlog.Entry) string
}

func nodeOf(rl *revlog.Revlog, rev int) revlog.Node {
	if rev < 0 || rev >= rl.Len() {
		return revlog.NullNode
	}
	return rl.Entry(rev).Node
}

// indexColumns: keep in sync with mercurial/revlogutils/debug.py
// INDEX_ENTRY_DEBUG_COLUMN (revlog v1 values for rank, compression modes
// and sidedata). cmd/hgfs/debugindex.go carries the same table; one of
// the two should go.
var indexColumns = []indexColumn{
	{"rev", 6, func(_ *revlog.Revlog, rev int, _ revlog.Entry) string { return fmt.Sprint(rev) }},
	{"rank", 6, func(*revlog.Revlog, int, revlog.Entry) string { return "-1" }},
	{"linkrev", 6, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.LinkRev) }},
	{"nodeid", 0, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return e.Node.String() }},
	{"p1-rev", 6, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.P1) }},
	{"p1-nodeid", 0, func(rl *revlog.Revlog, _ int, e revlog.Entry) string { return nodeOf(rl, e.P1).String() }},
	{"p2-rev", 6, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.P2) }},
	{"p2-nodeid", 0, func(rl *revlog.Revlog, _ int, e revlog.Entry) string { return nodeOf(rl, e.P2).String() }},
	{"full-size", 20, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.RawLen) }},
	{"delta-base", 6, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.BaseRev) }},
	{"flags", 2, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.Flags) }},
	{"comp-mode", 4, func(*revlog.Revlog, int, revlog.Entry) string { return "2" }},
	{"data-offset", 20, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.Offset) }},
	{"chunk-size", 10, func(_ *revlog.Revlog, _ int, e revlog.Entry) string { return fmt.Sprint(e.CompressedLen) }},
	{"sd-comp-mode", 7, func(*revlog.Revlog, int, revlog.Entry) string { return "inline" }},
	{"sidedata-offset", 20, func(*revlog.Revlog, int, revlog.Entry) string { return "0" }},
	{"sd-chunk-size", 10, func(*revlog.Revlog, int, revlog.Entry) string { return "0" }},
}

// FormatIndex returns the `hg debugindex --debug` table of rl.
func FormatIndex(rl *revlog.Revlog) []byte {
	width := func(col indexColumn) int {
		if col.size == 0 {
			return 40
		}
		return max(col.size, len(col.name))
	}
	hdr := make([]string, len(indexColumns))
	for i, col := range indexColumns {
		hdr[i] = fmt.Sprintf("%*s", width(col), col.name)
	}
	b := []byte(strings.Join(hdr, " ") + "\n")
	for rev := 0; rev < rl.Len(); rev++ {
		e := rl.Entry(rev)
		for i, col := range indexColumns {
			if i > 0 {
				b = append(b, ' ')
			}
			b = fmt.Appendf(b, "%*s", width(col), col.value(rl, rev, e))
		}
		b = append(b, '\n')
	}
	return b
}
