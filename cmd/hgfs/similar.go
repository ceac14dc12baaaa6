package main

import (
	"sort"
	"strings"
)

// similarNames is hg's error.getsimilar: the candidates whose difflib
// SequenceMatcher ratio against value exceeds 0.6, in candidates' order.
func similarNames(candidates []string, value string) []string {
	var out []string
	for _, c := range candidates {
		if matchRatio(value, c) > 0.6 {
			out = append(out, c)
		}
	}
	return out
}

// similarityHint is hg's error.similarity_hint ("" when nothing is similar).
func similarityHint(sim []string) string {
	switch len(sim) {
	case 0:
		return ""
	case 1:
		return "did you mean " + sim[0] + "?"
	}
	s := append([]string(nil), sim...)
	sort.Strings(s)
	return "did you mean one of " + strings.Join(s, ", ") + "?"
}

// matchRatio is Python's difflib.SequenceMatcher(None, a, b).ratio() for
// short strings (no junk, and autojunk only applies from 200 bytes of b,
// longer than any command name): 2*M/T, where M counts the bytes of the
// matching blocks found by taking the longest common block (earliest in
// a, then in b) and recursing on either side of it.
func matchRatio(a, b string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	return 2 * float64(matchingBytes(a, b)) / float64(len(a)+len(b))
}

func matchingBytes(a, b string) int {
	bi, bj, k := 0, 0, 0
	for i := 0; i < len(a); i++ {
		for j := 0; j < len(b); j++ {
			n := 0
			for i+n < len(a) && j+n < len(b) && a[i+n] == b[j+n] {
				n++
			}
			if n > k {
				bi, bj, k = i, j, n
			}
		}
	}
	if k == 0 {
		return 0
	}
	return k + matchingBytes(a[:bi], b[:bj]) + matchingBytes(a[bi+k:], b[bj+k:])
}
