package templater

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
)

// TestJSON checks encoding.jsonescape's two modes on text hg printed
// for the same bytes: invalid UTF-8 as U+DCxx (escaped when paranoid,
// as the |json filter is; raw UTF-8b in formatter output).
func TestJSON(t *testing.T) {
	in := "a\xff\xfeb\x00c\xc3\xa9\n<>\"\\\x7f\t"
	if got, want := JSON(in, false), "\"a\xed\xb3\xbf\xed\xb3\xbeb\\u0000c\xc3\xa9\\n<>\\\"\\\\\\u007f\\t\""; got != want {
		t.Errorf("JSON(non-paranoid) = %q, want %q", got, want)
	}
	if got, want := JSON(in, true), "\"a\\udcff\\udcfeb\\u0000c\\u00e9\\n\\u003c\\u003e\\\"\\\\\\u007f\\t\""; got != want {
		t.Errorf("JSON(paranoid) = %q, want %q", got, want)
	}
	if got, want := JSON("\U0001d11e", true), `"\ud834\udd1e"`; got != want {
		t.Errorf("JSON(non-BMP) = %q, want %q", got, want)
	}
}

// TestParseErrors checks hg's messages and positions for bad templates.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ tmpl, err, hint string }{
		{"{rev", "at 1: unterminated template expansion", "{rev\n  ^ here"},
		{"{rev|}", "at 5: not a prefix: end", "{rev|}\n      ^ here"},
		{"{'x}", "at 2: unterminated string", "{'x}\n   ^ here"},
		{"a\n{", "at 3: unterminated template expansion", "a\\n{\n     ^ here"},
	} {
		_, err := Parse(c.tmpl)
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: error %v, want %s", c.tmpl, err, c.err)
			continue
		}
		if pe, ok := err.(*hgparse.ParseError); !ok || pe.Hint != c.hint {
			t.Errorf("%q: hint %q, want %q", c.tmpl, pe.Hint, c.hint)
		}
	}
}

// TestParseLongChains checks that a chain of infix operators too long
// to recurse on is refused when parsed (the parser builds chains in a
// loop, as deep as the template is long), and that a long argument
// list, which parsing flattens, is not.
func TestParseLongChains(t *testing.T) {
	for _, op := range []string{"+", "|", "%", "."} {
		tmpl := "{x" + strings.Repeat(op+"x", 10000) + "}"
		if _, err := Parse(tmpl); err == nil || !strings.HasSuffix(err.Error(), "expression nested too deeply") {
			t.Errorf("x%sx%s...: error %v, want expression nested too deeply", op, op, err)
		}
	}
	if _, err := Parse("{separate(' '" + strings.Repeat(", x", 10000) + ")}"); err != nil {
		t.Errorf("separate() of 10000 arguments: %v", err)
	}
}

// TestAge: templatefilters.age's answers (from hg 6.3's own function
// with time.time fixed at 1700000000).
func TestAge(t *testing.T) {
	const now = 1700000000
	for delta, want := range map[int64]string{
		0: "1 second ago", -1: "1 second ago", -59: "59 seconds ago", -60: "60 seconds ago", -119: "119 seconds ago",
		-120: "2 minutes ago", -7200: "2 hours ago", -86400 * 2: "2 days ago", -86400 * 13: "13 days ago",
		-86400 * 14: "2 weeks ago", -86400 * 59: "8 weeks ago", -86400 * 61: "2 months ago", -86400 * 364: "12 months ago",
		-86400 * 365 * 2: "2 years ago", -86400*365*2 - 1: "2021-11-14", 1: "1 second from now", 3600 * 5: "5 hours from now",
		86400*365*30 + 1: "in the distant future",
	} {
		if got := age(date{now + delta, 0}, now); got != want {
			t.Errorf("age(now%+d) = %q, want %q", delta, got, want)
		}
	}
}

// TestPadTooWide: pad() refuses a width whose padding would pass its
// bound, before allocating it.
func TestPadTooWide(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	testenv.Hg(t, filepath.Dir(dir), "init", "r")
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, dir, "commit", "-q", "-A", "-m", "a")
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tmpl, err := Parse("{pad(rev, 100000000000)}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Render(&Env{Repo: r}, 0); err == nil || !strings.Contains(err.Error(), "pad() width 100000000000 is too large") {
		t.Fatalf("render: %v", err)
	}
}
