package store

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"

	"github.com/hgfs/hgfs/internal/sysio"
)

// Layout is how a repository stores its revlogs, decided by requirements
// (localrepo.py makestore).
type Layout int

const (
	// LayoutBasic: no "store" requirement; revlogs live directly under .hg
	// with EncodeDir names (store.py basicstore).
	LayoutBasic Layout = iota
	// LayoutEncoded: "store" without "fncache"; .hg/store with the
	// reversible EncodeFilename names (store.py encodedstore).
	LayoutEncoded
	// LayoutFncache: "store" and "fncache" without "dotencode";
	// HybridEncode(name, false) names listed in .hg/store/fncache.
	LayoutFncache
	// LayoutDotencode: "store", "fncache" and "dotencode", what hg has
	// created since 1.7: HybridEncode(name, true).
	LayoutDotencode
)

// LayoutFor returns the layout the requirements select.
func LayoutFor(req Requirements) Layout {
	switch {
	case !req.Has(ReqStore):
		return LayoutBasic
	case !req.Has(ReqFncache):
		return LayoutEncoded
	case !req.Has(ReqDotencode):
		return LayoutFncache
	}
	return LayoutDotencode
}

func (l Layout) String() string {
	switch l {
	case LayoutBasic:
		return "basic"
	case LayoutEncoded:
		return "encoded"
	case LayoutFncache:
		return "fncache"
	case LayoutDotencode:
		return "fncache+dotencode"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Encode maps an unencoded store path ("data/Foo.txt.i") to its on-disk
// path relative to the store directory.
func (l Layout) Encode(name string) string {
	switch l {
	case LayoutBasic:
		return EncodeDir(name)
	case LayoutEncoded:
		return EncodeFilename(name)
	case LayoutFncache:
		return HybridEncode(name, false)
	}
	return HybridEncode(name, true)
}

// StoreDir is the store directory relative to the repository root, slash
// separated: ".hg/store", or ".hg" for LayoutBasic.
func (l Layout) StoreDir() string {
	if l == LayoutBasic {
		return ".hg"
	}
	return ".hg/store"
}

// RepoPath is the on-disk path of a store file relative to the
// repository root, slash separated: ".hg/store/data/_foo.i".
func (l Layout) RepoPath(name string) string { return l.StoreDir() + "/" + l.Encode(name) }

// HasFncache reports whether the layout keeps a fncache file.
func (l Layout) HasFncache() bool { return l == LayoutFncache || l == LayoutDotencode }

// Store is an opened local repository's store. It holds no open files;
// its methods read the directory when called and are safe for concurrent
// use.
//
// Root, Dir and CacheDir are set by Open only: a store opened with OpenFS
// (a FUSE cache, any fs.FS) has no path on disk, and its users read it
// through FS and CacheFS instead.
type Store struct {
	Root         string // repository root (the dir containing .hg); "" with OpenFS
	Dir          string // absolute store directory (.hg/store, or .hg without "store"; the share source's for a share); "" with OpenFS
	CacheDir     string // absolute .hg/cache (the share source's for a share); "" with OpenFS
	Requirements Requirements
	Layout       Layout
	// Walkers is how many goroutines Walk and WalkRead stat or read
	// the fncache entries of a store on disk with: 0 for
	// DefaultWalkers, 1 for a serial walk. The result is the same
	// whatever the number.
	Walkers int

	fsys    fs.FS // the store directory
	cacheFS fs.FS // .hg/cache
	hgFS    fs.FS // the repository's own .hg (a share's, not its source's)
}

// Open opens the repository at repoRoot: reads its requirements (refusing,
// as hg does, names hg 6.3 does not know, and names hgfs does not read:
// see Requirements.CheckReadable) and locates the store.
func Open(repoRoot string) (*Store, error) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, err
	}
	req, shareDir, err := readRequirements(root)
	if err != nil {
		return nil, err
	}
	if err := req.CheckReadable(); err != nil {
		return nil, err
	}
	base := filepath.Join(root, ".hg")
	if shareDir != "" {
		base = shareDir
	}
	layout := LayoutFor(req)
	dir := base
	if layout != LayoutBasic {
		dir = filepath.Join(base, "store")
	}
	cache := filepath.Join(base, "cache")
	return &Store{
		Root:         root,
		Dir:          dir,
		CacheDir:     cache,
		Requirements: req,
		Layout:       layout,
		fsys:         sysio.NewDirFS(dir, math.MaxInt),
		cacheFS:      os.DirFS(cache),
		hgFS:         sysio.NewDirFS(filepath.Join(root, ".hg"), math.MaxInt),
	}, nil
}

// OpenFS opens the repository whose .hg directory is hg (os.DirFS of a
// .hg, or a mounted cache's view of one), with Open's checks. A shared
// repository's store lives outside hg, so it is refused with ErrShared.
func OpenFS(hg fs.FS) (*Store, error) {
	if st, err := fs.Stat(hg, "."); err != nil || !st.IsDir() {
		return nil, notRepositoryError(".hg")
	}
	req, err := requirementsFS(hg, ".hg", nil)
	if err != nil {
		return nil, err
	}
	if err := req.CheckReadable(); err != nil {
		return nil, err
	}
	layout := LayoutFor(req)
	dir := hg
	if layout != LayoutBasic {
		if dir, err = fs.Sub(hg, "store"); err != nil {
			return nil, err
		}
	}
	cache, err := fs.Sub(hg, "cache")
	if err != nil {
		return nil, err
	}
	return &Store{Requirements: req, Layout: layout, fsys: dir, cacheFS: cache, hgFS: hg}, nil
}

// FS returns the store directory as an fs.FS. For a store from Open its
// files are *os.File and so implement io.ReaderAt.
func (s *Store) FS() fs.FS { return s.fsys }

// CacheFS returns the .hg/cache directory as an fs.FS.
func (s *Store) CacheFS() fs.FS { return s.cacheFS }

// errPath names rel (slash separated, relative to the store directory)
// in error messages: its path on disk, or the repository-relative one for
// a store from OpenFS.
func (s *Store) errPath(rel string) string {
	if s.Dir != "" {
		return filepath.Join(s.Dir, filepath.FromSlash(rel))
	}
	return path.Join(s.Layout.StoreDir(), rel)
}

// Encode maps an unencoded store path to its on-disk path relative to
// Dir, per the store's layout.
func (s *Store) Encode(name string) string { return s.Layout.Encode(name) }

// FilelogIndex is the on-disk path (relative to Dir) of the index of the
// filelog of a tracked file.
func (s *Store) FilelogIndex(file string) string { return s.Encode("data/" + file + ".i") }

// Fncache returns the entries of the fncache (unencoded store paths,
// sorted, without duplicates); nil for layouts without one. A missing
// fncache file is empty, as in hg.
func (s *Store) Fncache() ([]string, error) {
	if !s.Layout.HasFncache() {
		return nil, nil
	}
	return readFncacheFS(s.fsys, "fncache", s.errPath("fncache"))
}
