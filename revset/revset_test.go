package revset

import (
	"testing"
)

// TestParseTrees checks the parse trees of revsetlang.py's doctests and
// hg's error positions. The evaluation is compared with hg in
// cmd/hgfs's TestLogLikeHg, on the real history.
func TestParseTrees(t *testing.T) {
	for _, c := range []struct{ spec, tree string }{
		{"@::", `(dagrangepost (symbol "@"))`},
		{"1 + 2 + 3", `(or (list (symbol "1") (symbol "2") (symbol "3")))`},
		{"x^:y", `(range (parentpost (symbol "x")) (symbol "y"))`},
		{"a-b", `(minus (symbol "a") (symbol "b"))`},
		{"f(1, 2)", `(func (symbol "f") (list (symbol "1") (symbol "2")))`},
		{"not x and y", `(and (not (symbol "x")) (symbol "y"))`},
		{"-1", `(negate (symbol "1"))`},
		{"r'\\n' + '\\n'", `(or (list (string "\\n") (string "\n")))`},
	} {
		tree, err := Parse(c.spec, nil)
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if got := tree.String(); got != c.tree {
			t.Errorf("%q:\n got %s\nwant %s", c.spec, got, c.tree)
		}
	}
	for _, c := range []struct{ spec, err string }{
		{"foo bar", "at 4: invalid token"},
		{"$1", "at 0: syntax error in revset '$1'"},
		{"'abc", "at 1: unterminated string"},
		{"(", "at 1: not a prefix: end"},
	} {
		_, err := Parse(c.spec, nil)
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: error %v, want %s", c.spec, err, c.err)
		}
	}
}
