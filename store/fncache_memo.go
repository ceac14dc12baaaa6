package store

// Parsed fncaches, kept between walks. A server opens the repository
// afresh for every request, and a stream clone of a 20,000-file store
// spent ~15 ms of its ~100 ms parsing, sorting and encoding the same
// fncache each time. The memo is keyed by the file's whole content (and
// the layout, which decides the encoding): a walk still reads the file,
// and reuses the parse only when every byte is equal, so a changed
// fncache is never answered from the memo, whatever its timestamps say.
// Small fncaches parse faster than they compare and are not kept.

import (
	"bytes"
	"io/fs"
	"sync"
)

const (
	// memoMinFncache is the smallest fncache kept (bytes).
	memoMinFncache = 64 << 10
	// memoFncaches is how many distinct fncaches are kept: a server
	// serves one repository, a test or a bench a few.
	memoFncaches = 2
)

// parsedFncache is one fncache's parse. Its slices are shared by every
// walk that finds it: read only.
type parsedFncache struct {
	data    []byte
	layout  Layout
	entries []string // ParseFncache(data)
	paths   []string // layout.Encode of each entry
}

var fncacheMemo struct {
	sync.Mutex
	recent []*parsedFncache // most recently used first
}

// fncachePaths returns the fncache's entries and their on-disk paths.
// The slices may be shared with other walks: read only.
func (s *Store) fncachePaths() (entries, paths []string, err error) {
	data, err := fs.ReadFile(s.fsys, "fncache")
	if err != nil {
		entries, err = parseFncacheFile(nil, err, s.errPath("fncache"))
		return entries, nil, err
	}
	if p := lookupFncache(data, s.Layout); p != nil {
		return p.entries, p.paths, nil
	}
	if entries, err = parseFncacheFile(data, nil, s.errPath("fncache")); err != nil {
		return nil, nil, err
	}
	paths = make([]string, len(entries))
	for i, e := range entries {
		paths[i] = s.Encode(e)
	}
	if len(data) >= memoMinFncache {
		rememberFncache(&parsedFncache{data: data, layout: s.Layout, entries: entries, paths: paths})
	}
	return entries, paths, nil
}

func lookupFncache(data []byte, layout Layout) *parsedFncache {
	if len(data) < memoMinFncache {
		return nil
	}
	fncacheMemo.Lock()
	defer fncacheMemo.Unlock()
	for i, p := range fncacheMemo.recent {
		if p.layout == layout && bytes.Equal(p.data, data) {
			copy(fncacheMemo.recent[1:i+1], fncacheMemo.recent[:i])
			fncacheMemo.recent[0] = p
			return p
		}
	}
	return nil
}

func rememberFncache(p *parsedFncache) {
	fncacheMemo.Lock()
	defer fncacheMemo.Unlock()
	if len(fncacheMemo.recent) < memoFncaches {
		fncacheMemo.recent = append(fncacheMemo.recent, nil)
	}
	copy(fncacheMemo.recent[1:], fncacheMemo.recent)
	fncacheMemo.recent[0] = p
}
