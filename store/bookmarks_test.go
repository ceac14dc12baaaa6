package store

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestParseBookmarksAsHg writes a bookmarks file of awkward lines into a
// real repository and compares what ParseBookmarks keeps (and calls
// malformed) with what hg bookmarks lists (and warns about).
func TestParseBookmarksAsHg(t *testing.T) {
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			dir := t.TempDir()
			hg.Run(t, dir, "init", "r")
			r := filepath.Join(dir, "r")
			os.WriteFile(filepath.Join(r, "f"), []byte("x\n"), 0o644)
			hg.Run(t, r, "commit", "-qAm", "x")
			node := strings.TrimSpace(string(hg.Run(t, r, "log", "-r", "0", "-T", "{node}")))
			unknown := strings.Repeat("ab", 20)
			content := strings.Join([]string{
				node + " plain",
				strings.ToUpper(node) + " upper",
				"  " + node + " leading spaces\r",
				node + "  two spaces ",
				node + "\tnot a space",
				node[:39] + " odd",
				node + "ab long",
				"zz" + node[2:] + " nonhex",
				"justonefield",
				"",
				"\t",
				unknown + " unknown node",
				node + " dup",
				node + " dup",
				node + " last line without newline",
				"quote's \x01\x7f\xff and \\ " + node,
			}, "\n")
			if err := os.WriteFile(filepath.Join(r, ".hg", "bookmarks"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := hg.Result(t, r, "bookmarks", "-T", "{bookmark}|{node}\n")
			if err != nil {
				t.Fatal(err)
			}
			marks, malformed := ParseBookmarks([]byte(content))
			var got []string
			for name, n := range marks {
				if h := hex.EncodeToString(n[:]); h != unknown {
					got = append(got, name+"|"+h)
				}
			}
			sort.Strings(got)
			if w, g := string(out), strings.Join(got, "\n")+"\n"; w != g {
				t.Errorf("bookmarks:\n%s", testenv.Diff("hg", w, "ParseBookmarks", g))
			}
			st, err := Open(r)
			if err != nil {
				t.Fatal(err)
			}
			var warned strings.Builder
			for _, m := range malformed {
				warned.WriteString(st.MalformedBookmarkWarning(m))
			}
			if w, g := string(errOut), warned.String(); w != g {
				t.Errorf("malformed lines:\n%s", testenv.Diff("hg", w, "ParseBookmarks", g))
			}
		})
	}
}

func TestFormatBookmarks(t *testing.T) {
	var a, b [20]byte
	a[0], b[19] = 0xab, 0x01
	got, err := Bookmarks{"zeta": a, "alpha": b, "with space": a}.Format()
	if err != nil {
		t.Fatal(err)
	}
	want := "0000000000000000000000000000000000000001 alpha\n" +
		"ab00000000000000000000000000000000000000 with space\n" +
		"ab00000000000000000000000000000000000000 zeta\n"
	if string(got) != want {
		t.Errorf("Format:\n%s", testenv.Diff("want", want, "got", string(got)))
	}
	for _, bad := range []string{"", "a\nb", "a\rb", "a\x00"} {
		if _, err := (Bookmarks{bad: a}).Format(); err == nil {
			t.Errorf("Format accepted %q", bad)
		}
	}
	if data, err := (Bookmarks{}).Format(); err != nil || len(data) != 0 {
		t.Errorf("no bookmarks: %q %v", data, err)
	}
	if BookmarksFile(NewRequirements("store", "bookmarksinstore")) != "store/bookmarks" ||
		BookmarksFile(NewRequirements("store")) != "bookmarks" {
		t.Error("BookmarksFile")
	}
}

// FuzzParseBookmarks checks that any file parses without panicking and
// that what Format writes reads back the same.
func FuzzParseBookmarks(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567 name\n"))
	f.Add([]byte("  0123456789ABCDEF0123456789abcdef01234567  x y \r\nbad\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		marks, _ := ParseBookmarks(data)
		for name := range marks {
			if !ValidBookmarkName(name) {
				delete(marks, name)
			}
		}
		out, err := marks.Format()
		if err != nil {
			t.Fatal(err)
		}
		again, malformed := ParseBookmarks(out)
		if len(malformed) > 0 || len(again) != len(marks) {
			t.Fatalf("round trip: %q -> %q (%q)", data, out, malformed)
		}
		for name, n := range marks {
			if again[name] != n {
				t.Fatalf("round trip of %q", name)
			}
		}
	})
}
