package templater

import "testing"

// FuzzParse checks that any template parses or fails with an error,
// never a panic or unbounded recursion.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"{rev}", "{node|short}\\n", "{files % '{file}\\n'}", "{if(tags, '{tags}', \"x\")}", "{", "{'", "{r'x'}", "{(((1)))}", "\\{x}", "{a(b=c, d)}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Parse(s)
	})
}
