package store

// Which files a stream clone carries, and in which order: store.py walk
// (datafiles, then topfiles) as streamclone.py _walkstreamfiles calls it,
// then _v2_walk's extra store and cache files.
//
// datafiles:
//   - fncache layouts: the fncache entries sorted bytewise; an entry whose
//     file is missing is skipped (it may be left over from a strip).
//   - basic and encoded layouts: a recursive listing of data/, then of
//     meta/, each sorted by (revlog type, decodedir'd name, size), so every
//     ".i" comes before every ".d" and volatile ".n"/".nd" files come last.
//
// topfiles: the revlog-like regular files directly in the store
// directory, sorted by (type, name, size) and then REVERSED: with a
// persistent nodemap that is 00manifest.n, 00changelog.n, then
// 00manifest.d, 00changelog.d, then 00manifest.i, 00changelog.i.
//
// A file is "revlog-like" by its name alone (store.py revlog_type): main
// ".i" or "i.tmpcensored"; other ".idx", ".d", ".dat", ".n", ".nd",
// ".sda", "d.tmpcensored"; ".n" and ".nd" are volatile (rewritten in
// place, so a v2 stream copies them whole under the lock).

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// File is one file of a stream clone.
type File struct {
	Name     string // unencoded store path, as a stream clone names it
	Path     string // on-disk path relative to Dir (CacheDir for CacheFiles), slash separated
	Size     int64
	Volatile bool // a v2 stream copies it whole under the lock (_filefull): .n/.nd revlog files, SnapshotFiles, CacheFiles
	// Data is the file's content (Size bytes) when WalkRead read it
	// instead of stat'ing it; nil otherwise.
	Data []byte
}

// Revlog file types and flags, as store.py defines them. Keep in sync
// with mercurial/store.py.
const (
	typeChangelog   = 1 << 13 // FILEFLAGS_CHANGELOG
	typeManifestlog = 1 << 12 // FILEFLAGS_MANIFESTLOG
	typeFilelog     = 1 << 11 // FILEFLAGS_FILELOG
	typeOther       = 1 << 10 // FILEFLAGS_OTHER
	typeRevlogMain  = 1 << 1  // FILEFLAGS_REVLOG_MAIN
	typeRevlogOther = 1 << 0  // FILEFLAGS_REVLOG_OTHER
	typeVolatile    = 1 << 20 // FILEFLAGS_VOLATILE
)

var (
	revlogMainExt     = []string{".i", "i.tmpcensored"}
	revlogOtherExt    = []string{".idx", ".d", ".dat", ".n", ".nd", ".sda", "d.tmpcensored"}
	revlogVolatileExt = []string{".n", ".nd"}
)

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// revlogType is store.py revlog_type: 0 for a file that is not part of a
// revlog.
func revlogType(name string) int {
	switch {
	case hasAnySuffix(name, revlogMainExt):
		return typeRevlogMain
	case hasAnySuffix(name, revlogOtherExt):
		t := typeFilelog | typeRevlogOther // FILETYPE_FILELOG_OTHER, as hg has it
		if hasAnySuffix(name, revlogVolatileExt) {
			t |= typeVolatile
		}
		return t
	}
	return 0
}

// IsRevlogFile reports whether a store path names a revlog file by hg's
// rules (store.py revlog_type).
func IsRevlogFile(name string) bool { return revlogType(name) != 0 }

type walkEntry struct {
	typ  int
	name string // decodedir'd
	path string // on disk, relative to the store dir
	size int64
	data []byte // the content, if read (WalkRead)
}

func compareWalk(a, b walkEntry) int {
	if c := cmp.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	return cmp.Compare(a.size, b.size)
}

// dirEntry is one entry of a store directory listing, as the walk needs
// it: regular files carry their lstat size, other kinds none.
type dirEntry struct {
	name    string
	regular bool
	dir     bool
	size    int64 // regular revlog-like files only
}

// storeFS is how the walk reads the store directory: fsWalker (any fs.FS)
// or, on unix for a store on disk, sysWalker (walk_unix.go), which reads
// and stats relative to open directory descriptors. Both give the same
// results and errors (an fs.PathError naming the path relative to the
// store); only the system calls differ.
type storeFS interface {
	// isDir reports whether rel ("" for the store itself) is a
	// directory, following symlinks (fs.Stat).
	isDir(rel string) bool
	// list returns the entries of directory rel sorted by name, with
	// the sizes of the regular files whose names keep says to keep.
	list(rel string, keep func(name string) bool) ([]dirEntry, error)
	// sizes sets sizes[i], errs[i] to fs.Stat(rels[i]).Size() and its
	// error; a missing file is an error matching fs.ErrNotExist. At most
	// statChunk paths at a time. A walker made with a read budget may
	// read a small file whole instead (data[i] its content, sizes[i] its
	// length); data[i] left nil means stat'ed.
	sizes(rels []string, sizes []int64, errs []error, data [][]byte)
	close()
}

// fsWalker is storeFS on any fs.FS.
type fsWalker struct{ fsys fs.FS }

func (w fsWalker) isDir(rel string) bool {
	if rel == "" {
		rel = "."
	}
	st, err := fs.Stat(w.fsys, rel)
	return err == nil && st.IsDir()
}

func (w fsWalker) list(rel string, keep func(string) bool) ([]dirEntry, error) {
	if rel == "" {
		rel = "."
	}
	ents, err := fs.ReadDir(w.fsys, rel)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		d := dirEntry{name: e.Name(), regular: e.Type().IsRegular(), dir: e.IsDir()}
		if d.regular && keep(d.name) {
			info, err := e.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed since the listing
				}
				return nil, err
			}
			d.size = info.Size()
		}
		out = append(out, d)
	}
	return out, nil
}

func (w fsWalker) size(rel string) (int64, error) {
	st, err := fs.Stat(w.fsys, rel)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (w fsWalker) sizes(rels []string, sizes []int64, errs []error, _ [][]byte) {
	for i, rel := range rels {
		sizes[i], errs[i] = w.size(rel)
	}
}

// statChunk is how many fncache entries are stat'ed at once.
const statChunk = 128

func (fsWalker) close() {}

// walkDir is store.py basicstore._walk: the revlog-like regular files
// under rel (recursively if asked; symlinks are neither files nor
// directories, as with lstat), sorted by (type, name, size).
func (s *Store) walkDir(w storeFS, rel string, recurse bool) ([]walkEntry, error) {
	if !w.isDir(rel) {
		return nil, nil
	}
	keep := func(name string) bool { return revlogType(name) != 0 }
	var out []walkEntry
	visit := []string{rel}
	for len(visit) > 0 {
		dir := visit[len(visit)-1]
		visit = visit[:len(visit)-1]
		ents, err := w.list(dir, keep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.errPath(dir), err)
		}
		for _, e := range ents {
			p := e.name
			if dir != "" {
				p = dir + "/" + p
			}
			switch {
			case e.regular:
				t := revlogType(e.name)
				if t == 0 {
					continue
				}
				out = append(out, walkEntry{typ: t, name: DecodeDir(p), path: p, size: e.size})
			case e.dir && recurse:
				visit = append(visit, p)
			}
		}
	}
	slices.SortFunc(out, compareWalk)
	return out, nil
}

// DefaultWalkers is how many goroutines a walk of a store on disk stats
// (or reads) the fncache entries with when Store.Walkers is 0: two, as
// many as the bench machine has cores. The per-file kernel work (open,
// read, close, or stat) is most of a stream clone's snapshot, which is
// taken under the repository lock, and runs in parallel on files of one
// directory. HGFS_TUNE=-walkfork makes the hgfs command walk with one
// (internal/tune).
const DefaultWalkers = 2

// walkers is how many walkers the fncache walk may use: Walkers, or
// DefaultWalkers, and no more than GOMAXPROCS.
func (s *Store) walkers() int {
	n := s.Walkers
	if n <= 0 {
		n = DefaultWalkers
	}
	return min(n, runtime.GOMAXPROCS(0))
}

// fncacheFiles is fncachestore.datafiles: the entries whose files exist,
// with their sizes. Entries go in chunks, so the walker can stat many
// files at once, with the errors in hg's order.
//
// A walker that forks (sysWalker) takes the chunks on s.walkers()
// goroutines (DefaultWalkers), when there are at least four chunks.
// Each chunk's results are kept apart and read in order afterwards, so
// the entries and the first error are the serial walk's.
func (s *Store) fncacheFiles(w storeFS, entries, encoded []string) ([]walkEntry, error) {
	// An entry that is not a revlog ends the walk (hg asserts there; a
	// corrupt fncache is an error for us), after the errors before it.
	var corrupt error
	for i, name := range entries {
		if revlogType(name) == 0 {
			corrupt = fmt.Errorf("%w: entry %q is not a revlog file", ErrCorruptFncache, name)
			entries, encoded = entries[:i], encoded[:i]
			break
		}
	}
	type chunk struct {
		sizes []int64
		errs  []error
		data  [][]byte // set only by a walker that reads (WalkRead)
	}
	nchunks := (len(entries) + statChunk - 1) / statChunk
	chunks := make([]chunk, nchunks)
	do := func(w storeFS, c int) {
		lo, hi := c*statChunk, min((c+1)*statChunk, len(entries))
		ch := chunk{sizes: make([]int64, hi-lo), errs: make([]error, hi-lo), data: make([][]byte, hi-lo)}
		w.sizes(encoded[lo:hi], ch.sizes, ch.errs, ch.data)
		chunks[c] = ch
	}
	var others []storeFS
	if f, ok := w.(interface{ fork() storeFS }); ok && nchunks >= 4 {
		for range s.walkers() - 1 {
			o := f.fork()
			if o == nil {
				break
			}
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		for c := range chunks {
			do(w, c)
		}
	} else {
		walkForked(len(chunks), w, others, do)
	}
	out := make([]walkEntry, 0, len(entries))
	for c, ch := range chunks {
		for k, err := range ch.errs {
			i := c*statChunk + k
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, fmt.Errorf("%s: %w", s.errPath(encoded[i]), err)
			}
			out = append(out, walkEntry{typ: revlogType(entries[i]) | typeFilelog, name: entries[i], path: encoded[i], size: ch.sizes[k], data: ch.data[k]})
		}
	}
	if corrupt != nil {
		return nil, corrupt
	}
	return out, nil
}

// walkForked runs do on every chunk index below n, on w here and on each
// of others in a goroutine of its own (which closes it), and returns once
// all are done. A panic on any side is raised here after all have
// stopped, as the serial walk would raise it: on the caller's goroutine
// (a request's, which net/http recovers), with nothing left running or
// open.
func walkForked(n int, w storeFS, others []storeFS, do func(storeFS, int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	lost := make([]any, len(others)) // each other walker's panic
	for k, o := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer o.close()
			defer func() {
				if lost[k] = recover(); lost[k] != nil {
					for range next { // let the caller hand over the rest, and finish
					}
				}
			}()
			for c := range next {
				do(o, c)
			}
		}()
	}
	func() {
		defer func() {
			close(next)
			wg.Wait()
		}()
		// This goroutine takes a chunk itself whenever no other walker
		// is free to take it.
		for c := range n {
			select {
			case next <- c:
			default:
				do(w, c)
			}
		}
	}()
	for _, p := range lost {
		if p != nil {
			panic(p)
		}
	}
}

// dataFiles is store.py datafiles for the store's layout.
func (s *Store) dataFiles(w storeFS) ([]walkEntry, error) {
	if s.Layout.HasFncache() {
		entries, paths, err := s.fncachePaths()
		if err != nil {
			return nil, err
		}
		return s.fncacheFiles(w, entries, paths)
	}
	data, err := s.walkDir(w, "data", true)
	if err != nil {
		return nil, err
	}
	meta, err := s.walkDir(w, "meta", true)
	if err != nil {
		return nil, err
	}
	files := append(data, meta...)
	if s.Layout == LayoutEncoded {
		for i := range files {
			// hg decodes the already decodedir'd name once more
			// (encodedstore.datafiles on top of basicstore._walk).
			n, err := DecodeFilename(files[i].name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.errPath("."), err)
			}
			files[i].name = n
		}
	}
	for i := range files {
		files[i].typ |= typeFilelog
	}
	return files, nil
}

// topFiles is store.py topfiles: reverse sorted, so manifest before
// changelog.
func (s *Store) topFiles(w storeFS) ([]walkEntry, error) {
	files, err := s.walkDir(w, "", false)
	if err != nil {
		return nil, err
	}
	slices.Reverse(files)
	for i := range files {
		switch n := files[i].name; {
		case strings.HasPrefix(n, "00changelog"):
			files[i].typ |= typeChangelog
		case strings.HasPrefix(n, "00manifest"):
			files[i].typ |= typeManifestlog
		default:
			files[i].typ |= typeOther
		}
	}
	return files, nil
}

// Walk lists the files a stream clone carries, in hg 6.3's order: the
// data files, then the top-level revlog files (store.py walk, as
// streamclone.py generatev1 and _v2_walk use it). Files of size 0 are
// left out, as both stream versions do. A v2 stream adds SnapshotFiles and
// CacheFiles after these.
func (s *Store) Walk() ([]File, error) {
	w := s.walker(0)
	defer w.close()
	return s.walkWith(w)
}

// WalkRead is Walk that may read small data files whole instead of
// stat'ing them, up to budget bytes in all: File.Data holds what it
// read, and Size is its length. A stream clone taking its snapshot
// needs both anyway; reading under the lock also takes the bytes at
// the moment their size is recorded. Where the store is not a
// directory on Linux, or for files it could not read so, it is Walk.
func (s *Store) WalkRead(budget int64) ([]File, error) {
	w := s.walker(budget)
	defer w.close()
	return s.walkWith(w)
}

func (s *Store) walkWith(w storeFS) ([]File, error) {
	data, err := s.dataFiles(w)
	if err != nil {
		return nil, err
	}
	top, err := s.topFiles(w)
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(data)+len(top))
	for _, list := range [][]walkEntry{data, top} {
		for _, e := range list {
			if e.size == 0 {
				continue
			}
			out = append(out, File{Name: e.name, Path: e.path, Size: e.size, Volatile: e.typ&typeVolatile != 0, Data: e.data})
		}
	}
	return out, nil
}

// SnapshotFiles lists the store files a v2 stream copies whole after the
// revlogs (streamclone.py _walkstreamfullstorefiles and _v2_walk):
// phaseroots unless the repository is publishing, then obsstore if
// obsolescence markers are asked for. Unlike revlogs they are included
// even when empty.
func (s *Store) SnapshotFiles(publishing, obsmarkers bool) ([]File, error) {
	var names []string
	if !publishing {
		names = append(names, "phaseroots")
	}
	if obsmarkers {
		names = append(names, "obsstore")
	}
	var out []File
	for _, n := range names {
		f, ok, err := statFile(s.fsys, n, s.Encode(n))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// Cache files hg copies in a clone (mercurial/cacheutil.py cachetocopy):
// branch caches per repository view, the rev-branch cache, tags caches
// per view and the tags fnodes cache. hg 6.3 names the views of its
// repoview.filtertable and writes branch2 and rbc-*-v1; hg 7 dropped two
// views and added branch3 and rbc-*-v2. hgfs copies any of them that
// exist, so a stream of a repository written by either version carries
// what that version's own server sends (in hg 6.3's order; hg 7 lists
// its views in another order, which no client depends on). Keep in sync
// with repoview.py and cacheutil.py of both versions.
var (
	// cacheViews63 is hg 6.3's repoview.filtertable, in its order.
	cacheViews63 = []string{"visible", "visible-hidden", "served.hidden", "served", "immutable", "base"}
	// cacheViews7 is hg 7's repoviewutil.get_ordered_subset, unfiltered
	// left out.
	cacheViews7 = []string{"base", "immutable", "served", "visible"}
)

// CacheFileNames is the list of .hg/cache files a v2 stream (and a local
// clone) copies, in order: hg 6.3's and hg 7's cachetocopy merged.
func CacheFileNames() []string {
	names := []string{"branch2"}
	for _, f := range cacheViews63 {
		names = append(names, "branch2-"+f)
	}
	names = append(names, "branch3")
	for _, f := range cacheViews7 {
		names = append(names, "branch3-"+f)
	}
	names = append(names, "rbc-names-v1", "rbc-revs-v1", "rbc-names-v2", "rbc-revs-v2", "tags2")
	for _, f := range cacheViews63 {
		names = append(names, "tags2-"+f)
	}
	return append(names, "hgtagsfnodes1")
}

// CacheFiles lists the existing cache files of CacheFileNames, in that
// order, relative to CacheDir (Name and Path are the same). A v2 stream
// sends them after the store files, with the cache destination.
func (s *Store) CacheFiles() ([]File, error) {
	var out []File
	for _, n := range CacheFileNames() {
		f, ok, err := statFile(s.cacheFS, n, n)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// statFile is hg's "if vfs.exists(name): size = vfs.lstat(name)", for
// regular files only: hg would list a symbolic link with the size of its
// text and then read its target (for a link in .hg/cache to /etc/passwd,
// the first bytes of that file), so anything but a regular file is left
// out, as if absent.
func statFile(fsys fs.FS, name, rel string) (File, bool, error) {
	st, err := fs.Lstat(fsys, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	if !st.Mode().IsRegular() {
		return File{}, false, nil
	}
	return File{Name: name, Path: path.Clean(rel), Size: st.Size(), Volatile: true}, true, nil
}
