package revlog

// Changeset text (changelog revision), as mercurial/changelog.py
// changelogrevision parses it:
//
//	<manifest node, 40 hex>\n
//	<user>\n
//	<time> <tz>[ <extra>]\n      time: seconds (int or float), tz: seconds west of UTC
//	<file>\n ...                 files touched, possibly none
//	\n
//	<description>
//
// extra is "key:value" pairs separated by NUL, each escaped with
// changelog._string_escape. Keep in sync with mercurial/changelog.py.

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Changeset is a parsed changelog revision.
type Changeset struct {
	Manifest    Node
	User        string
	Time        int64  // seconds since epoch (hg also allows float; keep the text too)
	TZ          int    // seconds WEST of UTC, as hg stores it
	DateText    string // the date field as stored, e.g. "1700000000 0"
	Extra       map[string]string
	Files       []string
	Description string
}

// Branch returns the changeset's branch: extra["branch"] or "default".
func (c *Changeset) Branch() string {
	if b, ok := c.Extra["branch"]; ok {
		return b
	}
	return "default"
}

func changesetError(format string, args ...any) error {
	return fmt.Errorf("%w: changeset: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// ParseChangeset parses a changelog revision's raw text. The empty text
// (the null revision) gives the null manifest and the default branch.
func ParseChangeset(text []byte) (*Changeset, error) {
	if len(text) == 0 {
		return &Changeset{Extra: map[string]string{"branch": "default"}}, nil
	}
	nl1 := bytes.IndexByte(text, '\n')
	if nl1 < 0 {
		return nil, changesetError("no newline after the manifest node")
	}
	nl2 := indexFrom(text, nl1+1, "\n")
	if nl2 < 0 {
		return nil, changesetError("no newline after the user")
	}
	nl3 := indexFrom(text, nl2+1, "\n")
	if nl3 < 0 {
		return nil, changesetError("no newline after the date")
	}
	doublenl := nl3
	if !(nl3+1 < len(text) && text[nl3+1] == '\n') {
		doublenl = indexFrom(text, nl3+1, "\n\n")
		if doublenl < 0 {
			return nil, changesetError("no blank line before the description")
		}
	}
	c := &Changeset{}
	var err error
	if c.Manifest, err = ParseNode(string(text[:nl1])); err != nil {
		return nil, changesetError("manifest: %v", err)
	}
	// Each field is a string of its own (the date, the extra values, the
	// file names and the description share only their own line or
	// block): a caller keeping a changeset's branch or a file name keeps
	// no more of the text.
	c.User = string(text[nl1+1 : nl2])
	dateExtra := string(text[nl2+1 : nl3])
	timeText, rest, ok := strings.Cut(dateExtra, " ")
	if !ok {
		return nil, changesetError("date %q has no timezone", dateExtra)
	}
	tzText, extra, hasExtra := strings.Cut(rest, " ")
	c.DateText = dateExtra[:len(timeText)+1+len(tzText)]
	t, err := strconv.ParseFloat(timeText, 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || math.Abs(t) > 1<<62 {
		return nil, changesetError("invalid time %q", timeText)
	}
	c.Time = int64(t)
	// "Various tools did silly things with the timezone": hg uses 0.
	if tz, err := strconv.Atoi(tzText); err == nil {
		c.TZ = tz
	}
	c.Extra = map[string]string{"branch": "default"}
	if hasExtra {
		if err := decodeExtra(extra, c.Extra); err != nil {
			return nil, err
		}
	}
	if doublenl > nl3 {
		c.Files = strings.Split(string(text[nl3+1:doublenl]), "\n")
	}
	if doublenl+2 <= len(text) {
		c.Description = string(text[doublenl+2:])
	}
	return c, nil
}

func indexFrom(b []byte, from int, sep string) int {
	if from > len(b) {
		return -1
	}
	i := bytes.Index(b[from:], []byte(sep))
	if i < 0 {
		return -1
	}
	return from + i
}

// decodeExtra parses the extra field into m (changelog.decodeextra).
func decodeExtra(s string, m map[string]string) error {
	for _, item := range strings.Split(s, "\x00") {
		if item == "" {
			continue
		}
		u, err := unescapeExtra(item)
		if err != nil {
			return changesetError("extra %q: %v", item, err)
		}
		k, v, ok := strings.Cut(u, ":")
		if !ok {
			return changesetError("extra %q has no ':'", item)
		}
		m[k] = v
	}
	return nil
}

// unescapeExtra is changelog._string_unescape: "\0" escapes are fixed up
// first (so that "\\0" stays a backslash and a 0), then Python's
// codecs.escape_decode runs.
func unescapeExtra(s string) (string, error) {
	if strings.Contains(s, `\0`) {
		s = strings.ReplaceAll(s, `\\`, "\\\\\n")
		s = strings.ReplaceAll(s, `\0`, "\x00")
		s = strings.ReplaceAll(s, "\n", "")
	}
	return EscapeDecode(s)
}

// EscapeDecode mirrors Python's codecs.escape_decode on bytes (also
// hg's parser.unescapestr for revset and template strings).
func EscapeDecode(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf(`trailing \ in string`)
		}
		switch c = s[i]; c {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case 'a':
			b.WriteByte('\a')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			b.WriteByte(byte(v)) // Python keeps the low 8 bits of \400-\777
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf(`invalid \x escape at position %d`, i-1)
			}
			h1, ok1 := hexVal(s[i+1])
			h2, ok2 := hexVal(s[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf(`invalid \x escape at position %d`, i-1)
			}
			b.WriteByte(h1<<4 | h2)
			i += 2
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
