package exchange

import (
	"fmt"
	"sort"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/txn"
)

// Bookmarks live in .hg/bookmarks, or in the store with the
// bookmarksinstore requirement; package store reads and formats them.

// loadBookmarks reads the bookmarks file once, keeping the bookmarks on
// changesets the changelog has (bmstore drops the others, and so does
// its next write) and warning about malformed lines as hg does.
func (s *Session) loadBookmarks() error {
	if s.bookmarks != nil {
		return nil
	}
	marks, malformed, err := s.st.ReadBookmarks()
	if err != nil {
		return err
	}
	for _, line := range malformed {
		s.warn("%s", s.st.MalformedBookmarkWarning(line))
	}
	s.bookmarks = make(map[string]revlog.Node, len(marks))
	for name, n := range marks {
		if _, ok := s.cl.Rev(n); ok {
			s.bookmarks[name] = n
		}
	}
	return nil
}

func (s *Session) setBookmark(name string, n revlog.Node) {
	if old, ok := s.bookmarks[name]; ok && old == n {
		return
	}
	s.bookmarks[name] = n
	s.bmDirty = true
}

func (s *Session) deleteBookmark(name string) {
	if _, ok := s.bookmarks[name]; ok {
		delete(s.bookmarks, name)
		s.bmDirty = true
	}
}

func (s *Session) writeBookmarks() error {
	marks := make(store.Bookmarks, len(s.bookmarks))
	for name, n := range s.bookmarks {
		marks[name] = n
	}
	data, err := marks.Format()
	if err != nil {
		return err
	}
	loc := txn.Plain
	if s.st.BookmarksInStore() {
		loc = txn.Store
	}
	return s.tx.WriteFileIn(loc, "bookmarks", data)
}

// decodeHexBookmarks decodes the bookmarks pushkey namespace (name -> hex
// node) a remote listed.
func decodeHexBookmarks(keys map[string]string) (map[string]revlog.Node, error) {
	marks, err := bundle2.DecodeBookmarkKeys(keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]revlog.Node, len(marks))
	for name, n := range marks {
		out[name] = n
	}
	return out, nil
}

// isAncestor reports whether a is an ancestor of (or equal to) b.
func isAncestor(cl graph, a, b int) bool {
	if a == b {
		return true
	}
	if a > b || a < 0 {
		return false
	}
	seen := map[int]bool{b: true}
	stack := []int{b}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := cl.Entry(r)
		for _, p := range []int{e.P1, e.P2} {
			if p == a {
				return true
			}
			if p > a && !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false
}

// MergeRemoteBookmarks updates the local bookmarks from a remote's, as
// bookmarks.merging_from_remote does: a remote bookmark on a changeset
// present here is added ("adding remote bookmark X"); one that moved
// forward (the local one is its ancestor) follows ("updating bookmark X");
// one that diverged is stored as X@N, N the first free number from 1
// ("divergent bookmark X stored as X@N"; hg prefers the [paths] name of
// the source, which hgfs does not track). Bookmarks deleted remotely stay.
func (s *Session) MergeRemoteBookmarks(remote map[string]revlog.Node) error {
	defer s.guard()
	if err := s.loadBookmarks(); err != nil {
		return err
	}
	type change struct {
		name string
		node revlog.Node
		msg  string
	}
	var changes []change
	names := make([]string, 0, len(remote))
	for n := range remote {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		rn := remote[name]
		rr, ok := s.cl.Rev(rn)
		if !ok {
			continue // points to a changeset we do not have
		}
		ln, have := s.bookmarks[name]
		switch {
		case !have:
			changes = append(changes, change{name, rn, fmt.Sprintf("adding remote bookmark %s\n", name)})
		case ln == rn:
		default:
			lr, lok := s.cl.Rev(ln)
			if lok && isAncestor(s.cl, lr, rr) {
				changes = append(changes, change{name, rn, fmt.Sprintf("updating bookmark %s\n", name)})
			} else if lok && isAncestor(s.cl, rr, lr) {
				// The local bookmark is ahead: nothing to do.
			} else {
				div := ""
				for i := 1; i < 100; i++ {
					cand := fmt.Sprintf("%s@%d", name, i)
					if cur, ok := s.bookmarks[cand]; !ok || cur == rn {
						div = cand
						break
					}
				}
				if div == "" {
					s.status("cannot add divergent bookmark %s: too many divergent bookmarks\n", name)
					continue
				}
				changes = append(changes, change{div, rn, fmt.Sprintf("divergent bookmark %s stored as %s\n", name, div)})
			}
		}
	}
	for _, c := range changes {
		if s.quietBookmarks {
			s.debug("%s", c.msg)
		} else {
			s.status("%s", c.msg)
		}
		s.setBookmark(c.name, c.node)
	}
	return nil
}
