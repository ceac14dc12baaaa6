package hgview

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/revlog"
)

// text returns a generated root file of this snapshot, computed once.
func (s *snapshot) text(name string) ([]byte, error) {
	s.textMu.Lock()
	defer s.textMu.Unlock()
	if b, ok := s.texts[name]; ok {
		return b, nil
	}
	var b []byte
	var err error
	switch name {
	case "log":
		b, err = s.formatLog()
	case "heads":
		b, err = s.formatHeads()
	case "tags":
		b, err = s.formatTags()
	case "bookmarks":
		b, err = s.formatBookmarks()
	case "branches":
		b, err = s.formatBranches()
	default:
		return nil, fmt.Errorf("hgview: no text file %q", name)
	}
	if err != nil {
		return nil, err
	}
	if s.texts == nil {
		s.texts = map[string][]byte{}
	}
	s.texts[name] = b
	return b, nil
}

// formatLog is `hg log` (default template, every visible changeset,
// newest first).
func (s *snapshot) formatLog() ([]byte, error) {
	vis, err := s.r.Visible()
	if err != nil {
		return nil, err
	}
	var b []byte
	for i := len(vis) - 1; i >= 0; i-- {
		if b, err = hgfmt.AppendChangeset(b, s.r, vis[i], hgfmt.Normal); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// formatHeads is `hg heads`: the open heads of every branch, newest
// first, in log format.
func (s *snapshot) formatHeads() ([]byte, error) {
	branches, err := s.r.Branches()
	if err != nil {
		return nil, err
	}
	var revs []int
	for _, br := range branches {
		for i, h := range br.Heads {
			if !br.Closed[i] {
				revs = append(revs, h)
			}
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(revs)))
	var b []byte
	for _, rev := range revs {
		if b, err = hgfmt.AppendChangeset(b, s.r, rev, hgfmt.Normal); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// colwidth approximates mercurial/encoding.py colwidth for UTF-8 names
// (one column per character; East Asian wide characters are not
// distinguished).
func colwidth(s string) int { return utf8.RuneCountInString(s) }

func pad(n int) string { return strings.Repeat(" ", max(n, 0)) }

// formatTags is `hg tags`: tags by revision, newest first (ties by name,
// descending, as reversed(repo.tagslist())).
func (s *snapshot) formatTags() ([]byte, error) {
	all, err := s.r.Tags()
	if err != nil {
		return nil, err
	}
	type tag struct {
		rev  int
		name string
		node revlog.Node
	}
	var tags []tag
	for name, node := range all {
		rev, ok := s.rev(node)
		if !ok {
			rev = revlog.NullRev
		}
		tags = append(tags, tag{rev, name, node})
	}
	sort.Slice(tags, func(i, j int) bool {
		if tags[i].rev != tags[j].rev {
			return tags[i].rev > tags[j].rev
		}
		return tags[i].name > tags[j].name
	})
	var b []byte
	for _, t := range tags {
		b = fmt.Appendf(b, "%s%s %5d:%s\n", t.name, pad(30-colwidth(t.name)), t.rev, t.node.Short())
	}
	return b, nil
}

// formatBookmarks is `hg bookmarks`.
func (s *snapshot) formatBookmarks() ([]byte, error) {
	bookmarks, err := s.r.Bookmarks()
	if err != nil {
		return nil, err
	}
	active, err := s.r.ActiveBookmark()
	if err != nil {
		return nil, err
	}
	if len(bookmarks) == 0 {
		return []byte("no bookmarks set\n"), nil
	}
	names := make([]string, 0, len(bookmarks))
	for name := range bookmarks {
		names = append(names, name)
	}
	sort.Strings(names)
	var b []byte
	for _, name := range names {
		node := bookmarks[name]
		rev, _ := s.rev(node)
		prefix := " "
		if name == active {
			prefix = "*"
		}
		b = fmt.Appendf(b, " %s %s%s %d:%s\n", prefix, name, pad(25-colwidth(name)), rev, node.Short())
	}
	return b, nil
}

// formatBranches is `hg branches`: open branches, active ones (with a
// head that is a repository head) first, then by tip revision, newest
// first; closed branches are left out as hg does without --closed.
func (s *snapshot) formatBranches() ([]byte, error) {
	heads, err := s.r.Heads()
	if err != nil {
		return nil, err
	}
	branches, err := s.r.Branches()
	if err != nil {
		return nil, err
	}
	isHead := map[int]bool{}
	for _, h := range heads {
		isHead[h] = true
	}
	type branch struct {
		name   string
		tip    int
		active bool
	}
	var list []branch
	for _, br := range branches {
		if br.AllClosed() {
			continue
		}
		active := false
		for i, h := range br.Heads {
			if !br.Closed[i] && isHead[h] {
				active = true
			}
		}
		list = append(list, branch{br.Name, br.Tip, active})
	}
	// hg sorts by (active, tip rev, name, open), all descending.
	sort.Slice(list, func(i, j int) bool {
		a, c := list[i], list[j]
		if a.active != c.active {
			return a.active
		}
		if a.tip != c.tip {
			return a.tip > c.tip
		}
		return a.name > c.name
	})
	var b []byte
	for _, br := range list {
		notice := ""
		if !br.active {
			notice = " (inactive)"
		}
		rs := fmt.Sprint(br.tip)
		b = fmt.Appendf(b, "%s%s %s:%s%s\n", br.name, pad(31-len(rs)-colwidth(br.name)), rs, s.r.Node(br.tip).Short(), notice)
	}
	return b, nil
}
