package hgfmt

import (
	"bytes"
	"os"
	"testing"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

func TestDate(t *testing.T) {
	for _, c := range []struct {
		t    int64
		tz   int
		want string
	}{
		{0, 0, "Thu Jan 01 00:00:00 1970 +0000"},
		{1700000000, -19800, "Wed Nov 15 03:43:20 2023 +0530"},
		{1700000000, 25200, "Tue Nov 14 15:13:20 2023 -0700"},
		{1 << 40, 0, "Tue Jan 19 03:14:07 2038 +0000"}, // clamped as hg does
	} {
		if got := Date(c.t, c.tz); got != c.want {
			t.Errorf("Date(%d, %d) = %q, want %q", c.t, c.tz, got, c.want)
		}
	}
}

// TestAgainstHg compares every level of the log block and of the index
// table with what hg prints, over a repository with branches, merges,
// tags, bookmarks, phases and hidden changesets.
func TestAgainstHg(t *testing.T) {
	dir := testenv.Generate(t, testenv.Obsolete)
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	vis, err := r.Visible()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		level Level
		flag  string
	}{{Normal, ""}, {Verbose, "-v"}, {Debug, "--debug"}} {
		var got []byte
		args := []string{"log"}
		if l.flag != "" {
			args = append(args, l.flag)
		}
		for i := len(vis) - 1; i >= 0; i-- {
			if got, err = AppendChangeset(got, r, vis[i], l.level); err != nil {
				t.Fatal(err)
			}
		}
		if want := testenv.Hg(t, dir, args...); !bytes.Equal(got, want) {
			t.Errorf("log %s:\n%s\nhg:\n%s", l.flag, got, want)
		}
	}
	for _, l := range []struct {
		verbose, debug bool
		flag           string
	}{{false, false, ""}, {true, false, "-v"}, {false, true, "--debug"}} {
		args := []string{"debugindex", "-c"}
		if l.flag != "" {
			args = append(args, l.flag)
		}
		var got bytes.Buffer
		if err := WriteIndex(&got, r.Changelog(), l.verbose, l.debug); err != nil {
			t.Fatal(err)
		}
		if want := testenv.Hg(t, dir, args...); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("debugindex -c %s:\n%s\nhg:\n%s", l.flag, got.Bytes(), want)
		}
	}
}

// TestStringEscape checks the escapes against what Python's
// codecs.escape_encode (hg's stringutil.escapestr) returns.
func TestStringEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          "plain",
		"it's":           `it\'s`,
		"a\\b\n\r\t\x01": `a\\b\n\r\t\x01`,
		"\x7f\xff\"":     `\x7f\xff"`,
	} {
		if got := StringEscape(in); got != want {
			t.Errorf("StringEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
