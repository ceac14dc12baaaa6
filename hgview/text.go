package hgview

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hgfs/hgfs/revlog"
)

// text returns a generated root file of this snapshot, computed once.
func (s *snapshot) text(name string) ([]byte, error) {
	s.textMu.Lock()
	defer s.textMu.Unlock()
	if b, ok := s.texts[name]; ok {
		return b, nil
	}
	nm, err := s.getNames()
	if err != nil {
		return nil, err
	}
	var b []byte
	switch name {
	case "log":
		b, err = s.formatLog(nm)
	case "heads":
		b, err = s.formatHeads(nm)
	case "tags":
		b = s.formatTags(nm)
	case "bookmarks":
		b = s.formatBookmarks(nm)
	case "branches":
		b = s.formatBranches(nm)
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
func (s *snapshot) formatLog(nm *names) ([]byte, error) {
	var b []byte
	var err error
	for rev := s.cl.Len() - 1; rev >= 0; rev-- {
		if nm.hidden[rev] {
			continue
		}
		if b, err = s.appendChangeset(b, nm, rev); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// formatHeads is `hg heads`: the open heads of every branch, newest
// first, in log format.
func (s *snapshot) formatHeads(nm *names) ([]byte, error) {
	var revs []int
	for _, br := range nm.branches {
		for i, h := range br.heads {
			if !br.closed[i] {
				revs = append(revs, h)
			}
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(revs)))
	var b []byte
	var err error
	for _, rev := range revs {
		if b, err = s.appendChangeset(b, nm, rev); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendChangeset formats rev as mercurial/templates/map-cmdline.default's
// "changeset" template (hg log without -v or --debug).
func (s *snapshot) appendChangeset(b []byte, nm *names, rev int) ([]byte, error) {
	cs, err := s.changeset(rev)
	if err != nil {
		return nil, err
	}
	node := s.node(rev)
	b = fmt.Appendf(b, "changeset:   %d:%s\n", rev, node.Short())
	if br := cs.Branch(); br != "default" {
		b = fmt.Appendf(b, "branch:      %s\n", br)
	}
	for _, bm := range nm.nodeBms[node] {
		b = fmt.Appendf(b, "bookmark:    %s\n", bm)
	}
	for _, t := range nm.nodeTags[node] {
		b = fmt.Appendf(b, "tag:         %s\n", t)
	}
	e := s.cl.Entry(rev)
	// Parents are shown unless the only one is the previous revision.
	if e.P2 != revlog.NullRev {
		b = fmt.Appendf(b, "parent:      %d:%s\n", e.P1, s.node(e.P1).Short())
		b = fmt.Appendf(b, "parent:      %d:%s\n", e.P2, s.node(e.P2).Short())
	} else if e.P1 < rev-1 {
		b = fmt.Appendf(b, "parent:      %d:%s\n", e.P1, s.node(e.P1).Short())
	}
	b = fmt.Appendf(b, "user:        %s\n", cs.User)
	b = fmt.Appendf(b, "date:        %s\n", hgDate(cs.Time, cs.TZ))
	if strings.Trim(cs.Description, " \t\n\r\v\f") != "" {
		b = fmt.Appendf(b, "summary:     %s\n", firstLine(cs.Description))
	}
	return append(b, '\n'), nil
}

// hgDate is mercurial/utils/dateutil.py datestr's default format; tz is
// seconds west of UTC.
func hgDate(t int64, tz int) string {
	sign := byte('+')
	if tz > 0 {
		sign = '-'
	}
	minutes := tz / 60
	if minutes < 0 {
		minutes = -minutes
	}
	d := min(max(t-int64(tz), -0x80000000), 0x7FFFFFFF)
	return time.Unix(d, 0).UTC().Format("Mon Jan 02 15:04:05 2006") + fmt.Sprintf(" %c%02d%02d", sign, minutes/60, minutes%60)
}

// firstLine is hg's firstline filter.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// colwidth approximates mercurial/encoding.py colwidth for UTF-8 names
// (one column per character; East Asian wide characters are not
// distinguished).
func colwidth(s string) int { return utf8.RuneCountInString(s) }

func pad(n int) string { return strings.Repeat(" ", max(n, 0)) }

// formatTags is `hg tags`: tags by revision, newest first (ties by name,
// descending, as reversed(repo.tagslist())).
func (s *snapshot) formatTags(nm *names) []byte {
	type tag struct {
		rev  int
		name string
		node revlog.Node
	}
	var tags []tag
	for name, node := range nm.tags {
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
	return b
}

// formatBookmarks is `hg bookmarks`.
func (s *snapshot) formatBookmarks(nm *names) []byte {
	if len(nm.bookmarks) == 0 {
		return []byte("no bookmarks set\n")
	}
	names := make([]string, 0, len(nm.bookmarks))
	for name := range nm.bookmarks {
		names = append(names, name)
	}
	sort.Strings(names)
	var b []byte
	for _, name := range names {
		node := nm.bookmarks[name]
		rev, _ := s.rev(node)
		prefix := " "
		if name == nm.active {
			prefix = "*"
		}
		b = fmt.Appendf(b, " %s %s%s %d:%s\n", prefix, name, pad(25-colwidth(name)), rev, node.Short())
	}
	return b
}

// formatBranches is `hg branches`: open branches, active ones (with a
// head that is a repository head) first, then by tip revision, newest
// first; closed branches are left out as hg does without --closed.
func (s *snapshot) formatBranches(nm *names) []byte {
	isHead := map[int]bool{}
	for _, h := range nm.heads {
		isHead[h] = true
	}
	type branch struct {
		name   string
		tip    int
		active bool
	}
	var list []branch
	for _, br := range nm.branches {
		if br.allClosed() {
			continue
		}
		active := false
		for i, h := range br.heads {
			if !br.closed[i] && isHead[h] {
				active = true
			}
		}
		list = append(list, branch{br.name, br.tip, active})
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
		b = fmt.Appendf(b, "%s%s %s:%s%s\n", br.name, pad(31-len(rs)-colwidth(br.name)), rs, s.node(br.tip).Short(), notice)
	}
	return b
}
