package revlog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const sampleChangeset = "0123456789abcdef0123456789abcdef01234567\n" +
	"Some One <one@example.com>\n" +
	"1700000000.5 -3600 branch:stable\x00close:1\x00note:a\\nb\\\\c\\0d\n" +
	"a.txt\n" +
	"dir/b.txt\n" +
	"\n" +
	"summary\n\nbody"

func TestParseChangeset(t *testing.T) {
	c, err := ParseChangeset([]byte(sampleChangeset))
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest.String() != "0123456789abcdef0123456789abcdef01234567" || c.User != "Some One <one@example.com>" {
		t.Errorf("manifest/user: %s %q", c.Manifest, c.User)
	}
	if c.Time != 1700000000 || c.TZ != -3600 || c.DateText != "1700000000.5 -3600" {
		t.Errorf("date: %d %d %q", c.Time, c.TZ, c.DateText)
	}
	if c.Branch() != "stable" || c.Extra["close"] != "1" || c.Extra["note"] != "a\nb\\c\x00d" {
		t.Errorf("extra: %q", c.Extra)
	}
	if !slices.Equal(c.Files, []string{"a.txt", "dir/b.txt"}) || c.Description != "summary\n\nbody" {
		t.Errorf("files %q desc %q", c.Files, c.Description)
	}

	// No files, no extra, bad timezone (hg uses 0), empty description.
	c, err = ParseChangeset([]byte("0000000000000000000000000000000000000000\nu\n12 junk\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Files != nil || c.TZ != 0 || c.Branch() != "default" || c.Description != "" || c.Time != 12 {
		t.Errorf("minimal: %+v", c)
	}
	// The null revision's empty text.
	c, err = ParseChangeset(nil)
	if err != nil || !c.Manifest.IsNull() || c.Branch() != "default" {
		t.Errorf("empty: %+v %v", c, err)
	}
}

func TestParseChangesetErrors(t *testing.T) {
	for _, s := range []string{
		"0123",
		"0123456789abcdef0123456789abcdef01234567\nuser",
		"0123456789abcdef0123456789abcdef01234567\nuser\n0 0",
		"0123456789abcdef0123456789abcdef01234567\nuser\n0 0\nfile-without-blank-line\n",
		"nothex\nuser\n0 0\n\n",
		"0123456789abcdef0123456789abcdef01234567\nuser\nnotatime 0\n\n",
		"0123456789abcdef0123456789abcdef01234567\nuser\n1700000000\n\n",
		"0123456789abcdef0123456789abcdef01234567\nuser\n0 0 nocolon\n\n",
		"0123456789abcdef0123456789abcdef01234567\nuser\n0 0 k:trailing\\\n\n",
		"0123456789abcdef0123456789abcdef01234567\nuser\n0 0 k:\\x4\n\n",
	} {
		if _, err := ParseChangeset([]byte(s)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// TestUnescapeExtra follows the doctests of changelog.py's
// _string_escape/decodeextra.
func TestUnescapeExtra(t *testing.T) {
	for in, want := range map[string]string{
		`ab\ncd\\\\n\x0012ab\rcd\\\n`: "ab\ncd\\\\n\x0012ab\rcd\\\n",
		`baz:\x002`:                   "baz:\x002",
		`baz:\\\x002`:                 "baz:\\\x002",
		`a\0b`:                        "a\x00b",
		`a\\0b`:                       `a\0b`,
		`\\\0`:                        "\\\x00",
		`\101\x41\q`:                  `AA\q`,
		"line\\\ncont":                "linecont",
	} {
		got, err := unescapeExtra(in)
		if err != nil || got != want {
			t.Errorf("unescape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func FuzzChangeset(f *testing.F) {
	f.Add([]byte(sampleChangeset))
	f.Add([]byte("0000000000000000000000000000000000000000\nu\n0 0\n\n"))
	f.Add([]byte("0000000000000000000000000000000000000000\nu\n0 0 a:\\0\\\\0\\x\n\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := ParseChangeset(text)
		if err != nil || len(text) == 0 {
			return
		}
		if c.Extra == nil {
			t.Fatal("nil Extra")
		}
		// Each field is its part of the text: the lines as hg's
		// changelogrevision finds them, the files up to the blank line,
		// the description after it.
		lines := strings.SplitN(string(text), "\n", 4)
		if c.User != lines[1] {
			t.Fatalf("user %q, line %q", c.User, lines[1])
		}
		if !strings.HasPrefix(lines[2], c.DateText) || strings.Count(c.DateText, " ") != 1 ||
			len(lines[2]) > len(c.DateText) && lines[2][len(c.DateText)] != ' ' {
			t.Fatalf("date %q, line %q", c.DateText, lines[2])
		}
		head, desc, _ := strings.Cut(lines[3], "\n\n")
		if !strings.HasPrefix(lines[3], "\n") {
			if got := strings.Join(c.Files, "\n"); got != head {
				t.Fatalf("files %q, text %q", got, head)
			}
			if c.Description != desc {
				t.Fatalf("description %q, text %q", c.Description, desc)
			}
		} else if len(c.Files) != 0 || c.Description != lines[3][1:] {
			t.Fatalf("files %q and description %q, text %q", c.Files, c.Description, lines[3])
		}
	})
}
