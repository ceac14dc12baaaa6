package hgfmt

import (
	"bytes"
	"math/bits"
)

// Blocks is hg's bdiff.blocks (mercurial/bdiff.c, the C implementation
// hg uses by default, not the pure-Python difflib fallback): the
// matching line ranges of a and b, each [a1, a2, b1, b2] with a[a1:a2]
// equal to b[b1:b2], in order, ending with the sentinel [len(a lines),
// len(a lines), len(b lines), len(b lines)]. Lines are split on "\n" as
// mdiff.splitnewlines does (the last one may lack it). The matches are
// bdiff's, not a minimal diff's: its longest-match recursion with its
// popularity threshold and tie-breaking, and its final push of each
// hunk's end towards the end of the file, so that diffs built on them
// are hg's byte for byte.
func Blocks(a, b []byte) [][4]int {
	al, bl := splitBLines(a), splitBLines(b)
	return bdiff(al, bl)
}

// bline is bdiff.c's struct bdiff_line.
type bline struct {
	hash uint32
	n    int // next line of the same equivalence class in b, or -1
	e    int // the equivalence class (a hash table slot)
	l    []byte
}

// splitBLines is bdiff_splitlines (without the sentinel line, which no
// path of the algorithm reads).
func splitBLines(a []byte) []bline {
	lines := make([]bline, 0, bytes.Count(a, []byte{'\n'})+1)
	var h uint32
	start := 0
	for i, c := range a {
		// C's char is signed: bytes above 0x7f add negatively.
		h = uint32(int32(int8(c))) + bits.RotateLeft32(h, 7)
		if c == '\n' || i == len(a)-1 {
			lines = append(lines, bline{hash: h, l: a[start : i+1]})
			h = 0
			start = i + 1
		}
	}
	return lines
}

func blineEq(a, b *bline) bool {
	return a.hash == b.hash && bytes.Equal(a.l, b.l)
}

// equateLines is bdiff.c's equatelines: b's lines are chained by
// equivalence class, and each line of a points at the head of its class
// in b, or at nothing when the class is too popular.
func equateLines(a, b []bline) {
	buckets := 1
	for buckets < len(b)+1 {
		buckets *= 2
	}
	mask := buckets*4 - 1
	type slot struct{ pos, len int }
	h := make([]slot, mask+1)
	for i := range h {
		h[i].pos = -1
	}
	for i := range b {
		j := int(b[i].hash) & mask
		for ; h[j].pos != -1; j = (j + 1) & mask {
			if blineEq(&b[i], &b[h[j].pos]) {
				break
			}
		}
		b[i].n = h[j].pos
		b[i].e = j
		h[j].pos = i
		h[j].len++
	}
	t := 1000000 / (len(b) + 1)
	if len(b) >= 31000 {
		t = len(b) / 1000
	}
	for i := range a {
		j := int(a[i].hash) & mask
		for ; h[j].pos != -1; j = (j + 1) & mask {
			if blineEq(&a[i], &b[h[j].pos]) {
				break
			}
		}
		a[i].e = j
		if h[j].len <= t {
			a[i].n = h[j].pos
		} else {
			a[i].n = -1
		}
	}
}

type bpos struct{ pos, len int }

// longestMatch is bdiff.c's longest_match.
func longestMatch(a, b []bline, pos []bpos, a1, a2, b1, b2 int) (mi, mj, mk int) {
	mi, mj = a1, b1
	if a2-a1 > 30000 {
		a1 = a2 - 30000
	}
	half := (a1 + a2 - 1) / 2
	bhalf := (b1 + b2 - 1) / 2
	for i := a1; i < a2; i++ {
		j := a[i].n
		for j >= b2 {
			j = b[j].n
		}
		for ; j >= b1; j = b[j].n {
			k := 1
			for ; j-k >= b1 && i-k >= a1; k++ {
				if pos[j-k].pos == i-k {
					k += pos[j-k].len
					break
				}
				if a[i-k].e != b[j-k].e {
					break
				}
			}
			pos[j].pos = i
			pos[j].len = k
			if k > mk {
				mi, mj, mk = i, j, k
			} else if k == mk {
				if i > mi && i <= half && j > b1 {
					mi, mj = i, j
				} else if i == mi && (mj > bhalf || i == a1) {
					mj = j
				}
			}
		}
	}
	if mk > 0 {
		mi = mi - mk + 1
		mj = mj - mk + 1
	}
	for mi+mk < a2 && mj+mk < b2 && a[mi+mk].e == b[mj+mk].e {
		mk++
	}
	return mi, mj, mk
}

// recurse is bdiff.c's recurse: the matches of a[a1:a2] and b[b1:b2].
func recurse(a, b []bline, pos []bpos, a1, a2, b1, b2 int, out [][4]int) [][4]int {
	for {
		i, j, k := longestMatch(a, b, pos, a1, a2, b1, b2)
		if k == 0 {
			return out
		}
		out = recurse(a, b, pos, a1, i, b1, j, out)
		out = append(out, [4]int{i, i + k, j, j + k})
		a1, b1 = i+k, j+k
	}
}

// bdiff is bdiff_diff.
func bdiff(a, b []bline) [][4]int {
	equateLines(a, b)
	pos := make([]bpos, max(len(b), 1))
	hunks := recurse(a, b, pos, 0, len(a), 0, len(b), nil)
	hunks = append(hunks, [4]int{len(a), len(a), len(b), len(b)})
	// Push each hunk towards the end.
	for x := 0; x+1 < len(hunks); x++ {
		cur, next := &hunks[x], &hunks[x+1]
		if cur[1] == next[0] || cur[3] == next[2] {
			for cur[1] < len(a) && cur[3] < len(b) && next[0] < next[1] && next[2] < next[3] &&
				blineEq(&a[cur[1]], &b[cur[3]]) {
				cur[1]++
				next[0]++
				cur[3]++
				next[2]++
			}
		}
	}
	return hunks
}
