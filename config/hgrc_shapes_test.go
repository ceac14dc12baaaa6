package config

import (
	"regexp"
	"strings"
	"testing"
)

// hgLineRE are mercurial/config.py's expressions, with the \s of a
// Python bytes pattern, [ \t\n\r\v\f], for Go's \s (which lacks \v),
// written as {s} (and \S as {S}): the oracle the hand matchers of hgrc.go
// are held to.
var hgLineRE = func() map[string]*regexp.Regexp {
	py := strings.NewReplacer(`{s}`, ` \t\n\r\v\f`, `{S}`, `^ \t\n\r\v\f`)
	m := map[string]*regexp.Regexp{}
	for name, re := range map[string]string{
		"section": `^\[([^\[]+)\]`,
		"item":    `^([^={s}][^=]*?)[{s}]*=[{s}]*(.*[{S}]|)`,
		"cont":    `^[{s}]+([{S}]|[{S}].*[{S}])[{s}]*$`,
		"empty":   `^(;|#|[{s}]*$)`,
		"comment": `^(;|#)`,
		"unset":   `^%unset[{s}]+([{S}]+)`,
		"include": `^%include[{s}]+([{S}]|[{S}].*[{S}])[{s}]*$`,
	} {
		m[name] = regexp.MustCompile(py.Replace(re))
	}
	return m
}()

// checkLineShapes compares each hand matcher with its expression on l.
func checkLineShapes(t *testing.T, l string) {
	t.Helper()
	want := func(name string) []string { return hgLineRE[name].FindStringSubmatch(l) }
	same := func(name string, got []string, ok bool) {
		t.Helper()
		w := want(name)
		if ok != (w != nil) || ok && strings.Join(got, "\x00") != strings.Join(w[1:], "\x00") {
			t.Errorf("%s on %q: got %q %v, the expression %q", name, l, got, ok, w)
		}
	}
	s, ok := matchSection(l)
	same("section", []string{s}, ok)
	n, v, ok := matchItem(l)
	same("item", []string{n, v}, ok)
	c, ok := matchCont(l)
	same("cont", []string{c}, ok)
	u, ok := matchDirective(l, "%unset", false)
	same("unset", []string{u}, ok)
	i, ok := matchDirective(l, "%include", true)
	same("include", []string{i}, ok)
	if got, w := isEmpty(l), want("empty") != nil; got != w {
		t.Errorf("isEmpty(%q) = %v, the expression %v", l, got, w)
	}
	if got, w := isComment(l), want("comment") != nil; got != w {
		t.Errorf("isComment(%q) = %v, the expression %v", l, got, w)
	}
}

var lineShapeSeeds = []string{
	"", " ", "\t", "\v", "[a]", "[a]b]", "[a]b[c]", "[]]", "[]", "[", "[[a]", "[a", "[ a ] # c",
	"a=b", "a = b ", "a =", " a = b", "=b", "a\v=\vb\v", "a==b", "a b = c d \r", "\xff=\xfe",
	"  cont", " x ", " \v", "\vx", ";c", "#c", " ;c",
	"%unset a", "%unset  a b", "%unset", "%unseta", "%unset \v", "%include x ", "%include", "%include\tx y\t", "%includex",
}

func TestLineShapes(t *testing.T) {
	for _, l := range lineShapeSeeds {
		checkLineShapes(t, l)
	}
}

func FuzzLineShapes(f *testing.F) {
	for _, l := range lineShapeSeeds {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		// parse hands the matchers lines without their newline.
		checkLineShapes(t, strings.ReplaceAll(l, "\n", ""))
	})
}
