package hgview

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// snapshot is the repository as it was when its changelog was opened: a
// repo.Repo, which computes names, phases and hidden changesets on first
// use. A newer snapshot replaces it when the changelog or a names file
// changes; readers holding an old one keep a consistent (older) view,
// since revlogs only grow.
type snapshot struct {
	r   *repo.Repo
	key stateKey

	refs    int  // uses in progress (View.mu)
	retired bool // replaced by a newer snapshot: close when refs drops to 0

	textMu sync.Mutex
	texts  map[string][]byte
}

// stateKey is what makes a snapshot stale: the sizes and times of the
// files it was computed from. Revlogs are append-only, so a size change
// is every change a commit or pull makes to the changelog.
type stateKey struct {
	cl, bookmarks, localtags, active, phases, obsstore, dirstate fileKey
	// storeBookmarks is the store's bookmarks file (bookmarksinstore).
	storeBookmarks fileKey
}

type fileKey struct {
	size  int64
	mtime int64
	ok    bool
}

func statKey(fsys fs.FS, name string) fileKey {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return fileKey{}
	}
	return fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}
}

func currentKey(hg, st fs.FS) stateKey {
	return stateKey{
		cl:        statKey(st, "00changelog.i"),
		bookmarks: statKey(hg, "bookmarks"),
		localtags: statKey(hg, "localtags"),
		active:    statKey(hg, "bookmarks.current"),
		phases:    statKey(st, "phaseroots"),
		obsstore:  statKey(st, "obsstore"),
		dirstate:  statKey(hg, "dirstate"),

		storeBookmarks: statKey(st, "bookmarks"),
	}
}

// openStore checks that hg holds a repository the view can show.
func openStore(hg fs.FS) (*store.Store, error) {
	// Every repository hg has made since 0.9 has a requires file; without
	// one this is no repository (yet: an empty cache before a clone).
	if _, err := fs.Stat(hg, "requires"); err != nil {
		return nil, fmt.Errorf("not a repository: %w", err)
	}
	st, err := store.OpenFS(hg)
	if errors.Is(err, store.ErrShared) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return st, err
}

func openSnapshot(hg fs.FS, key stateKey) (*snapshot, error) {
	r, err := repo.OpenFS(hg)
	if errors.Is(err, store.ErrShared) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err != nil {
		return nil, err
	}
	return &snapshot{r: r, key: key}, nil
}

func (s *snapshot) close() { s.r.Close() }

func (s *snapshot) rev(n revlog.Node) (int, bool) {
	rev, ok := s.r.Changelog().Rev(n)
	return rev, ok && rev >= 0 && rev < s.r.Changelog().Len()
}

// lookup resolves a symbol as `hg log -r` does on the visible repository
// (repo.Lookup), except ".": a view has no working directory. Hidden
// changesets are unknown, as without --hidden.
func (s *snapshot) lookup(symbol string) (int, error) {
	switch symbol {
	case "", ".", "..":
		return 0, &repo.LookupError{Symbol: symbol, Err: ErrUnknownRevision}
	}
	rev, err := s.r.Lookup(symbol)
	if errors.Is(err, repo.ErrHidden) {
		return 0, &repo.LookupError{Symbol: symbol, Err: ErrUnknownRevision}
	}
	return rev, err
}
