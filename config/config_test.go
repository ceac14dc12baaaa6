package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

func write(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParse(t *testing.T) {
	c := New()
	err := c.Parse("f", []byte("\xef\xbb\xbf# comment\n[ui]\nusername = Jo User  \n; other\nmulti = a\n  b\n  c\n\n[server]\nuncompressed=False\nempty =\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ s, n, want, src string }{
		{"ui", "username", "Jo User", "f:3"},
		{"ui", "multi", "a\nb\nc", "f:7"},
		{"server", "uncompressed", "False", "f:10"},
		{"server", "empty", "", "f:11"},
	} {
		it, ok := c.Lookup(tc.s, tc.n)
		if !ok || it.Value != tc.want || it.Source != tc.src {
			t.Errorf("%s.%s = %q from %q (set %v), want %q from %q", tc.s, tc.n, it.Value, it.Source, ok, tc.want, tc.src)
		}
	}
	if b, err := c.Bool("server", "uncompressed", true); err != nil || b {
		t.Errorf("Bool(server.uncompressed) = %v, %v", b, err)
	}
	if got := c.Names("ui"); !reflect.DeepEqual(got, []string{"username", "multi"}) {
		t.Errorf("Names(ui) = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[ui]\n garbage\n", "parse error at f:2: unexpected leading whitespace:  garbage"},
		{"[ui\n", "parse error at f:1: [ui"},
		{"=value\n", "parse error at f:1: =value"},
	} {
		err := New().Parse("f", []byte(tc.text))
		var pe *ParseError
		if !errors.As(err, &pe) || err.Error() != tc.want {
			t.Errorf("Parse(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestIncludeAndUnset(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "inc", "extra.rc"), "[a]\nx = from-include\ny = 2\n")
	main := write(t, filepath.Join(dir, "main.rc"), "[a]\nx = 1\n%include inc/extra.rc\n%include missing.rc\nz = 3\n%unset y\n")
	c := New()
	if err := c.ReadFile(main); err != nil {
		t.Fatal(err)
	}
	if v := c.String("a", "x", ""); v != "from-include" {
		t.Errorf("a.x = %q, want the included value", v)
	}
	if _, ok := c.Lookup("a", "y"); ok {
		t.Errorf("a.y survived %%unset")
	}
	if v := c.String("a", "z", ""); v != "3" {
		t.Errorf("a.z = %q", v)
	}
	// A file including itself is bounded, not a stack overflow.
	self := write(t, filepath.Join(dir, "self.rc"), "%include self.rc\n")
	if err := New().ReadFile(self); err == nil {
		t.Errorf("self-include: no error")
	}
}

func TestPaths(t *testing.T) {
	dir := t.TempDir()
	a := write(t, filepath.Join(dir, "a.rc"), "[s]\nv = a\n")
	write(t, filepath.Join(dir, "d", "2.rc"), "[s]\nv = d2\n")
	write(t, filepath.Join(dir, "d", "1.rc"), "[s]\nv = d1\nw = d1\n")
	write(t, filepath.Join(dir, "d", "ignored.txt"), "[s]\nv = no\n")
	env := func(m map[string]string) Env {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	got := Paths(env(map[string]string{"HGRCPATH": a + string(os.PathListSeparator) + filepath.Join(dir, "d")}))
	want := []string{a, filepath.Join(dir, "d", "1.rc"), filepath.Join(dir, "d", "2.rc")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	c, err := Load(env(map[string]string{"HGRCPATH": a + string(os.PathListSeparator) + filepath.Join(dir, "d")}))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.String("s", "v", ""); v != "d2" {
		t.Errorf("later file should win: s.v = %q", v)
	}
	if got := Paths(env(map[string]string{"HGRCPATH": ""})); len(got) != 0 {
		t.Errorf("empty HGRCPATH read %q", got)
	}
	if runtime.GOOS == "windows" {
		// mercurial/scmwindows.py userrcpath.
		got = Paths(env(map[string]string{"HOME": `C:\h`, "USERPROFILE": `C:\Users\u`}))
		want := []string{`C:\h\mercurial.ini`, `C:\h\.hgrc`, `C:\Users\u\mercurial.ini`, `C:\Users\u\.hgrc`}
		if len(got) < 4 || !reflect.DeepEqual(got[len(got)-4:], want) {
			t.Errorf("user files = %q, want %q at the end", got, want)
		}
		got = Paths(env(map[string]string{"USERPROFILE": `C:\Users\u`}))
		if len(got) < 2 || !reflect.DeepEqual(got[len(got)-2:], want[2:]) {
			t.Errorf("user files without HOME = %q, want %q at the end", got, want[2:])
		}
		return
	}
	got = Paths(env(map[string]string{"HOME": "/home/u"}))
	if got[len(got)-2] != "/home/u/.hgrc" || got[len(got)-1] != "/home/u/.config/hg/hgrc" {
		t.Errorf("user files = %q", got)
	}
	got = Paths(env(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/x"}))
	if got[len(got)-1] != "/x/hg/hgrc" {
		t.Errorf("XDG user file = %q", got)
	}
}

func TestKnown(t *testing.T) {
	c := New()
	if n, err := c.GetInt(WorkerBackgroundCloseThreads); err != nil || n <= 0 {
		t.Errorf("default threads = %d, %v", n, err)
	}
	c.Set("worker", "backgroundclosethreadcount", "x", "test")
	if _, err := c.GetInt(WorkerBackgroundCloseThreads); err == nil {
		t.Errorf("non-integer accepted")
	}
	seen := map[string]bool{}
	for _, k := range All() {
		if seen[k.Key()] {
			t.Errorf("%s declared twice", k.Key())
		}
		seen[k.Key()] = true
		if k.Doc == "" {
			t.Errorf("%s has no doc", k.Key())
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[ui]\nx = 1\n  cont\n%unset x\n"))
	f.Add([]byte("[a]\nb=c\n;c\n#d\n[e]\nf = g h \n"))
	f.Add([]byte("%include /nonexistent\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New()
		_ = c.Parse("fuzz", data)
		for _, s := range c.Sections() {
			for _, n := range c.Names(s) {
				if _, ok := c.Lookup(s, n); !ok {
					t.Fatalf("Names lists %s.%s but Lookup misses it", s, n)
				}
			}
		}
	})
}
