package main

import "testing"

// TestHgURLLikeUrlutil: hgURL joins what it splits as
// mercurial/utils/urlutil.py's url does (its doctests, then cases
// checked against hg 6.3's url class), and hidePassword and
// withoutPassword are urlutil.hidepassword and hg.clone's default path.
func TestHgURLLikeUrlutil(t *testing.T) {
	for _, tc := range []struct{ in, out, hidden, recorded string }{
		{in: "http://user:pw@host:80/c:/bob?fo:oo#ba:ar", hidden: "http://user:***@host:80/c:/bob?fo:oo#ba:ar", recorded: "http://user@host:80/c:/bob?fo:oo#ba:ar"},
		{in: "http://user:pw@host:80/?foo=bar&baz=42", hidden: "http://user:***@host:80/?foo=bar&baz=42", recorded: "http://user@host:80/?foo=bar&baz=42"},
		{in: "http://user:pw@host:80/?foo=bar%3dbaz", hidden: "http://user:***@host:80/?foo=bar%3dbaz", recorded: "http://user@host:80/?foo=bar%3dbaz"},
		{in: "ssh://user:pw@[::1]:2200//home/joe#", hidden: "ssh://user:***@[::1]:2200//home/joe#", recorded: "ssh://user@[::1]:2200//home/joe#"},
		{in: "http://localhost:80//"},
		{in: "http://localhost:80/"},
		{in: "http://localhost:80", out: "http://localhost:80/"},
		{in: "bundle:foo"},
		{in: "bundle://../foo", out: "bundle:../foo"},
		{in: "path"},
		{in: "file:///tmp/foo/bar"},
		{in: "file:///c:/tmp/foo/bar"},
		{in: `bundle:foo\bar`},
		{in: `file:///D:\data\hg`},
		{in: `\\blah\blah#baz`},
		{in: "path#", out: "path"},
		{in: "http://h/a b/%zz/%4", out: "http://h/a%20b/%25zz/%254"},
		{in: "http://h/%e2%82%ac/r%65po/", out: "http://h/%E2%82%AC/repo/"},
		{in: "http://us er:p@ss@h", out: "http://us%20er:p%40ss@h/", hidden: "http://us%20er:***@h/", recorded: "http://us%20er@h/"},
		{in: "http://:pw@h:8000", out: "http://:pw@h:8000/", hidden: "http://:***@h:8000/", recorded: "http://h:8000/"},
		{in: "http://user:@h", out: "http://user@h/"},
		{in: "http://h?", out: "http://h/"},
		{in: "http://h#", out: "http://h/#"},
		{in: "http://h:/x", out: "http://h/x"},
		{in: "http://[::1]:80/x"},
		{in: "s3://bucket/key?X-Amz=1&b=%2F"},
		{in: "ssh://h//abs/%73", out: "ssh://h//abs/s"},
		{in: "ssh://h", out: "ssh://h/"},
	} {
		if tc.out == "" {
			tc.out = tc.in
		}
		if tc.hidden == "" {
			tc.hidden = tc.out
		}
		if tc.recorded == "" {
			tc.recorded = tc.out
		}
		if got := parseHgURL(tc.in).String(); got != tc.out {
			t.Errorf("hgURL(%q) = %q, want %q", tc.in, got, tc.out)
		}
		if got := hidePassword(tc.in); got != tc.hidden {
			t.Errorf("hidePassword(%q) = %q, want %q", tc.in, got, tc.hidden)
		}
		if got := withoutPassword(tc.in); got != tc.recorded {
			t.Errorf("withoutPassword(%q) = %q, want %q", tc.in, got, tc.recorded)
		}
	}
}

// FuzzHgURL: any source, however odd (it comes from the command line or
// an hgrc), is split and joined without a panic, and hidePassword and
// withoutPassword too.
func FuzzHgURL(f *testing.F) {
	for _, s := range []string{"http://user:pw@host:80/c:/bob?fo:oo#ba:ar", "ssh://user:pw@[::1]:2200//home/joe#", "bundle://../foo", `\\blah\blah#baz`, "http://h/%e2%82%ac/r%65po/", "file:///c:/x", "%", "a:b@c", "http://[::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = parseHgURL(s).String()
		_ = hidePassword(s)
		_ = withoutPassword(s)
	})
}
