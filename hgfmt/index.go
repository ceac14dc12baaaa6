package hgfmt

import (
	"fmt"
	"io"

	"github.com/hgfs/hgfs/revlog"
)

// indexColumn mirrors one column of mercurial/revlogutils/debug.py.
type indexColumn struct {
	name    string
	size    int  // 0: node width (12, or 40 with --debug)
	verbose bool // shown with -v or --debug only
	value   func(rl *revlog.Revlog, rev int, e revlog.Entry, hexfn func(revlog.Node) string) string
}

// indexColumns: keep in sync with mercurial/revlogutils/debug.py
// INDEX_ENTRY_DEBUG_COLUMN (revlog v1 values for rank, compression modes
// and sidedata).
var indexColumns = []indexColumn{
	{"rev", 6, false, func(_ *revlog.Revlog, rev int, _ revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(rev)
	}},
	{"rank", 6, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "-1" }},
	{"linkrev", 6, false, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.LinkRev)
	}},
	{"nodeid", 0, false, func(_ *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string { return h(e.Node) }},
	{"p1-rev", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.P1)
	}},
	{"p1-nodeid", 0, false, func(rl *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string {
		return h(nodeOf(rl, e.P1))
	}},
	{"p2-rev", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.P2)
	}},
	{"p2-nodeid", 0, false, func(rl *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string {
		return h(nodeOf(rl, e.P2))
	}},
	{"full-size", 20, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.RawLen)
	}},
	{"delta-base", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.BaseRev)
	}},
	{"flags", 2, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.Flags)
	}},
	{"comp-mode", 4, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "2" }},
	{"data-offset", 20, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.Offset)
	}},
	{"chunk-size", 10, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.CompressedLen)
	}},
	{"sd-comp-mode", 7, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "inline" }},
	{"sidedata-offset", 20, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "0" }},
	{"sd-chunk-size", 10, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "0" }},
}

func nodeOf(rl *revlog.Revlog, rev int) revlog.Node {
	if rev < 0 || rev >= rl.Len() {
		return revlog.NullNode
	}
	return rl.Entry(rev).Node
}

// WriteIndex writes the `hg debugindex` table of rl to w, one line per
// revision as it goes: the short form, with -v (verbose) every column,
// with --debug (debug, which implies verbose) full nodes too.
func WriteIndex(w io.Writer, rl *revlog.Revlog, verbose, debug bool) error {
	verbose = verbose || debug
	hexfn, idlen := revlog.Node.Short, 12
	if debug {
		hexfn, idlen = revlog.Node.String, 40
	}
	width := func(col indexColumn) int {
		if col.size == 0 {
			return idlen
		}
		return max(col.size, len(col.name))
	}
	// row appends one line: cell(col) of every shown column, right-aligned.
	row := func(line []byte, cell func(indexColumn) string) []byte {
		first := true
		for _, col := range indexColumns {
			if col.verbose && !verbose {
				continue
			}
			if !first {
				line = append(line, ' ')
			}
			first = false
			line = fmt.Appendf(line, "%*s", width(col), cell(col))
		}
		return append(line, '\n')
	}
	line := row(nil, func(col indexColumn) string { return col.name })
	if _, err := w.Write(line); err != nil {
		return err
	}
	for rev := 0; rev < rl.Len(); rev++ {
		e := rl.Entry(rev)
		line = row(line[:0], func(col indexColumn) string { return col.value(rl, rev, e, hexfn) })
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
