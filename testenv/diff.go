package testenv

import (
	"fmt"
	"strings"
)

// Diff returns "" when a and b are equal, else a line diff of them headed
// by their names ("-" lines only in a, "+" only in b), for golden tests
// that compare hgfs output with hg's. Long inputs are cut around the first
// difference so failures stay readable.
func Diff(nameA, a, nameB, b string) string {
	if a == b {
		return ""
	}
	la, lb := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	// Trim the common prefix and suffix; diff only the middle.
	pre := 0
	for pre < len(la) && pre < len(lb) && la[pre] == lb[pre] {
		pre++
	}
	suf := 0
	for suf < len(la)-pre && suf < len(lb)-pre && la[len(la)-1-suf] == lb[len(lb)-1-suf] {
		suf++
	}
	ma, mb := la[pre:len(la)-suf], lb[pre:len(lb)-suf]
	const maxLines = 40
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	if len(ma)*len(mb) > 1<<20 && len(ma) == len(mb) {
		// Too long for the quadratic diff, with as many lines on each
		// side (say, a field that differs in every record of a long
		// listing): the lines that differ, where they are, with the
		// line before each for context.
		lines := 0
		for i := 0; i < len(ma) && lines < maxLines; i++ {
			if ma[i] == mb[i] {
				continue
			}
			fmt.Fprintf(&out, "@@ line %d @@\n", pre+i+1)
			if pre+i > 0 {
				writeLines(&out, " ", la[pre+i-1:pre+i])
			}
			writeLines(&out, "-", ma[i:i+1])
			writeLines(&out, "+", mb[i:i+1])
			lines += 3
			if lines >= maxLines {
				out.WriteString("...\n")
			}
		}
		return out.String()
	}
	fmt.Fprintf(&out, "@@ line %d @@\n", pre+1)
	if len(ma)*len(mb) > 1<<20 {
		ma, mb = ma[:min(len(ma), maxLines)], mb[:min(len(mb), maxLines)]
		writeLines(&out, "-", ma)
		writeLines(&out, "+", mb)
		return out.String()
	}
	// Longest common subsequence over the differing middle.
	n, m := len(ma), len(mb)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	lines := 0
	i, j := 0, 0
	for (i < n || j < m) && lines < maxLines {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			writeLines(&out, " ", ma[i:i+1])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			writeLines(&out, "+", mb[j:j+1])
			j++
		default:
			writeLines(&out, "-", ma[i:i+1])
			i++
		}
		lines++
	}
	if i < n || j < m {
		out.WriteString("...\n")
	}
	return out.String()
}

func writeLines(b *strings.Builder, prefix string, lines []string) {
	for _, l := range lines {
		b.WriteString(prefix)
		b.WriteString(strings.TrimSuffix(l, "\n"))
		if !strings.HasSuffix(l, "\n") {
			b.WriteString(" (no newline)")
		}
		b.WriteString("\n")
	}
}
