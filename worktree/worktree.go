package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/internal/batchpool"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// Options tune Update.
type Options struct {
	// Clean discards uncommitted changes (hg update -C).
	Clean bool
	// Check refuses any uncommitted change (hg update --check); the
	// refusal then carries no hint.
	Check bool
	// Writers is the number of goroutines reconstructing and writing
	// files, checking them for changes and removing them (default 4, as
	// the directory sink's).
	Writers int
	// Progress, if set, is called with the total files to write before
	// any is written (total) and then with cumulative counts; it must be
	// safe for concurrent use.
	Total    func(files int)
	Progress func(files int, bytes int64)
	// Lock tunes the wlock wait.
	Lock store.LockOptions
	// Virtual checks regular files out as references to their
	// revisions where the destination can (a VirtualSink; sink.go).
	Virtual bool
	// Sizes, with Virtual, holds sizes learnt before the checkout (a
	// clone's stream, sizes.go): a file whose node it knows is made
	// virtual without its filelog being read. The checkout consumes
	// it: once its files are sized, what it learnt is dropped.
	Sizes *Sizes
	// SetVirtual, if set, makes Update show regular files' revisions
	// through it instead of writing them (a mount's virtual working
	// copy; virtual.go).
	SetVirtual SetVirtualFunc
	// Daemon, if set, asks the daemon of the mount holding the working
	// copy to do the whole update in its cache first (virtual.go); the
	// update goes through the files when it declines.
	Daemon DaemonFunc
}

// Result counts what an update did, as hg's summary line does.
type Result struct {
	Updated, Removed int
	Branch           string
	// Deferred counts the files a DeferSink deferred.
	Deferred int
}

// ErrDirty is wrapped by the refusal of a working copy with uncommitted
// changes; ErrMerge by that of one with a merge in progress.
var (
	ErrDirty       = errors.New("uncommitted changes")
	ErrMerge       = errors.New("outstanding uncommitted merge")
	ErrUnsupported = errors.New("not supported by hgfs")
)

// UnsupportedError names what a manifest holds that hgfs cannot check
// out.
type UnsupportedError struct{ What, Path string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s (%s) %s; use hg update", e.What, e.Path, ErrUnsupported)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Check refuses a manifest hgfs cannot check out; on Windows, also one
// with a path Windows cannot hold (before anything is written; hg on
// Windows refuses such a file when it comes to write it).
func Check(m []revlog.ManifestEntry) error {
	for _, e := range m {
		switch {
		case e.Path == ".hgsub" || e.Path == ".hgsubstate":
			return &UnsupportedError{"subrepositories", e.Path}
		case strings.HasPrefix(e.Path, ".hglf/"):
			return &UnsupportedError{"largefiles", e.Path}
		case e.Flags == "t":
			return &UnsupportedError{"tree manifests", e.Path}
		}
		if !validPath(e.Path) {
			return fmt.Errorf("%w: manifest path %q", revlog.ErrCorrupt, e.Path)
		}
		if runtime.GOOS == "windows" {
			if err := windowsNameError(e.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// validPath refuses what would escape the working directory or touch .hg
// (hg's pathauditor).
func validPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\x00\\") {
		return false
	}
	for rest := p; ; {
		c, after, more := strings.Cut(rest, "/")
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".hg") {
			return false
		}
		if !more {
			return true
		}
		rest = after
	}
}

// Update moves the working directory of r (whose root is r.Root) to
// changeset rev (revlog.NullRev empties it), under the wlock.
func Update(ctx context.Context, r *repo.Repo, rev int, opt Options) (*Result, error) {
	root := r.Root
	hgDir := filepath.Join(root, ".hg")
	v2 := r.Store.Requirements.Has("dirstate-v2")
	unlock, err := store.WLock(ctx, root, opt.Lock)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if opt.Daemon != nil && !v2 {
		res, err := opt.Daemon(r.Node(rev), opt.Clean, getUmask())
		if err == nil {
			writeWCache(hgDir)
		}
		if !errors.Is(err, ErrDeclined) {
			return res, err
		}
	}

	old, err := dirstate.Read(hgDir, v2)
	if err != nil {
		return nil, err
	}
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	to, err := r.ReadManifest(cs.Manifest)
	if err != nil {
		return nil, err
	}
	if err := Check(to); err != nil {
		return nil, err
	}
	var from []revlog.ManifestEntry
	p1 := old.Parents[0]
	if p1 != revlog.NullNode {
		p1rev, ok := r.Changelog().Rev(p1)
		if !ok {
			//lint:ignore ST1005 hg's message (localrepo.dirstate)
			return nil, fmt.Errorf("working directory has unknown parent '%s'!", p1.Short())
		}
		if from, err = r.Manifest(p1rev); err != nil {
			return nil, err
		}
	}
	if !opt.Clean && old.Parents[1] != revlog.NullNode {
		return nil, ErrMerge
	}
	var dirty []string
	if len(old.Entries) > 0 {
		boundary, err := dirstate.Now(hgDir)
		if err != nil {
			return nil, err
		}
		if dirty, err = dirtyFiles(r, root, from, old, writers(opt), boundary); err != nil {
			return nil, err
		}
	}
	if len(dirty) > 0 && !opt.Clean {
		return nil, fmt.Errorf("%w: %s", ErrDirty, strings.Join(firstN(dirty, 5), ", "))
	}
	target := r.Node(rev)

	oldIndex := old.Index()
	gets, removes := Changes(from, to, oldIndex, dirty)
	if !opt.Clean {
		if err := checkUntracked(r, root, gets); err != nil {
			return nil, err
		}
	}

	if err := os.WriteFile(filepath.Join(hgDir, "updatestate"), []byte(target.String()), 0o666); err != nil {
		return nil, err
	}
	// Files about to change are no longer known clean (with none, the
	// dirstate on disk stays as it is until the new one replaces it).
	if len(old.Entries) > 0 && len(gets)+len(removes) > 0 {
		if err := dirstate.Write(hgDir, MarkTouched(old, gets, removes), v2); err != nil {
			return nil, err
		}
	}

	if err := removeFiles(root, removes, writers(opt)); err != nil {
		return nil, err
	}
	written, err := write(ctx, r, root, gets, opt)
	if err != nil {
		return nil, err
	}

	// The new dirstate: written files clean unless their mtime is too
	// close to now; unchanged ones keep their entries.
	nanos := v2 && tickingFS(hgDir)
	var now dirstate.Timestamp
	if nanos {
		now, nanos, err = dirstate.NowAfterTick(hgDir)
	} else {
		now, err = dirstate.Now(hgDir)
	}
	if err != nil {
		return nil, err
	}
	nd := NextDirstate(target, to, gets, written, oldIndex, now, nanos)
	if err := dirstate.WriteBranch(hgDir, cs.Branch()); err != nil {
		return nil, err
	}
	if err := dirstate.Write(hgDir, nd, v2); err != nil {
		return nil, err
	}
	writeWCache(hgDir)
	os.Remove(filepath.Join(hgDir, "updatestate"))
	return &Result{Updated: len(gets), Removed: len(removes), Branch: cs.Branch()}, nil
}

// recordable is merge's filter of the mtimes of the files it wrote
// (merge_utils/update.py, _filter_ambiguous_mtime in hg 7): with now the
// filesystem's time after the writes, an mtime in now's second or later
// is not recorded, except, when nanos (dirstate-v2 on a filesystem whose
// clock was seen to tick: hg 7), one earlier in now's second, which is
// recorded flagged second-ambiguous (dirstate.Reliable).
func recordable(m, now dirstate.Timestamp, nanos bool) (dirstate.Timestamp, bool) {
	if !nanos {
		return m, !dirstate.Ambiguous(m, now)
	}
	return dirstate.Reliable(m, now)
}

// UntrackedError is merge._checkunknownfiles's refusal: untracked files
// where the update would write different ones.
type UntrackedError struct{ Paths []string }

func (e *UntrackedError) Error() string {
	return "untracked files in working directory differ from files in requested revision"
}

// checkUntracked refuses to overwrite untracked files that differ from
// the ones the update writes (one equal to it is taken as it is
// rewritten, as hg does). A working directory holding only .hg (a new
// clone's) has none, and is not looked at file by file.
func checkUntracked(r *repo.Repo, root string, gets []Change) error {
	if ents, err := os.ReadDir(root); err == nil && len(ents) <= 1 {
		return nil
	}
	var differ []string
	for _, g := range gets {
		if g.Exists {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(g.Entry.Path)))
		if err != nil || fi.IsDir() {
			continue
		}
		isLink := fi.Mode()&fs.ModeSymlink != 0
		same, err := sameContent(r, root, g.Entry, isLink)
		if err != nil {
			return err
		}
		if !same || fsSymlinks && isLink != (g.Entry.Flags == "l") {
			differ = append(differ, g.Entry.Path)
		}
	}
	if len(differ) > 0 {
		return &UntrackedError{Paths: differ}
	}
	return nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// fsSymlinks and fsExec: whether the working directory's filesystem has
// symlinks and exec bits. hg on Windows has neither (windows.py
// checkexec and checklink answer False): a symlink is written as a file
// holding its target, and exec bits are neither set nor compared.
var fsSymlinks, fsExec = runtime.GOOS != "windows", runtime.GOOS != "windows"

// fileStat is what lstat says of a working file that the dirty check
// needs (dirFiles.lstat).
type fileStat struct {
	link, reg bool   // a symlink; a regular file
	perm      uint32 // permission bits
	size      int64
	mtime     dirstate.Timestamp
}

// mode is the st_mode hg records (dirstate.ModeOf).
func (s fileStat) mode() uint32 {
	if s.link {
		return dirstate.ModeSymlink | s.perm
	}
	return dirstate.ModeRegular | s.perm
}

// write creates the directories the files need, then has the writers
// reconstruct and write every file; results are by index of gets.
func write(ctx context.Context, r *repo.Repo, root string, gets []Change, opt Options) ([]Written, error) {
	out := make([]Written, len(gets))
	if len(gets) == 0 {
		return out, nil
	}
	if opt.Total != nil {
		opt.Total(len(gets))
	}
	made := map[string]bool{"": true, ".": true}
	for _, g := range gets {
		if err := mkdirs(root, path.Dir(g.Entry.Path), made); err != nil {
			return nil, err
		}
	}
	if opt.SetVirtual != nil {
		return writeVirtual(ctx, r, root, gets, opt)
	}
	umask := getUmask()
	err := eachFile(ctx, opt, len(gets), func(i int) (int64, error) {
		w, err := writeFile(r, root, gets[i], umask)
		out[i] = w
		return w.Size, err
	})
	return out, err
}

// eachFile runs do for each of the n files of a checkout on the writers'
// pool (opt.Writers goroutines), stopping at the first error or when ctx
// ends, and reports each file done and the bytes do says it wrote to
// opt.Progress.
func eachFile(ctx context.Context, opt Options, n int, do func(i int) (int64, error)) error {
	var files, nbytes atomic.Int64
	w := writers(opt)
	pool := batchpool.New(w, 2*w, 16, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		size, err := do(i)
		if err != nil {
			return err
		}
		f, b := files.Add(1), nbytes.Add(size)
		if opt.Progress != nil {
			opt.Progress(int(f), b)
		}
		return nil
	})
	for i := range n {
		if ctx.Err() != nil || pool.Failed() != nil {
			break
		}
		pool.Add(i)
	}
	err := pool.Close()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// writers is opt.Writers, 4 if unset.
func writers(opt Options) int {
	if opt.Writers <= 0 {
		return 4
	}
	return opt.Writers
}

// mkdirs creates dir (slash-separated, under root) and its parents once
// each, removing a file or symlink in the way if it is one a removed
// file left (an untracked one makes the update fail, as in hg).
func mkdirs(root, dir string, made map[string]bool) error {
	if made[dir] {
		return nil
	}
	if err := mkdirs(root, path.Dir(dir), made); err != nil {
		return err
	}
	p := filepath.Join(root, filepath.FromSlash(dir))
	err := os.Mkdir(p, 0o777)
	if errors.Is(err, fs.ErrExist) {
		fi, serr := os.Lstat(p)
		if serr != nil {
			return serr
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: untracked file in working directory differs from a directory in the requested revision", dir)
		}
		err = nil
	}
	if err != nil {
		return err
	}
	made[dir] = true
	return nil
}

// writeFile reconstructs one file and writes it.
func writeFile(r *repo.Repo, root string, g Change, umask uint32) (Written, error) {
	if done, err := setExec(root, g, umask); done || err != nil {
		return Written{}, err
	}
	buf := getBuffer() // the content may alias it until it is written
	defer putBuffer(buf)
	fl, err := openFilelog(r, g.Entry.Path, buf)
	if err != nil {
		return Written{}, err
	}
	data, err := repo.FileContent(fl, g.Entry)
	fl.Close()
	if err != nil {
		return Written{}, err
	}
	p := filepath.Join(root, filepath.FromSlash(g.Entry.Path))
	if g.Exists {
		if err := removeExisting(p); err != nil {
			return Written{}, err
		}
	}
	if g.Entry.Flags == "l" && fsSymlinks {
		if err := os.Symlink(string(data), p); err != nil {
			return Written{}, err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return Written{}, err
		}
		return Written{Mode: dirstate.ModeOf(fi), Size: int64(len(data)), Mtime: dirstate.TimestampOf(fi.ModTime().UnixNano())}, nil
	}
	perm := 0o666 &^ umask
	if g.Entry.Flags == "x" && fsExec {
		// util.setflags: x where r is, less the umask.
		perm |= (perm & 0o444) >> 2 &^ umask
	}
	w, err := createFile(p, perm, data)
	if errors.Is(err, fs.ErrExist) {
		// An untracked file of the same name: -C or a new clone's
		// leftovers; hg overwrites it when -C, and so does hgfs.
		if err = removeExisting(p); err == nil {
			w, err = createFile(p, perm, data)
		}
	}
	return w, err
}

// setExec is hg's update of a file whose exec flag alone changes
// (util.setflags): the regular file there keeps its bytes and gains x
// where it has r, less the umask, or loses every x; done is false where
// g is another change (the file is rewritten).
func setExec(root string, g Change, umask uint32) (done bool, err error) {
	if !g.FlagsOnly || g.Entry.Flags == "l" || !fsExec {
		return false, nil
	}
	p := filepath.Join(root, filepath.FromSlash(g.Entry.Path))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || links(fi) > 1 {
		// hg copies a file linked elsewhere before its chmod, so that
		// the other name keeps its mode: a rewrite does the same.
		return false, nil
	}
	perm := uint32(fi.Mode().Perm())
	if next := ExecPerm(perm, g.Entry.Flags == "x", umask); next != perm {
		return true, os.Chmod(p, fs.FileMode(next))
	}
	return true, nil
}

// ExecPerm is util.setflags's new permission bits for a file of bits
// perm made executable (x where r is, less the umask) or not (no x).
func ExecPerm(perm uint32, exec bool, umask uint32) uint32 {
	switch {
	case exec && perm&0o100 == 0:
		return perm | (perm&0o444)>>2&^umask
	case !exec && perm&0o100 != 0:
		return perm & 0o666
	}
	return perm
}

// openFilelog opens path's filelog, reading its index with readWhole
// into buf (see buffers.go: the revlog and what it returns may alias it
// until it is put back) from a store on disk (r.File otherwise, and for
// the error when the read fails).
func openFilelog(r *repo.Repo, path string, buf *buffer) (*revlog.Revlog, error) {
	if r.Store.Dir == "" {
		return r.File(path)
	}
	index, err := buf.read(filepath.Join(r.Store.Dir, filepath.FromSlash(r.Store.FilelogIndex(path))))
	if err != nil {
		return r.File(path)
	}
	return r.FileWithIndex(path, index)
}

// removeExisting removes a file or symlink at p; an empty directory too
// (a directory the old revision had where the new one has a file).
func removeExisting(p string) error {
	err := os.Remove(p)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// removeFiles removes tracked files, on n goroutines (as hg's workers
// do), and then the directories they leave empty (util.unlinkpath with
// rmdir).
func removeFiles(root string, rels []string, n int) error {
	err := each(n, len(rels), 64, func(lo, hi int) error {
		files := newDirFiles(root)
		defer files.close()
		for _, rel := range rels[lo:hi] {
			if err := files.remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, rel := range rels {
		for d := path.Dir(rel); d != "." && d != "" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	// Deepest first, so that a directory is tried after its
	// subdirectories: each once, where util.unlinkpath tries every
	// parent again for every file (two failing calls per file).
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool {
		di, dj := strings.Count(order[i], "/"), strings.Count(order[j], "/")
		if di != dj {
			return di > dj
		}
		return order[i] < order[j]
	})
	for _, d := range order {
		os.Remove(filepath.Join(root, filepath.FromSlash(d)))
	}
	return nil
}

// dirtyFiles lists the working copy's uncommitted changes to tracked
// files, as hg status finds them: entries that are not clean-able
// (added, removed, merged), files missing or of another type, size or
// exec bit changed, and, where the mtime cannot vouch, contents that
// differ from the parent's. Unknown files are not changes. The files are
// looked at by the writers at once (n goroutines).
//
// A file whose mtime could not vouch but whose content is the parent's
// gets its mode, size and mtime recorded in its entry of d when that
// mtime is reliable against boundary, the filesystem's time before the
// first look (hg status's fixup, context._checklookup): a working copy
// written too fast for its mtimes to be recorded is read back once, not
// at every update.
func dirtyFiles(r *repo.Repo, root string, parent []revlog.ManifestEntry, d *dirstate.Dirstate, n int, boundary dirstate.Timestamp) ([]string, error) {
	isDirty := make([]bool, len(d.Entries))
	err := each(n, len(d.Entries), 64, func(lo, hi int) error {
		files := newDirFiles(root)
		defer files.close()
		for i := lo; i < hi; i++ {
			dirty, err := entryDirty(r, root, files, parent, &d.Entries[i], boundary)
			if err != nil {
				return err
			}
			isDirty[i] = dirty
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var dirty []string
	for i, b := range isDirty {
		if b {
			dirty = append(dirty, d.Entries[i].Path)
		}
	}
	sort.Strings(dirty)
	return dirty, nil
}

// entryDirty is dirtyFiles for one entry e, which it updates when it
// learns e's file is clean.
func entryDirty(r *repo.Repo, root string, files *dirFiles, parent []revlog.ManifestEntry, e *dirstate.Entry, boundary dirstate.Timestamp) (bool, error) {
	if !e.MaybeClean() {
		return e.WCTracked || e.P1Tracked, nil
	}
	fi, err := files.lstat(e.Path)
	if err != nil {
		return true, nil
	}
	m, ok := repo.FindEntry(parent, e.Path)
	if !ok {
		return true, nil
	}
	if fsSymlinks && fi.link != (m.Flags == "l") || !fi.link && !fi.reg {
		return true, nil
	}
	if fsExec && !fi.link && (fi.perm&0o100 != 0) != (m.Flags == "x") {
		return true, nil
	}
	if clean, dirty := StatSays(e, fi.size, fi.mtime); clean || dirty {
		return dirty, nil
	}
	same, err := sameContent(r, root, m, fi.link)
	if err != nil || !same {
		return !same, err
	}
	Fixup(e, fi.mode(), fi.size, fi.mtime, boundary)
	return false, nil
}

// each calls do on n goroutines (internal/batchpool) for consecutive
// ranges [lo, hi) of at most chunk indexes covering [0, count), and
// returns the first error; it stops handing out ranges after one.
func each(n, count, chunk int, do func(lo, hi int) error) error {
	if count == 0 {
		return nil
	}
	type span struct{ lo, hi int }
	pool := batchpool.New(n, 2*n, 1, func(s span) error { return do(s.lo, s.hi) })
	for lo := 0; lo < count && pool.Failed() == nil; lo += chunk {
		pool.Add(span{lo, min(lo+chunk, count)})
	}
	return pool.Close()
}

// mtimeEqual is DirstateItem.mtime_likely_equal_to.
func mtimeEqual(rec, disk dirstate.Timestamp) bool {
	if rec.Sec != disk.Sec {
		return false
	}
	if rec.Nsec == 0 || disk.Nsec == 0 {
		return !rec.SecondAmbiguous
	}
	return rec.Nsec == disk.Nsec
}

// sameContent reports whether the file (or symlink) at m's path holds
// m's content, as hg's filectx.cmp decides (repo.SameFileData); an
// unreadable file does not.
func sameContent(r *repo.Repo, root string, m revlog.ManifestEntry, isLink bool) (bool, error) {
	p := filepath.Join(root, filepath.FromSlash(m.Path))
	var got []byte
	if isLink {
		target, err := os.Readlink(p)
		if err != nil {
			return false, nil
		}
		got = []byte(target)
	} else {
		file := getBuffer()
		defer putBuffer(file)
		var err error
		if got, err = file.read(p); err != nil {
			return false, nil
		}
	}
	index := getBuffer()
	defer putBuffer(index)
	fl, err := openFilelog(r, m.Path, index)
	if err != nil {
		return false, err
	}
	defer fl.Close()
	return repo.SameFileData(fl, m, got)
}

// writeWCache writes the .hg/wcache entries hg's checkexec and checklink
// leave (posix.py): checkisexec (exec bits set), checklink (a symlink to
// checklink-target) and checklink-target. Best effort, as in hg: they
// only spare hg its own checks.
func writeWCache(hgDir string) {
	dir := filepath.Join(hgDir, "wcache")
	isexec, link := filepath.Join(dir, "checkisexec"), filepath.Join(dir, "checklink")
	// Both are there after the first update: two lstats, which a mount's
	// kernel answers from its cache, where a mkdir's EEXIST took a round
	// trip to the daemon (0.3 ms of a 13 ms hgfs update on a mount).
	_, errExec := os.Lstat(isexec)
	_, errLink := os.Lstat(link)
	if errExec == nil && errLink == nil {
		return
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	if errExec != nil {
		// mkstemp's 0600, then the exec bits added.
		if f, err := os.OpenFile(isexec, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
			os.Chmod(isexec, 0o711)
		}
	}
	if errLink != nil {
		target := filepath.Join(dir, "checklink-target")
		if f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o666); err == nil {
			f.Close()
		}
		os.Symlink("checklink-target", link)
	}
}
