//go:build unix

package store

// The walk of a store on disk with plain system calls. A stream clone
// stats every revlog of the store under the lock, 20,000 files for a
// 20,000-file repository; through os.DirFS each stat resolved the
// store's absolute path again (ten components and more, a dcache lookup
// each) and allocated a FileInfo, a third of a request's CPU. Here each
// directory is opened once and its files are stat'ed by base name
// relative to it (fstatat), and directories are listed through that
// descriptor. Any directory that cannot be opened falls back to the
// fs.FS calls, so results and errors stay those of fsWalker.

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
)

// sysWalker is storeFS on a sysio.DirFS, through directory descriptors.
type sysWalker struct {
	dir    string // the store directory on disk
	rootfd int
	fb     fsWalker
	dirs   *sysio.Dirs // open subdirectories (-1: use fb); a chunk of statChunk files may open more than sysio.MaxDirs
	ring   *statRing   // nil: stat with system calls

	budget int64       // bytes WalkRead may still read
	reader *fileReader // WalkRead's ring, made on first use; nil: none
}

// walker returns the storeFS for s; readBudget is how many bytes it may
// read whole instead of stat'ing (WalkRead; 0 for Walk).
func (s *Store) walker(readBudget int64) storeFS {
	fb := fsWalker{s.fsys}
	d, ok := s.fsys.(*sysio.DirFS)
	if !ok {
		return fb
	}
	fd, err := sysio.OpenDir(d.Dir())
	if err != nil {
		return fb
	}
	return &sysWalker{dir: d.Dir(), rootfd: fd, fb: fb, dirs: sysio.NewDirs(fd), ring: newStatRing(), budget: readBudget}
}

// fork returns a second walker of the same store for another goroutine:
// its own descriptors and rings, and half of what is left of the read
// budget. nil if the store cannot be opened again.
func (w *sysWalker) fork() storeFS {
	fd, err := sysio.OpenDir(w.dir)
	if err != nil {
		return nil
	}
	half := w.budget / 2
	w.budget -= half
	return &sysWalker{dir: w.dir, rootfd: fd, fb: w.fb, dirs: sysio.NewDirs(fd), ring: newStatRing(), budget: half}
}

func (w *sysWalker) close() {
	if w.ring != nil {
		w.ring.close()
	}
	if w.reader != nil {
		w.reader.close()
	}
	w.dirs.Close()
	unix.Close(w.rootfd)
}

func (w *sysWalker) isDir(rel string) bool { return w.fb.isDir(rel) }

func (w *sysWalker) size(rel string) (int64, error) {
	if !fs.ValidPath(rel) || rel == "." {
		return w.fb.size(rel)
	}
	w.dirs.Trim()
	dirfd, base := w.dirs.At(rel)
	if dirfd < 0 {
		return w.fb.size(rel)
	}
	var st unix.Stat_t
	if err := sysio.Fstatat(dirfd, base, &st, 0); err != nil {
		// What os.DirFS's Stat returns.
		return 0, &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	return st.Size, nil
}

func (w *sysWalker) sizes(rels []string, sizes []int64, errs []error, data [][]byte) {
	if w.budget > 0 && w.readSizes(rels, sizes, errs, data) {
		return
	}
	w.statSizes(rels, sizes, errs)
}

// statSizes is sizes by stat alone.
func (w *sysWalker) statSizes(rels []string, sizes []int64, errs []error) {
	if w.ring != nil && w.ringSizes(rels, sizes, errs) {
		return
	}
	for i, rel := range rels {
		sizes[i], errs[i] = w.size(rel)
	}
}

func (w *sysWalker) list(rel string, keep func(string) bool) ([]dirEntry, error) {
	if rel != "" && !fs.ValidPath(rel) {
		return w.fb.list(rel, keep)
	}
	name := rel
	if name == "" {
		name = "."
	}
	fd, err := sysio.OpenDirAt(w.rootfd, name)
	if err != nil {
		return w.fb.list(rel, keep)
	}
	// os.File reads the entries with getdents and their types from it
	// (lstat'ing by path only where the filesystem gives no type); fd
	// stays valid until f.Close.
	f := os.NewFile(uintptr(fd), filepath.Join(w.dir, filepath.FromSlash(rel)))
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		d := dirEntry{name: e.Name(), regular: e.Type().IsRegular(), dir: e.IsDir()}
		if d.regular && keep(d.name) {
			var st unix.Stat_t
			if err := sysio.Fstatat(fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue // removed since the listing
				}
				p := d.name
				if rel != "" {
					p = rel + "/" + p
				}
				return nil, &fs.PathError{Op: "lstat", Path: p, Err: err}
			}
			d.size = st.Size
		}
		out = append(out, d)
	}
	return out, nil
}
