package store

// The bookmarks file: .hg/bookmarks, or the store's bookmarks file with
// the bookmarksinstore requirement (bookmarks.bookmarksvfs). Format
// (bookmarks.bmstore): one "<hex node> <name>\n" line per bookmark,
// written sorted by name (bmstore._write). Reading (bmstore.__init__)
// strips each line of ASCII whitespace, skips empty lines, splits at the
// first space, and reads the node with binascii.unhexlify (either case);
// a line without a space or whose node is not 20 bytes of hex is
// "malformed" (hg warns and skips it). Bookmarks on nodes the changelog
// lacks are dropped silently: that filter is the caller's, who has the
// changelog. Keep in sync with mercurial/bookmarks.py.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Bookmarks maps bookmark names to changeset nodes.
type Bookmarks map[string][20]byte

// BookmarksFile is the bookmarks file's path relative to .hg, slash
// separated, for a repository with requirements req: "bookmarks", or
// "store/bookmarks" with bookmarksinstore ("bookmarks" again for a
// store-less layout, whose store is .hg).
func BookmarksFile(req Requirements) string {
	if req.Has(ReqBookmarksInStore) && LayoutFor(req) != LayoutBasic {
		return "store/bookmarks"
	}
	return "bookmarks"
}

// ParseBookmarks reads a bookmarks file as bmstore does. malformed lists
// the lines hg warns about ("malformed line in .hg/bookmarks: 'line'"),
// stripped, in file order. Later lines win over earlier ones.
func ParseBookmarks(data []byte) (marks Bookmarks, malformed []string) {
	marks = Bookmarks{}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.Trim(line, " \t\n\r\v\f")
		if len(line) == 0 {
			continue
		}
		sha, name, ok := bytes.Cut(line, []byte{' '})
		var node [20]byte
		if !ok || hex.DecodedLen(len(sha)) != len(node) || len(sha)%2 != 0 {
			malformed = append(malformed, string(line))
			continue
		}
		if _, err := hex.Decode(node[:], sha); err != nil {
			malformed = append(malformed, string(line))
			continue
		}
		marks[string(name)] = node
	}
	return marks, malformed
}

// ValidBookmarkName reports whether a name from a server or a bundle may
// be written to the bookmarks file: not empty, no line break (which would
// forge a line) and no NUL.
func ValidBookmarkName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "\n\r\x00")
}

// Format renders the bookmarks as bmstore._write does: "<hex node>
// <name>\n" lines sorted by name. A name ValidBookmarkName refuses is an
// error.
func (b Bookmarks) Format() ([]byte, error) {
	names := make([]string, 0, len(b))
	for n := range b {
		if !ValidBookmarkName(n) {
			return nil, fmt.Errorf("invalid bookmark name %q", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, n := range names {
		node := b[n]
		out.WriteString(hex.EncodeToString(node[:]))
		out.WriteByte(' ')
		out.WriteString(n)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// BookmarksDisplayPath is how hg names the bookmarks file in messages:
// ".hg/bookmarks" or ".hg/store/bookmarks".
func (s *Store) BookmarksDisplayPath() string {
	if s.Requirements.Has(ReqBookmarksInStore) {
		return ".hg/store/bookmarks"
	}
	return ".hg/bookmarks"
}

// MalformedBookmarkWarning is hg's warning for a line ParseBookmarks
// found malformed: "malformed line in .hg/bookmarks: 'line'\n", the line
// as Python's repr shows bytes.
func (s *Store) MalformedBookmarkWarning(line string) string {
	return fmt.Sprintf("malformed line in %s: %s\n", s.BookmarksDisplayPath(), PyRepr(line))
}

// PyRepr is Python's repr of a bytes value without its b prefix (hg's
// "%r" % pycompat.bytestr(line)).
func PyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// BookmarksInStore reports whether the bookmarks file is the store's
// (location "" in a transaction) rather than .hg's ("plain").
func (s *Store) BookmarksInStore() bool { return s.Requirements.Has(ReqBookmarksInStore) }

// ReadBookmarks reads the repository's bookmarks file (a missing one has
// no bookmarks) and parses it with ParseBookmarks.
func (s *Store) ReadBookmarks() (marks Bookmarks, malformed []string, err error) {
	var data []byte
	if s.BookmarksInStore() {
		data, err = fs.ReadFile(s.fsys, "bookmarks")
	} else {
		data, err = fs.ReadFile(s.hgFS, "bookmarks")
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	marks, malformed = ParseBookmarks(data)
	return marks, malformed, nil
}
