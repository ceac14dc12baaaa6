package revset_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revset"
	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

// revsets are compared with hg log -r SPEC -T '{rev} ' on each
// repository: membership, order and errors.
var revsets = []string{
	"0", "tip", "null", ".", "-1", "-3", "2:5", "5:2", ":3", "3:", ":", "null:2",
	"::3", "3::", "1::4", "heads(all())", "heads(0:5)", "roots(2:6)", "head()",
	"branch(default)", "branch(tip)", "branch('re:.*')", "branch(nosuchbranch)", "branch('literal:zz')",
	"ancestors(5)", "ancestors(5, depth=1)", "descendants(1)", "descendants(1, 2)",
	"draft()", "public()", "secret()", "not public()", "!draft()",
	"bookmark()", "tag()", "tag(tip)", "tag('re:.')", "tag(nosuch)", "bookmark(nosuch)",
	"keyword(fix)", "keyword(README)", "user(a)", "author(test)", "desc(merge)",
	"only(tip)", "only(tip, 2)", "tip % 2", "2::tip - 4", "2:6 and not 4", "2:6 & !merge()",
	"3 or 1 or 2", "3 + 1 | 2", "reverse(0:4)", "sort(0:4, -rev)", "sort(all(), -date)", "sort(3 or 1 or 2, 'user -rev')",
	"limit(all(), 3)", "limit(reverse(all()), 2, 1)", "first(5:0)", "last(all(), 2)", "last(0:5)",
	"max(all())", "min(2:)", "merge()", "p1(tip)", "p2(all())", "parents(tip)", "children(0)", "tip^", "tip~2", "tip^2",
	"file(README)", "file('glob:*.txt')", "file('re:.*')", "date('>2000-01-01')", "date('<1990')", "date('2023')",
	"present(nosuch)", "present(0)", "rev(1)", "rev(999)", "id(tip)", "closed()", "all()", "none()",
	"0:2 and 1:3", "reverse(5:0) and 2:4", "(1 or 0) and 0:5", "limit(5:0, 3) and 0:5",
	"foo bar", "nosuch()", "nosuchrev", "1 +", "(", "'unterminated", "sort(all(), nokey)",
	"ancestors()", "limit(all(), x)", "1:2:3", "x::", "::", "-", "a-b-c", "all(1)",
	"date(foo)", "heads(", "tip and", "tip^3", "branch()", "parents()",
}

func TestRevsetsLikeHg(t *testing.T) {
	repos := map[string]string{
		"history": testenv.CorpusRepo(t, testenv.CorpusHistory),
		"rich":    testenv.Generate(t, testenv.Rich),
	}
	for name, dir := range repos {
		t.Run(name, func(t *testing.T) {
			hs := testenv.StartHgServer(t, dir)
			r, err := repo.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, spec := range revsets {
				o, e, code := hs.Run(t, "log", "-r", spec, "-T", "{rev} ")
				want := string(o)
				if code != 0 {
					want = "error: " + firstLine(string(e))
				}
				got := ""
				revs, err := revset.New(r, revset.Options{}).Revs([]string{spec})
				if err != nil {
					got = "error: " + revset.ErrorLine(err)
				} else {
					var b strings.Builder
					for _, rv := range revs {
						fmt.Fprintf(&b, "%d ", rv)
					}
					got = b.String()
				}
				if got != want {
					if u := (*revset.UnsupportedError)(nil); strings.Contains(got, "not supported by hgfs") {
						_ = u
						t.Logf("%q: unsupported: %s (hg: %.80s)", spec, got, want)
						continue
					}
					t.Errorf("%q:\nhg:   %.300s\nhgfs: %.300s", spec, want, got)
				}
			}
		})
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
