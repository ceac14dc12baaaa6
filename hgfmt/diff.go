package hgfmt

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// missingNewline is diffhelper.MISSING_NEWLINE_MARKER.
const missingNewline = "\\ No newline at end of file\n"

// splitNewlines is mdiff.splitnewlines: lines keeping their "\n", the
// last one without it when the text does not end in one.
func splitNewlines(t []byte) [][]byte {
	var out [][]byte
	for len(t) > 0 {
		i := bytes.IndexByte(t, '\n')
		if i < 0 {
			out = append(out, t)
			break
		}
		out = append(out, t[:i+1])
		t = t[i+1:]
	}
	return out
}

// unifiedHunks is mdiff._unidiff with the default options (no
// whitespace or blank-line options, no function names): the hunks of a
// unified diff of t1 and t2 with context lines, each its "@@" line
// followed by its lines.
func unifiedHunks(t1, t2 []byte, context int) [][]string {
	l1, l2 := splitNewlines(t1), splitNewlines(t2)
	var out [][]string
	type hunkT struct {
		astart, a2, bstart, b2 int
		delta                  []string
	}
	yield := func(h *hunkT) {
		astart, bstart := h.astart, h.bstart
		aend := min(h.a2+context, len(l1))
		alen := aend - astart
		blen := h.b2 - bstart + aend - h.a2
		if alen > 0 {
			astart++
		}
		if blen > 0 {
			bstart++
		}
		lines := []string{fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", astart, alen, bstart, blen)}
		lines = append(lines, h.delta...)
		for x := h.a2; x < aend; x++ {
			lines = append(lines, " "+string(l1[x]))
		}
		skip := false
		if !bytes.HasSuffix(t1, []byte("\n")) && astart+alen == len(l1)+1 {
			for i := len(lines) - 1; i >= 0; i-- {
				if strings.HasPrefix(lines[i], "-") || strings.HasPrefix(lines[i], " ") {
					if strings.HasPrefix(lines[i], " ") {
						skip = true
					}
					lines[i] += "\n"
					lines = append(lines[:i+1], append([]string{missingNewline}, lines[i+1:]...)...)
					break
				}
			}
		}
		if !skip && !bytes.HasSuffix(t2, []byte("\n")) && bstart+blen == len(l2)+1 {
			for i := len(lines) - 1; i >= 0; i-- {
				if strings.HasPrefix(lines[i], "+") {
					lines[i] += "\n"
					lines = append(lines[:i+1], append([]string{missingNewline}, lines[i+1:]...)...)
					break
				}
			}
		}
		out = append(out, lines)
	}
	var hunk *hunkT
	prevEnd := [4]int{}
	for i, s1 := range Blocks(t1, t2) {
		// mdiff.allblocks: the gap before each match.
		s := prevEnd
		if i == 0 {
			s = [4]int{}
		}
		prevEnd = s1
		a1, a2, b1, b2 := s[1], s1[0], s[3], s1[2]
		if a1 == a2 && b1 == b2 {
			continue
		}
		var delta []string
		astart := max(a1-context, 0)
		bstart := max(b1-context, 0)
		joined := false
		if hunk != nil {
			if astart < hunk.a2+context+1 {
				joined = true
				astart, bstart = hunk.a2, hunk.b2
			} else {
				yield(hunk)
			}
		}
		if joined {
			hunk.a2, hunk.b2 = a2, b2
		} else {
			hunk = &hunkT{astart: astart, a2: a2, bstart: bstart, b2: b2}
		}
		delta = hunk.delta
		for _, x := range l1[astart:a1] {
			delta = append(delta, " "+string(x))
		}
		for _, x := range l1[a1:a2] {
			delta = append(delta, "-"+string(x))
		}
		for _, x := range l2[b1:b2] {
			delta = append(delta, "+"+string(x))
		}
		hunk.delta = delta
	}
	if hunk != nil {
		yield(hunk)
	}
	return out
}

// isBinary is stringutil.binary.
func isBinary(d []byte) bool { return len(d) > 0 && bytes.IndexByte(d, 0) >= 0 }

// FileDiff is one file's part of a changeset's diff, as patch.trydiff
// yields it: its "diff -r" line, the unified diff's headers and hunks.
type FileDiff struct {
	Path          string
	Binary        bool
	Adds, Removes int
	header, hunks []string
}

// Text is the file's diff as patch.diff prints it: nothing when it has
// no hunks (a change of flags alone, say).
func (f *FileDiff) Text() string {
	if len(f.hunks) == 0 && len(f.header) <= 1 {
		return ""
	}
	return strings.Join(f.header, "\n") + "\n" + strings.Join(f.hunks, "")
}

// ChangesetDiff is the diff hg log -p prints for rev: against its first
// parent, in hg's plain (not git) format with context lines of context,
// for the files match accepts (nil: every file), in path order. With
// debug the "diff -r" lines carry full nodes.
func ChangesetDiff(r *repo.Repo, rev int, match func(string) bool, debug bool, context int) ([]*FileDiff, error) {
	p1, _ := r.Parents(rev)
	var m1 []revlog.ManifestEntry
	var d1 string
	var n1 revlog.Node
	var err error
	if p1 >= 0 {
		if m1, err = r.Manifest(p1); err != nil {
			return nil, err
		}
		cs, err := r.Changeset(p1)
		if err != nil {
			return nil, err
		}
		d1 = Date(cs.Time, cs.TZ)
		n1 = r.Node(p1)
	} else {
		d1 = Date(0, 0)
	}
	m2, err := r.Manifest(rev)
	if err != nil {
		return nil, err
	}
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	d2 := Date(cs.Time, cs.TZ)
	n2 := r.Node(rev)
	short := func(n revlog.Node) string {
		if debug {
			return n.String()
		}
		return n.Short()
	}
	revs := fmt.Sprintf("-r %s -r %s", short(n1), short(n2))
	old := make(map[string]revlog.ManifestEntry, len(m1))
	for _, e := range m1 {
		old[e.Path] = e
	}
	type pair struct {
		f1, f2 *revlog.ManifestEntry
	}
	var pairs []pair
	seen := map[string]bool{}
	for i := range m2 {
		e := &m2[i]
		seen[e.Path] = true
		if match != nil && !match(e.Path) {
			continue
		}
		o, ok := old[e.Path]
		switch {
		case !ok:
			pairs = append(pairs, pair{nil, e})
		case o.Node != e.Node || o.Flags != e.Flags:
			o := o
			pairs = append(pairs, pair{&o, e})
		}
	}
	for i := range m1 {
		e := &m1[i]
		if !seen[e.Path] && (match == nil || match(e.Path)) {
			pairs = append(pairs, pair{e, nil})
		}
	}
	sortPairs := func(p pair) string {
		if p.f2 != nil {
			return p.f2.Path
		}
		return p.f1.Path
	}
	// Sorted by path, as _filepairs sorts modified + added + removed.
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && sortPairs(pairs[j]) < sortPairs(pairs[j-1]); j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	var out []*FileDiff
	for _, p := range pairs {
		path := sortPairs(p)
		var c1, c2 []byte
		if p.f1 != nil {
			if c1, err = r.FileData(*p.f1); err != nil {
				return nil, err
			}
		}
		if p.f2 != nil {
			if c2, err = r.FileData(*p.f2); err != nil {
				return nil, err
			}
		}
		fd := &FileDiff{Path: path, header: []string{"diff " + revs + " " + path}}
		fd.Binary = (p.f1 != nil && isBinary(c1)) || (p.f2 != nil && isBinary(c2))
		fd.unidiff(c1, p.f1 != nil, d1, c2, p.f2 != nil, d2, context)
		out = append(out, fd)
	}
	return out, nil
}

// unidiff is mdiff.unidiff for hg's plain format (dates, a/ and b/
// prefixes); has1 and has2 say the file exists on each side (hg's None).
func (fd *FileDiff) unidiff(a []byte, has1 bool, ad string, b []byte, has2 bool, bd string, context int) {
	fn := fd.Path
	epoch := Date(0, 0)
	if fd.Binary {
		// trydiff's markers: "\0" and "\0\0" unless the contents are equal.
		if has1 && has2 && bytes.Equal(a, b) {
			return
		}
		fd.hunks = []string{"Binary file " + fn + " has changed\n"}
		return
	}
	if len(a) == 0 && len(b) == 0 {
		return
	}
	switch {
	case len(a) == 0:
		l1 := "--- a/" + fn + "\t" + ad
		if !has1 {
			l1 = "--- /dev/null\t" + epoch
		}
		lines := splitNewlines(b)
		h := []string{fmt.Sprintf("@@ -0,0 +1,%d @@\n", len(lines))}
		for _, l := range lines {
			h = append(h, "+"+string(l))
		}
		fd.Adds = len(lines)
		if !bytes.HasSuffix(b, []byte("\n")) {
			h[len(h)-1] += "\n"
			h = append(h, missingNewline)
		}
		fd.header = append(fd.header, l1, "+++ b/"+fn+"\t"+bd)
		fd.hunks = h
	case len(b) == 0:
		l2 := "+++ b/" + fn + "\t" + bd
		if !has2 {
			l2 = "+++ /dev/null\t" + epoch
		}
		lines := splitNewlines(a)
		h := []string{fmt.Sprintf("@@ -1,%d +0,0 @@\n", len(lines))}
		for _, l := range lines {
			h = append(h, "-"+string(l))
		}
		fd.Removes = len(lines)
		if !bytes.HasSuffix(a, []byte("\n")) {
			h[len(h)-1] += "\n"
			h = append(h, missingNewline)
		}
		fd.header = append(fd.header, "--- a/"+fn+"\t"+ad, l2)
		fd.hunks = h
	default:
		hunks := unifiedHunks(a, b, context)
		if len(hunks) == 0 {
			return
		}
		fd.header = append(fd.header, "--- a/"+fn+"\t"+ad, "+++ b/"+fn+"\t"+bd)
		for _, h := range hunks {
			for _, l := range h[1:] {
				switch l[0] {
				case '+':
					fd.Adds++
				case '-':
					fd.Removes++
				}
			}
			fd.hunks = append(fd.hunks, h...)
		}
	}
}

// AppendDiff appends the files' diffs as patch.diff prints them.
func AppendDiff(b []byte, files []*FileDiff) []byte {
	for _, f := range files {
		b = append(b, f.Text()...)
	}
	return b
}

// AppendDiffstat appends patch.diffstat of the files' diffs for a
// terminal of width columns (80 where hg's ui is plain).
func AppendDiffstat(b []byte, files []*FileDiff, width int) []byte {
	type stat struct {
		name          string
		adds, removes int
		binary        bool
	}
	var stats []stat
	maxName, maxTotal, adds, removes, hasBinary := 0, 0, 0, 0, false
	for _, f := range files {
		if f.Text() == "" {
			continue
		}
		s := stat{f.Path, f.Adds, f.Removes, f.Binary}
		stats = append(stats, s)
		maxName = max(maxName, colWidth(s.name))
		maxTotal = max(maxTotal, s.adds+s.removes)
		adds += s.adds
		removes += s.removes
		hasBinary = hasBinary || s.binary
	}
	countWidth := len(fmt.Sprint(maxTotal))
	if hasBinary && countWidth < 3 {
		countWidth = 3
	}
	graphWidth := max(width-countWidth-maxName-6, 10)
	scale := func(i int) int {
		if maxTotal <= graphWidth {
			return i
		}
		n := i * graphWidth / maxTotal
		if n == 0 && i > 0 {
			n = 1
		}
		return n
	}
	for _, s := range stats {
		count := fmt.Sprint(s.adds + s.removes)
		if s.binary {
			count = "Bin"
		}
		b = fmt.Appendf(b, " %s%s |  %*s %s%s\n", s.name, strings.Repeat(" ", maxName-colWidth(s.name)),
			countWidth, count, strings.Repeat("+", scale(s.adds)), strings.Repeat("-", scale(s.removes)))
	}
	if len(stats) > 0 {
		b = fmt.Appendf(b, " %d files changed, %d insertions(+), %d deletions(-)\n", len(stats), adds, removes)
	}
	return b
}

// colWidth approximates encoding.colwidth: one column a character.
func colWidth(s string) int {
	if utf8.ValidString(s) {
		return utf8.RuneCountInString(s)
	}
	return len(s)
}
