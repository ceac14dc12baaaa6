package revset

import "testing"

// FuzzParse checks that any revset parses or fails with an error,
// never a panic or unbounded recursion.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"tip", "1:2", "::x", "heads(all())", "a-b", "x^2~3", "'s'", "r'x'", "limit(x, n=1)", "((((", "a##b", "x#y[1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tree, err := Parse(s, nil); err == nil {
			if tree, err = foldConcat(tree); err == nil {
				_, _ = analyze(tree)
			}
		}
	})
}
