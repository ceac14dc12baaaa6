package hgfmt

import (
	"bytes"
	"sort"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// Edge kinds of mercurial/graphmod.py.
const (
	edgeParent      = 'P'
	edgeGrandparent = 'G'
	edgeMissing     = 'M'
)

// none is graphmod's None edge character: a line that ends here.
const none = 0

type parentEdge struct {
	kind byte
	rev  int
}

// Graph draws `hg log -G`'s ASCII graph (graphmod.dagwalker, asciiedges
// and ascii) for revisions given newest first.
type Graph struct {
	r      *repo.Repo
	in     map[int]bool
	gp     map[int][]int
	seen   []int
	edges  map[int]byte
	lastCD int
	lastIx int
	plain  bool
}

// NewGraph prepares the graph of revs (newest first). plain is
// ui.plain("graph") (HGPLAIN): every edge is drawn "|", grandparent
// and missing-parent edges included, as hg did before 3.8.
func NewGraph(r *repo.Repo, revs []int, plain bool) *Graph {
	in := make(map[int]bool, len(revs))
	for _, rev := range revs {
		in[rev] = true
	}
	return &Graph{r: r, in: in, gp: map[int][]int{}, edges: map[int]byte{}, plain: plain}
}

// Symbol is templatekw.getgraphnode: @ for a working directory parent,
// x obsolete, * unstable (orphan), _ closing a branch, o otherwise.
func Symbol(r *repo.Repo, rev int, cs *revlog.Changeset) byte {
	switch {
	case r.IsWorkingParent(rev):
		return '@'
	case r.Obsolete(rev):
		return 'x'
	case r.Orphan(rev):
		return '*'
	}
	if _, ok := cs.Extra["close"]; ok {
		return '_'
	}
	return 'o'
}

// parents is dagwalker's parent list of rev.
func (g *Graph) parents(rev int) []parentEdge {
	p1, p2 := g.r.Parents(rev)
	ps := []int{p1}
	if p2 != revlog.NullRev {
		ps = append(ps, p2)
	}
	pset := map[int]bool{}
	var mpars []int
	for _, p := range ps {
		if g.in[p] {
			pset[p] = true
		} else if p != revlog.NullRev {
			mpars = append(mpars, p)
		}
	}
	var sorted []int
	for p := range pset {
		sorted = append(sorted, p)
	}
	sort.Ints(sorted)
	var out []parentEdge
	for _, p := range sorted {
		out = append(out, parentEdge{edgeParent, p})
	}
	for _, m := range mpars {
		gp, ok := g.gp[m]
		if !ok {
			gp = g.reachableRoots(m)
			g.gp[m] = gp
		}
		if len(gp) == 0 {
			out = append(out, parentEdge{edgeMissing, m})
			pset[m] = true
			continue
		}
		for _, x := range gp {
			if !pset[x] {
				out = append(out, parentEdge{edgeGrandparent, x})
			}
		}
		for _, x := range gp {
			pset[x] = true
		}
	}
	return out
}

// reachableRoots is dagop.reachableroots(revs, [head]) without paths:
// the graph's revisions first met walking head's ancestors, sorted.
func (g *Graph) reachableRoots(head int) []int {
	seen := map[int]bool{}
	visit := []int{head}
	var found []int
	for len(visit) > 0 {
		rev := visit[len(visit)-1]
		visit = visit[:len(visit)-1]
		if g.in[rev] {
			found = append(found, rev)
			continue
		}
		p1, p2 := g.r.Parents(rev)
		for _, p := range []int{p1, p2} {
			if p >= 0 && !seen[p] {
				seen[p] = true
				visit = append(visit, p)
			}
		}
	}
	sort.Ints(found)
	return found
}

type coldata struct {
	idx, ncols, coldiff int
	edges               [][2]int
}

func index(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// asciiEdges is graphmod.asciiedges: the rows (usually one) a node
// draws and the first row's width.
func (g *Graph) asciiEdges(rev int, parents []parentEdge) []coldata {
	if index(g.seen, rev) < 0 {
		g.seen = append(g.seen, rev)
	}
	nodeidx := index(g.seen, rev)
	var known, newp []int
	for _, p := range parents {
		if p.rev == rev {
			continue
		}
		if index(g.seen, p.rev) >= 0 {
			known = append(known, p.rev)
		} else {
			newp = append(newp, p.rev)
			switch {
			case g.plain || p.kind == edgeParent:
				g.edges[p.rev] = '|'
			case p.kind == edgeGrandparent:
				g.edges[p.rev] = ':'
			default:
				g.edges[p.rev] = none
			}
		}
	}
	ncols := len(g.seen)
	next := append(append(append([]int(nil), g.seen[:nodeidx]...), newp...), g.seen[nodeidx+1:]...)
	var edges [][2]int
	for _, p := range known {
		edges = append(edges, [2]int{nodeidx, index(next, p)})
	}
	g.seen = next
	var rows []coldata
	for len(newp) > 2 {
		edges = append(edges, [2]int{nodeidx, nodeidx}, [2]int{nodeidx, nodeidx + 1})
		rows = append(rows, coldata{nodeidx, ncols, 1, edges})
		nodeidx++
		ncols++
		edges = nil
		newp = newp[1:]
	}
	if len(newp) > 0 {
		edges = append(edges, [2]int{nodeidx, nodeidx})
	}
	if len(newp) > 1 {
		edges = append(edges, [2]int{nodeidx, nodeidx + 1})
	}
	more := len(next) - ncols
	delete(g.edges, rev)
	return append(rows, coldata{nodeidx, ncols, more, edges})
}

// Append draws rev (the next revision, newest first) with its text
// (the lines the changeset printed, without the last newline).
func (g *Graph) Append(b []byte, rev int, char byte, text []byte) []byte {
	lines := bytes.Split(text, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	rows := g.asciiEdges(rev, g.parents(rev))
	for i, cd := range rows {
		if i > 0 {
			char = '\\'
		}
		b = g.ascii(b, char, lines, cd)
		lines = nil
	}
	return b
}

func (g *Graph) echars(ncols, coldiff int) []byte {
	var e []byte
	for _, p := range g.seen {
		c, ok := g.edges[p]
		if !ok {
			c = '|'
		}
		e = append(e, c, ' ')
	}
	for i := 0; i < max(ncols+coldiff-len(g.seen), 0); i++ {
		e = append(e, '|', ' ')
	}
	return e
}

func (g *Graph) ascii(b []byte, char byte, text [][]byte, cd coldata) []byte {
	idx, edges, ncols, coldiff := cd.idx, cd.edges, cd.ncols, cd.coldiff
	echars := g.echars(ncols, coldiff)
	if coldiff == -1 {
		for i, e := range edges {
			if e[1] > e[0] {
				edges[i] = [2]int{e[0], e[1] + 1}
			}
		}
	}
	padding := false
	if len(text) > 2 && coldiff == -1 {
		for _, e := range edges {
			if e[0]+1 < e[1] {
				padding = true
			}
		}
	}
	fixTail := len(text) <= 2 && !padding
	nodeline := append([]byte(nil), echars[:idx*2]...)
	nodeline = append(nodeline, char, ' ')
	nodeline = append(nodeline, tail(echars, idx, g.lastIx, ncols, coldiff, g.lastCD, fixTail)...)
	shift := append([]byte(nil), echars[:idx*2]...)
	for i := 0; i < 2+coldiff; i++ {
		shift = append(shift, ' ')
	}
	count := ncols - idx - 1
	switch coldiff {
	case -1:
		for i := 0; i < count; i++ {
			shift = append(shift, '/', ' ')
		}
	case 0:
		shift = append(shift, echars[min((idx+1)*2, len(echars)):min(ncols*2, len(echars))]...)
	default:
		for i := 0; i < count; i++ {
			shift = append(shift, '\\', ' ')
		}
	}
	drawEdges(echars, edges, nodeline, shift)
	lines := [][]byte{nodeline}
	if padding {
		lines = append(lines, paddingLine(echars, idx, ncols, edges))
	}
	lines = append(lines, shift)
	extra := append([]byte(nil), echars[:min((ncols+coldiff)*2, len(echars))]...)
	for len(lines) < len(text) {
		lines = append(lines, append([]byte(nil), extra...))
	}
	lines = g.endingLines(lines, extra)
	for len(text) < len(lines) {
		text = append(text, nil)
	}
	indent := 2 * max(ncols, ncols+coldiff)
	for i, l := range lines {
		for j, c := range l {
			if c == none {
				l[j] = ' '
			}
		}
		line := append([]byte(nil), l...)
		for len(line) < indent {
			line = append(line, ' ')
		}
		line = append(line, ' ')
		line = append(line, text[i]...)
		b = append(b, bytes.TrimRight(line, " \t\n\r\v\f")...)
		b = append(b, '\n')
	}
	g.lastCD, g.lastIx = coldiff, idx
	return b
}

func tail(echars []byte, idx, pidx, ncols, coldiff, pdiff int, fix bool) []byte {
	if fix && coldiff == pdiff && coldiff != 0 {
		if coldiff == -1 {
			start := max(idx+1, pidx)
			t := append([]byte(nil), echars[min(idx*2, len(echars)):max(min((start-1)*2, len(echars)), min(idx*2, len(echars)))]...)
			for i := 0; i < ncols-start; i++ {
				t = append(t, '/', ' ')
			}
			return t
		}
		var t []byte
		for i := 0; i < ncols-idx-1; i++ {
			t = append(t, '\\', ' ')
		}
		return t
	}
	rem := ncols - idx - 1
	if rem > 0 {
		return append([]byte(nil), echars[max(len(echars)-rem*2, 0):]...)
	}
	return nil
}

func drawEdges(echars []byte, edges [][2]int, nodeline, interline []byte) {
	for _, e := range edges {
		start, end := e[0], e[1]
		switch {
		case start == end+1:
			interline[2*end+1] = '/'
		case start == end-1:
			interline[2*start+1] = '\\'
		case start == end:
			interline[2*start] = echars[2*start]
		default:
			if 2*end >= len(nodeline) {
				continue
			}
			nodeline[2*end] = '+'
			if start > end {
				start, end = end, start
			}
			for i := 2*start + 1; i < 2*end; i++ {
				if nodeline[i] != '+' {
					nodeline[i] = '-'
				}
			}
		}
	}
}

func paddingLine(echars []byte, idx, ncols int, edges [][2]int) []byte {
	line := append([]byte(nil), echars[:idx*2]...)
	has := false
	for _, e := range edges {
		if e == [2]int{idx, idx - 1} || e == [2]int{idx, idx} {
			has = true
		}
	}
	if has {
		line = append(line, echars[idx*2:(idx+1)*2]...)
	} else {
		line = append(line, ' ', ' ')
	}
	if rem := ncols - idx - 1; rem > 0 {
		line = append(line, echars[len(echars)-rem*2:]...)
	}
	return line
}

// endingLines is graphmod._drawendinglines: edges to missing parents
// end in a short line and "~".
func (g *Graph) endingLines(lines [][]byte, extra []byte) [][]byte {
	hasNone := false
	for _, c := range g.edges {
		if c == none {
			hasNone = true
		}
	}
	if !hasNone {
		return lines
	}
	var edgechars []byte
	for i := 0; i < len(extra); i += 2 {
		edgechars = append(edgechars, extra[i])
	}
	for len(edgechars) > 0 && edgechars[len(edgechars)-1] == none {
		edgechars = edgechars[:len(edgechars)-1]
	}
	nones := 0
	for _, c := range edgechars {
		if c == none {
			nones++
		}
	}
	shift := max(nones*2-1, 0)
	for len(lines) < 3+shift {
		lines = append(lines, append([]byte(nil), extra...))
	}
	if shift > 0 {
		first := bytes.IndexByte(extra, none)
		var toshift []int
		for i := first; i < len(extra); i += 2 {
			if extra[i] != none {
				toshift = append(toshift, i)
			}
		}
		var targets []int
		for i := range toshift {
			targets = append(targets, first+2*i)
		}
		positions := append([]int(nil), toshift...)
		for _, line := range lines[len(lines)-shift:] {
			for j := first; j < len(line); j++ {
				line[j] = ' '
			}
			for i := range positions {
				pos := positions[i] - 1
				positions[i] = max(pos, targets[i])
				if pos > targets[i] {
					line[pos] = '/'
				} else {
					line[pos] = extra[toshift[i]]
				}
			}
		}
	}
	for i, line := range lines {
		if bytes.IndexByte(line, none) < 0 {
			continue
		}
		fill := byte(' ')
		switch i {
		case 1:
			fill = '|'
		case 2:
			fill = '~'
		}
		for j, c := range line {
			if c == none {
				line[j] = fill
			}
		}
	}
	for p, c := range g.edges {
		if c == none {
			delete(g.edges, p)
			if k := index(g.seen, p); k >= 0 {
				g.seen = append(g.seen[:k], g.seen[k+1:]...)
			}
		}
	}
	return lines
}
