//go:build (linux && cgofuse) || windows

// The cgofuse adapter: the same fsnode core behind cgofuse's path-based
// FUSE API, which is what WinFsp offers on Windows (built without cgo:
// cgofuse loads WinFsp's DLL at run time) and what libfuse3's high-level
// API offers on Linux (-tags cgofuse,fuse3), where the tests run it.
//
// Paths: every call names its file by path ("/a/b"); the adapter walks it
// from the root with fsnode.Walk, which holds one reference on what it
// finds until the call drops it with Forget, so it keeps no inode state
// of its own. Paths in the control directory walk control.lookup. Open
// files and directories are kept by handle (cgofuse's fh is fsnode's
// Handle; a directory's is its inode, referenced until Releasedir), and a
// call carrying a handle uses it rather than the path, which may name an
// unlinked file.
//
// Errors: toErrno is the one mapping, by errno name to cgofuse's negative
// codes (WinFsp's numbering on Windows, Linux's on Linux).
//
// Differences from the go-fuse adapter: libfuse's high-level API hides
// open files it unlinks (see hide); cgofuse clears libfuse's config in its
// init callback, so the kernel caches no entries or attributes (every
// request reaches the adapter; correct, slower; the Linux build exists to
// test the adapter, go-fuse is the Linux default); read-only is enforced
// by the adapter (EROFS) as well as by the kernel where it can be; on
// Windows names Windows cannot hold are refused and not listed
// (WindowsName).

package mount

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// CgofuseAvailable reports whether this build has the cgofuse adapter
// (always on Windows; on Linux with -tags cgofuse,fuse3).
const CgofuseAvailable = true

// noFh is what cgofuse passes as the file handle when there is none.
const noFh = ^uint64(0)

// Handles of the control directory's files live in the top half of the
// 64-bit space; fsnode numbers its handles up from 1.
const virtualFhBase = 1 << 63

// cgoFS is the path-based adapter: each cgofuse call resolves its path to
// an fsnode inode (one Lookup per component, each reference dropped with
// Forget as soon as the next one is held), calls the fsnode method of the
// same name, and maps the error through toErrno. Open files and
// directories are remembered by handle, so calls that carry one never
// depend on the path (which may name an unlinked file).
type cgoFS struct {
	fuse.FileSystemBase // -ENOSYS for locks

	fsys     *fsnode.FS
	readOnly bool
	// winNames refuses names Windows cannot hold (EINVAL) and leaves them
	// out of listings; on for WinFsp, settable in tests.
	winNames bool
	// libfuseHide turns libfuse's "hide" renames into unlinks (see
	// isLibfuseHidden); on for libfuse, which cannot be told hard_remove
	// through cgofuse.
	libfuseHide bool
	ctl         *control                 // MOUNTPOINT/.hgfs (control.go): stats only
	caller      func() (uid, gid uint32) // fuseCaller; tests without FUSE replace it
	ready       chan struct{}            // closed by Init: the file system is mounted
	readyOnce   sync.Once

	mu       sync.Mutex
	files    map[uint64]*cgoFile // by cgofuse fh
	nextVFh  uint64
	hidden   map[string]fsnode.Ino // libfuse's hidden paths, each holding a reference
	borrowed map[fsnode.Ino]int    // references lent from hidden entries (see put)
}

// cgoFile is an open file: an fsnode handle and its inode, or the bytes of
// a control directory file read at open.
type cgoFile struct {
	h    fsnode.Handle
	ino  fsnode.Ino
	virt []byte
}

func newCgoFS(fsys *fsnode.FS, readOnly bool, info func() any) *cgoFS {
	// No views in the control directory, but virtual files read through
	// one (virtualwc_views.go).
	resolveVirtual(fsys, &views{open: cacheView(fsys)})
	return &cgoFS{
		fsys:     fsys,
		readOnly: readOnly,
		ctl:      newControl(info, virtualDirIno, nil),
		caller:   fuseCaller,
		ready:    make(chan struct{}),
		files:    map[uint64]*cgoFile{},
		hidden:   map[string]fsnode.Ino{},
		borrowed: map[fsnode.Ino]int{},
	}
}

var (
	_ fuse.FileSystemInterface = (*cgoFS)(nil)
	_ fuse.FileSystemOpenEx    = (*cgoFS)(nil)
	_ fuse.FileSystemRename3   = (*cgoFS)(nil)
	_ fuse.FileSystemChmod3    = (*cgoFS)(nil)
	_ fuse.FileSystemChown3    = (*cgoFS)(nil)
	_ fuse.FileSystemUtimens3  = (*cgoFS)(nil)
)

// toErrno is the adapter's only error conversion: fsnode's errors (a
// wrapped syscall.Errno, see errnoOf) to cgofuse's negative error codes.
// The mapping is by name, not by number: on Windows Go's syscall.Errno
// values are Go's own, and WinFsp's FUSE layer uses the MSVC numbering
// that cgofuse's constants carry, translating them to NTSTATUS codes
// (ENOENT to STATUS_OBJECT_NAME_NOT_FOUND, ENOTEMPTY to
// STATUS_DIRECTORY_NOT_EMPTY, ...).
func toErrno(err error) int {
	if err == nil {
		return 0
	}
	switch errnoOf(err) {
	case syscall.EPERM:
		return -fuse.EPERM
	case syscall.ENOENT:
		return -fuse.ENOENT
	case syscall.EINTR:
		return -fuse.EINTR
	case syscall.EIO:
		return -fuse.EIO
	case syscall.ENXIO:
		return -fuse.ENXIO
	case syscall.EBADF:
		return -fuse.EBADF
	case syscall.EAGAIN:
		return -fuse.EAGAIN
	case syscall.ENOMEM:
		return -fuse.ENOMEM
	case syscall.EACCES:
		return -fuse.EACCES
	case syscall.EBUSY:
		return -fuse.EBUSY
	case syscall.EEXIST:
		return -fuse.EEXIST
	case syscall.EXDEV:
		return -fuse.EXDEV
	case syscall.ENOTDIR:
		return -fuse.ENOTDIR
	case syscall.EISDIR:
		return -fuse.EISDIR
	case syscall.EINVAL:
		return -fuse.EINVAL
	case syscall.EFBIG:
		return -fuse.EFBIG
	case syscall.ENOSPC:
		return -fuse.ENOSPC
	case syscall.EROFS:
		return -fuse.EROFS
	case syscall.EMLINK:
		return -fuse.EMLINK
	case syscall.ERANGE:
		return -fuse.ERANGE
	case syscall.ENAMETOOLONG:
		return -fuse.ENAMETOOLONG
	case syscall.ENOSYS:
		return -fuse.ENOSYS
	case syscall.ENOTEMPTY:
		return -fuse.ENOTEMPTY
	case syscall.ELOOP:
		return -fuse.ELOOP
	case syscall.EOPNOTSUPP:
		return -fuse.EOPNOTSUPP
	case syscall.ENODATA:
		return -fuse.ENODATA
	case syscall.E2BIG:
		return -fuse.E2BIG
	case syscall.ENODEV:
		return -fuse.ENODEV
	}
	log.Printf("hgfs mount: error without a cgofuse code mapped to EIO: %v", err)
	return -fuse.EIO
}

// ctx is the context of a request; cgofuse has no interrupts.
func (a *cgoFS) ctx() context.Context { return context.Background() }

// creatorCtx also tells fsnode who owns the inodes a request creates.
func (a *cgoFS) creatorCtx() context.Context {
	uid, gid := a.caller()
	return fsnode.WithCaller(context.Background(), uid, gid)
}

// fuseCaller is the user making the current request; valid only inside
// a callback from the FUSE library.
func fuseCaller() (uid, gid uint32) {
	uid, gid, _ = fuse.Getcontext()
	return uid, gid
}

// cgoSplit turns a cgofuse path ("/a/b", always slash-separated, WinFsp
// included) into its components.
func cgoSplit(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// resolve walks p from the root and returns its attributes holding one
// lookup reference on the inode, which the caller drops with a.put.
func (a *cgoFS) resolve(p string) (fsnode.Attr, error) {
	ctx := a.ctx()
	if a.libfuseHide {
		a.mu.Lock()
		ino, ok := a.hidden[p]
		if ok {
			// Lend the reference the hidden entry holds; put returns it.
			a.borrowed[ino]++
		}
		a.mu.Unlock()
		if ok {
			attr, err := a.fsys.GetAttr(ctx, ino)
			if err != nil {
				a.put(ino)
			}
			return attr, err
		}
	}
	return a.fsys.Walk(ctx, strings.Trim(p, "/"))
}

// put drops the reference resolve (or a creating call) took on ino.
// Lookup counts are interchangeable, so a reference lent from a hidden
// entry may be returned by any put on the same inode.
func (a *cgoFS) put(ino fsnode.Ino) {
	if a.libfuseHide {
		a.mu.Lock()
		lent := a.borrowed[ino] > 0
		if lent {
			if a.borrowed[ino]--; a.borrowed[ino] == 0 {
				delete(a.borrowed, ino)
			}
		}
		a.mu.Unlock()
		if lent {
			return
		}
	}
	a.fsys.Forget(ino, 1)
}

// hide is libfuse's unlink of an open file, which it sends as a rename
// to a hidden name in the same directory (see isLibfuseHidden). The file
// is unlinked at once, so it has POSIX semantics (gone from the
// directory, nlink 0, open handles working); the hidden name keeps a
// reference to the inode for the requests libfuse still addresses to it
// (fstat on the open file arrives as getattr of the hidden path), until
// libfuse unlinks the hidden name after the last release.
func (a *cgoFS) hide(oldpath, hiddenPath string) int {
	dir, name, err := a.parent(oldpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	attr, err := a.fsys.Lookup(a.ctx(), dir, name)
	if err != nil {
		return toErrno(err)
	}
	if err := a.fsys.Unlink(a.ctx(), dir, name); err != nil {
		a.put(attr.Ino)
		return toErrno(err)
	}
	a.mu.Lock()
	old, had := a.hidden[hiddenPath]
	a.hidden[hiddenPath] = attr.Ino
	a.mu.Unlock()
	if had {
		a.put(old)
	}
	return 0
}

// unhide ends a hidden name (libfuse's unlink of it); false if p is not
// one.
func (a *cgoFS) unhide(p string) bool {
	if !a.libfuseHide {
		return false
	}
	a.mu.Lock()
	ino, ok := a.hidden[p]
	delete(a.hidden, p)
	a.mu.Unlock()
	if ok {
		a.put(ino)
	}
	return ok
}

// parent resolves the directory holding p and returns it with p's last
// component; the caller drops the reference with a.put.
func (a *cgoFS) parent(p string) (fsnode.Ino, string, error) {
	dir, name := path.Split("/" + strings.Trim(p, "/"))
	if name == "" {
		return 0, "", syscall.EINVAL // the root has no parent
	}
	attr, err := a.resolve(dir)
	if err != nil {
		return 0, "", err
	}
	if !attr.IsDir() {
		a.put(attr.Ino)
		return 0, "", syscall.ENOTDIR
	}
	return attr.Ino, name, nil
}

// newName checks a name about to be created: the control directory and
// libfuse's hidden names are reserved, Windows gets only names it can
// hold.
func (a *cgoFS) newName(p string) error {
	if a.readOnly {
		return syscall.EROFS
	}
	parts := cgoSplit(p)
	if len(parts) == 0 {
		return syscall.EEXIST
	}
	name := parts[len(parts)-1]
	if parts[0] == VirtualDirName {
		return errControl
	}
	if a.libfuseHide && isLibfuseHidden(name) {
		return syscall.EPERM
	}
	if a.winNames {
		if err := WindowsName(name); err != nil {
			return fmt.Errorf("%w: %v", syscall.EINVAL, err)
		}
	}
	return nil
}

// changing checks a request that changes or removes the existing p.
func (a *cgoFS) changing(p string) error {
	if a.readOnly {
		return syscall.EROFS
	}
	if parts := cgoSplit(p); len(parts) > 0 && parts[0] == VirtualDirName {
		return errControl
	}
	return nil
}

// ctlNode resolves p if it is in the control directory (in is false
// otherwise): a walk over control.lookup, which keeps no references.
func (a *cgoFS) ctlNode(p string) (x ctlNode, in bool, err error) {
	parts := cgoSplit(p)
	if len(parts) == 0 || parts[0] != VirtualDirName {
		return ctlNode{}, false, nil
	}
	for _, name := range parts[1:] {
		if x, err = a.ctl.lookup(x, name); err != nil {
			return ctlNode{}, true, err
		}
	}
	return x, true, nil
}

func cgoFillStat(attr fsnode.Attr, st *fuse.Stat_t) {
	*st = fuse.Stat_t{
		Ino:      uint64(attr.Ino),
		Mode:     attr.Mode,
		Nlink:    attr.Nlink,
		Uid:      attr.Uid,
		Gid:      attr.Gid,
		Size:     int64(attr.Size),
		Atim:     fuse.NewTimespec(attr.Atime),
		Mtim:     fuse.NewTimespec(attr.Mtime),
		Ctim:     fuse.NewTimespec(attr.Ctime),
		Birthtim: fuse.NewTimespec(attr.Ctime), // fsnode keeps no birth time
		Blksize:  4096,
		Blocks:   int64(attr.Blocks),
		Rdev:     attr.Rdev,
	}
}

func (a *cgoFS) file(fh uint64) *cgoFile {
	if fh == noFh {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.files[fh]
}

// inoOf resolves a request that may carry an open handle: the handle's
// inode (which may be unlinked) wins over the path. The bool says whether
// the caller must drop a reference.
func (a *cgoFS) inoOf(p string, fh uint64) (fsnode.Ino, bool, error) {
	if f := a.file(fh); f != nil && f.virt == nil {
		return f.ino, false, nil
	}
	attr, err := a.resolve(p)
	if err != nil {
		return 0, false, err
	}
	return attr.Ino, true, nil
}

// recovered answers a panicking handler with EIO (rc nil: no answer)
// and logs it (recover.go). Every handler defers it; those that only
// call another handler rely on that one's. cgofuse would recover the
// panic too, but silently.
func (a *cgoFS) recovered(rc *int) {
	if r := recover(); r != nil {
		handlerPanic(r)
		if rc != nil {
			*rc = -fuse.EIO
		}
	}
}

// Init is called once the file system is mounted.
func (a *cgoFS) Init() { a.readyOnce.Do(func() { close(a.ready) }) }

// Destroy is called when the file system is unmounted: hidden names
// libfuse did not get to unlink give their references back.
func (a *cgoFS) Destroy() {
	defer a.recovered(nil)
	a.mu.Lock()
	hidden := a.hidden
	a.hidden = map[string]fsnode.Ino{}
	a.mu.Unlock()
	for _, ino := range hidden {
		a.put(ino)
	}
}

func (a *cgoFS) Statfs(p string, out *fuse.Statfs_t) (rc int) {
	defer a.recovered(&rc)
	st, err := a.fsys.Statfs(a.ctx())
	if err != nil {
		return toErrno(err)
	}
	*out = fuse.Statfs_t{
		Bsize: uint64(st.Bsize), Frsize: uint64(st.Frsize),
		Blocks: st.Blocks, Bfree: st.Bfree, Bavail: st.Bavail,
		Files: st.Files, Ffree: st.Ffree, Favail: st.Ffree,
		Namemax: uint64(st.NameLen),
	}
	return 0
}

func (a *cgoFS) Getattr(p string, st *fuse.Stat_t, fh uint64) (rc int) {
	defer a.recovered(&rc)
	attr, err := a.getattr(p, fh)
	if err != nil {
		return toErrno(err)
	}
	cgoFillStat(attr, st)
	return 0
}

// getattr returns the attributes of p, or of the open file fh when there
// is one.
func (a *cgoFS) getattr(p string, fh uint64) (fsnode.Attr, error) {
	if x, in, err := a.ctlNode(p); in {
		if err != nil {
			return fsnode.Attr{}, err
		}
		attr, _, err := a.ctl.attr(x)
		return attr, err
	}
	if f := a.file(fh); f != nil && f.virt == nil {
		return a.fsys.GetAttr(a.ctx(), f.ino)
	}
	attr, err := a.resolve(p)
	if err == nil {
		a.put(attr.Ino)
	}
	return attr, err
}

func (a *cgoFS) Mkdir(p string, mode uint32) (rc int) {
	defer a.recovered(&rc)
	return a.makeNode(p, func(ctx context.Context, dir fsnode.Ino, name string) (fsnode.Attr, error) {
		return a.fsys.Mkdir(ctx, dir, name, mode&0o7777)
	})
}

// makeNode creates p with mk, given the caller's context, the parent
// directory and the new name; the reference mk takes is dropped.
func (a *cgoFS) makeNode(p string, mk func(ctx context.Context, dir fsnode.Ino, name string) (fsnode.Attr, error)) int {
	if err := a.newName(p); err != nil {
		return toErrno(err)
	}
	dir, name, err := a.parent(p)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	attr, err := mk(a.creatorCtx(), dir, name)
	if err != nil {
		return toErrno(err)
	}
	a.put(attr.Ino)
	return 0
}

func (a *cgoFS) Unlink(p string) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(p); err != nil {
		return toErrno(err)
	}
	if a.unhide(p) {
		return 0
	}
	dir, name, err := a.parent(p)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	return toErrno(a.fsys.Unlink(a.ctx(), dir, name))
}

func (a *cgoFS) Rmdir(p string) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(p); err != nil {
		return toErrno(err)
	}
	dir, name, err := a.parent(p)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	return toErrno(a.fsys.Rmdir(a.ctx(), dir, name))
}

func (a *cgoFS) Link(oldpath, newpath string) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(oldpath); err != nil {
		return toErrno(err)
	}
	if err := a.newName(newpath); err != nil {
		return toErrno(err)
	}
	src, err := a.resolve(oldpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(src.Ino)
	dir, name, err := a.parent(newpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	attr, err := a.fsys.Link(a.ctx(), src.Ino, dir, name)
	if err != nil {
		return toErrno(err)
	}
	a.put(attr.Ino)
	return 0
}

func (a *cgoFS) Symlink(target, newpath string) (rc int) {
	defer a.recovered(&rc)
	if err := a.newName(newpath); err != nil {
		return toErrno(err)
	}
	dir, name, err := a.parent(newpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	attr, err := a.fsys.Symlink(a.creatorCtx(), dir, name, target)
	if err != nil {
		return toErrno(err)
	}
	a.put(attr.Ino)
	return 0
}

func (a *cgoFS) Readlink(p string) (rc int, _ string) {
	defer a.recovered(&rc)
	if x, in, err := a.ctlNode(p); in {
		var target string
		if err == nil {
			target, err = a.ctl.readlink(x)
		}
		return toErrno(err), target
	}
	attr, err := a.resolve(p)
	if err != nil {
		return toErrno(err), ""
	}
	defer a.put(attr.Ino)
	target, err := a.fsys.Readlink(a.ctx(), attr.Ino)
	if err != nil {
		return toErrno(err), ""
	}
	return 0, target
}

func (a *cgoFS) Rename(oldpath, newpath string) int { return a.Rename3(oldpath, newpath, 0) }

// Rename3 is rename with renameat2's flags. On libfuse it also receives
// the "hide" renames that stand in for unlinking an open file (see
// isLibfuseHidden); they become unlinks, so the file keeps POSIX
// semantics: gone from its directory, open handles still working, nlink 0.
func (a *cgoFS) Rename3(oldpath, newpath string, flags uint32) (rc int) {
	defer a.recovered(&rc)
	if err := a.changing(oldpath); err != nil {
		return toErrno(err)
	}
	if a.libfuseHide && flags == 0 && isLibfuseHidden(path.Base(newpath)) && path.Dir(oldpath) == path.Dir(newpath) {
		return a.hide(oldpath, newpath)
	}
	if err := a.newName(newpath); err != nil {
		return toErrno(err)
	}
	// fsnode takes renameat2's Linux values; keep in sync with
	// fsnode.Rename's contract.
	const renameNoReplace, renameExchange = 1, 2
	var fl uint32
	switch flags {
	case 0:
	case fuse.RENAME_NOREPLACE:
		fl = renameNoReplace
	case fuse.RENAME_EXCHANGE:
		fl = renameExchange
	default:
		return -fuse.EINVAL
	}
	odir, oname, err := a.parent(oldpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(odir)
	ndir, nname, err := a.parent(newpath)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(ndir)
	return toErrno(a.fsys.Rename(a.ctx(), odir, oname, ndir, nname, fl))
}

// setattr applies in to p, or to the open file fh when there is one.
func (a *cgoFS) setattr(p string, fh uint64, in fsnode.SetAttr) int {
	if err := a.changing(p); err != nil {
		return toErrno(err)
	}
	ino, ref, err := a.inoOf(p, fh)
	if err != nil {
		return toErrno(err)
	}
	if ref {
		defer a.put(ino)
	}
	_, err = a.fsys.SetAttr(a.ctx(), ino, in)
	return toErrno(err)
}

func (a *cgoFS) Chmod(p string, mode uint32) int { return a.Chmod3(p, mode, noFh) }

func (a *cgoFS) Chmod3(p string, mode uint32, fh uint64) (rc int) {
	defer a.recovered(&rc)
	mode &= 0o7777
	return a.setattr(p, fh, fsnode.SetAttr{Mode: &mode})
}

func (a *cgoFS) Chown(p string, uid, gid uint32) int { return a.Chown3(p, uid, gid, noFh) }

// Chown3: an id of -1 leaves it alone, as chown(2) does.
func (a *cgoFS) Chown3(p string, uid, gid uint32, fh uint64) (rc int) {
	defer a.recovered(&rc)
	var in fsnode.SetAttr
	if uid != ^uint32(0) {
		in.Uid = &uid
	}
	if gid != ^uint32(0) {
		in.Gid = &gid
	}
	return a.setattr(p, fh, in)
}

func (a *cgoFS) Utimens(p string, tmsp []fuse.Timespec) int { return a.Utimens3(p, tmsp, noFh) }

// Utimens3: cgofuse passes UTIME_NOW and UTIME_OMIT through unless both
// times are UTIME_NOW.
func (a *cgoFS) Utimens3(p string, tmsp []fuse.Timespec, fh uint64) (rc int) {
	defer a.recovered(&rc)
	if len(tmsp) != 2 {
		return -fuse.EINVAL
	}
	conv := func(ts fuse.Timespec) *time.Time {
		switch ts.Nsec {
		case fuse.UTIME_OMIT:
			return nil
		case fuse.UTIME_NOW:
			t := time.Now()
			return &t
		}
		t := ts.Time()
		return &t
	}
	return a.setattr(p, fh, fsnode.SetAttr{Atime: conv(tmsp[0]), Mtime: conv(tmsp[1])})
}

func (a *cgoFS) Truncate(p string, size int64, fh uint64) (rc int) {
	defer a.recovered(&rc)
	if size < 0 {
		return -fuse.EINVAL
	}
	sz := uint64(size)
	return a.setattr(p, fh, fsnode.SetAttr{Size: &sz})
}

// accMode masks the access mode of syscall open flags (Windows has no
// syscall.O_ACCMODE; the three values are 0, 1, 2 everywhere).
const accMode = syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR

// cgoOpenFlags translates cgofuse's O_* values (WinFsp's differ from Go's
// syscall ones on Windows) to the syscall values fsnode takes.
func cgoOpenFlags(fl int) int {
	var out int
	switch fl & fuse.O_ACCMODE {
	case fuse.O_WRONLY:
		out = syscall.O_WRONLY
	case fuse.O_RDWR:
		out = syscall.O_RDWR
	default:
		out = syscall.O_RDONLY
	}
	for _, m := range [][2]int{
		{fuse.O_APPEND, syscall.O_APPEND},
		{fuse.O_CREAT, syscall.O_CREAT},
		{fuse.O_EXCL, syscall.O_EXCL},
		{fuse.O_TRUNC, syscall.O_TRUNC},
	} {
		if fl&m[0] != 0 {
			out |= m[1]
		}
	}
	return out
}

func (a *cgoFS) addFile(f *cgoFile) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	fh := uint64(f.h)
	if f.virt != nil {
		a.nextVFh++
		fh = virtualFhBase + a.nextVFh
	}
	a.files[fh] = f
	return fh
}

func (a *cgoFS) Create(p string, flags int, mode uint32) (int, uint64) {
	fi := fuse.FileInfo_t{Flags: flags}
	errc := a.CreateEx(p, mode, &fi)
	return errc, fi.Fh
}

func (a *cgoFS) CreateEx(p string, mode uint32, fi *fuse.FileInfo_t) (rc int) {
	defer a.recovered(&rc)
	if err := a.newName(p); err != nil {
		return toErrno(err)
	}
	dir, name, err := a.parent(p)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(dir)
	attr, h, err := a.fsys.Create(a.creatorCtx(), dir, name, mode&0o7777, cgoOpenFlags(fi.Flags)|syscall.O_CREAT)
	if err != nil {
		return toErrno(err)
	}
	a.put(attr.Ino)
	fi.Fh = a.addFile(&cgoFile{h: h, ino: attr.Ino})
	return 0
}

func (a *cgoFS) Open(p string, flags int) (int, uint64) {
	fi := fuse.FileInfo_t{Flags: flags}
	errc := a.OpenEx(p, &fi)
	return errc, fi.Fh
}

func (a *cgoFS) OpenEx(p string, fi *fuse.FileInfo_t) (rc int) {
	defer a.recovered(&rc)
	flags := cgoOpenFlags(fi.Flags)
	if x, in, err := a.ctlNode(p); in {
		var data []byte
		if err == nil {
			data, err = a.ctl.open(x, flags)
		}
		if err != nil {
			return toErrno(err)
		}
		// Direct I/O: content generated at each open is read to its end
		// whatever size the last getattr reported.
		fi.Fh = a.addFile(&cgoFile{virt: append([]byte{}, data...)})
		fi.DirectIo = true
		return 0
	}
	if a.readOnly && (flags&accMode != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0) {
		return -fuse.EROFS
	}
	attr, err := a.resolve(p)
	if err != nil {
		return toErrno(err)
	}
	defer a.put(attr.Ino)
	h, err := a.fsys.Open(a.ctx(), attr.Ino, flags)
	if err != nil {
		return toErrno(err)
	}
	fi.Fh = a.addFile(&cgoFile{h: h, ino: attr.Ino})
	return 0
}

// Read fills buff as far as the file goes (fsnode reads whole ranges up
// to EOF): outside direct I/O a short read means end of file to the
// kernel.
func (a *cgoFS) Read(p string, buff []byte, ofst int64, fh uint64) (rc int) {
	defer a.recovered(&rc)
	f := a.file(fh)
	if f == nil {
		return -fuse.EBADF
	}
	if f.virt != nil {
		if ofst >= int64(len(f.virt)) || ofst < 0 {
			return 0
		}
		return copy(buff, f.virt[ofst:])
	}
	n, err := a.fsys.Read(a.ctx(), f.h, ofst, buff)
	if err != nil {
		return toErrno(err)
	}
	return n
}

func (a *cgoFS) Write(p string, buff []byte, ofst int64, fh uint64) (rc int) {
	defer a.recovered(&rc)
	f := a.file(fh)
	if f == nil || f.virt != nil {
		return -fuse.EBADF
	}
	n, err := a.fsys.Write(a.ctx(), f.h, ofst, buff)
	if err != nil && n == 0 {
		return toErrno(err)
	}
	return n
}

func (a *cgoFS) Flush(p string, fh uint64) (rc int) {
	defer a.recovered(&rc)
	f := a.file(fh)
	if f == nil {
		return -fuse.EBADF
	}
	if f.virt != nil {
		return 0
	}
	return toErrno(a.fsys.Flush(a.ctx(), f.h))
}

func (a *cgoFS) Release(p string, fh uint64) (rc int) {
	defer a.recovered(&rc)
	a.mu.Lock()
	f := a.files[fh]
	delete(a.files, fh)
	a.mu.Unlock()
	if f == nil {
		return -fuse.EBADF
	}
	if f.virt == nil {
		a.fsys.Release(f.h)
	}
	return 0
}

func (a *cgoFS) Fsync(p string, datasync bool, fh uint64) (rc int) {
	defer a.recovered(&rc)
	f := a.file(fh)
	if f == nil {
		return -fuse.EBADF
	}
	if f.virt != nil {
		return 0
	}
	return toErrno(a.fsys.Fsync(a.ctx(), f.h, datasync))
}

// Opendir keeps a lookup reference on the directory until Releasedir, so
// Readdir needs no path walk; the fh is the inode number.
func (a *cgoFS) Opendir(p string) (rc int, _ uint64) {
	defer a.recovered(&rc)
	if x, in, err := a.ctlNode(p); in {
		if err == nil && !x.isDir() {
			err = syscall.ENOTDIR
		}
		return toErrno(err), noFh
	}
	attr, err := a.resolve(p)
	if err != nil {
		return toErrno(err), noFh
	}
	if !attr.IsDir() {
		a.put(attr.Ino)
		return -fuse.ENOTDIR, noFh
	}
	return 0, uint64(attr.Ino)
}

func (a *cgoFS) Releasedir(p string, fh uint64) (rc int) {
	defer a.recovered(&rc)
	if fh != noFh {
		a.put(fsnode.Ino(fh))
	}
	return 0
}

// Readdir lists "." and ".." at offsets 1 and 2, then fsnode's entries
// with their stable cookies as offsets, so a listing resumed from any
// offset sees each surviving entry once (libfuse passes the kernel's
// offsets through; WinFsp reads a directory in one call). Each entry
// carries its attributes (readdir-plus), sparing WinFsp a getattr per
// file. The control directory is never listed.
func (a *cgoFS) Readdir(p string, fill func(name string, stat *fuse.Stat_t, ofst int64) bool, ofst int64, fh uint64) (rc int) {
	defer a.recovered(&rc)
	if x, in, err := a.ctlNode(p); in {
		var ents []ctlEntry
		if err == nil {
			ents, err = a.ctl.entries(x)
		}
		if err != nil || ofst != 0 {
			return toErrno(err)
		}
		for _, e := range ents {
			var st fuse.Stat_t
			if e.Node != nil {
				if attr, _, err := a.ctl.attr(*e.Node); err == nil {
					cgoFillStat(attr, &st)
				}
			}
			if !fill(e.Name, &st, 0) {
				break
			}
		}
		return 0
	}
	ctx := a.ctx()
	dir := fsnode.Ino(fh)
	if fh == noFh {
		attr, err := a.resolve(p)
		if err != nil {
			return toErrno(err)
		}
		defer a.put(attr.Ino)
		dir = attr.Ino
	}
	off := uint64(max(ofst, 0))
	for i, name := range []string{".", ".."} {
		if off > uint64(i) {
			continue
		}
		st := fuse.Stat_t{Mode: fuse.S_IFDIR}
		if name == "." {
			st.Ino = uint64(dir)
		}
		if !fill(name, &st, int64(i+1)) {
			return 0
		}
		off = uint64(i + 1)
	}
	if off <= 2 {
		off = 0
	}
	ents, err := a.fsys.ReadDir(ctx, dir, off)
	if err != nil {
		return toErrno(err)
	}
	for _, e := range ents {
		if a.winNames && WindowsName(e.Name) != nil {
			log.Printf("hgfs mount: %s/%s: name not representable on Windows; not listed", p, e.Name)
			continue
		}
		var st fuse.Stat_t
		attr, err := a.fsys.Lookup(ctx, dir, e.Name)
		switch {
		case err == nil:
			a.put(attr.Ino)
			cgoFillStat(attr, &st)
		case fsnode.ToErrno(err) == syscall.ENOENT:
			continue // gone since the listing
		default:
			// Listed all the same (a damaged index answers EIO when
			// the entry is opened, not by hiding it).
			st = fuse.Stat_t{Mode: e.Mode, Ino: uint64(e.Ino)}
		}
		if !fill(e.Name, &st, int64(e.Off)) {
			break
		}
	}
	return 0
}

func (a *cgoFS) Fsyncdir(p string, datasync bool, fh uint64) (rc int) {
	defer a.recovered(&rc)
	return toErrno(a.fsys.Sync(a.ctx()))
}

// Access answers access(2) with the raw adapter's check
// (fsnode.Attr.CheckAccess). On Linux libfuse mounts with
// default_permissions, so the kernel checks permissions from the modes
// Getattr reports and sends no ACCESS; a call that comes anyway is
// checked for the caller fuse.Getcontext names. On Windows WinFsp checks
// every open against the security descriptor it builds from the owner
// and mode Getattr reports, and names the caller only in the requests
// that create (elsewhere its context reads uid 0 and gid 0, which would
// pass as root). Decision: on Windows the check is made as the file's
// owner, the user who mounted (uid=-1 in cgofuseArgs) and the one user
// WinFsp's descriptor gives the owner bits to; so a file without write
// bits refuses W_OK, as its descriptor refuses writing, and nothing
// passes for lack of a caller.
func (a *cgoFS) Access(p string, mask uint32) (rc int) {
	defer a.recovered(&rc)
	attr, err := a.getattr(p, noFh)
	if err != nil {
		return toErrno(err)
	}
	uid, gid := attr.Uid, attr.Gid
	if cgofuseCallerKnown {
		uid, gid = a.caller()
	}
	return toErrno(attr.CheckAccess(mask, uid, gid))
}

// CgofuseServer is a live mount served through cgofuse (WinFsp on
// Windows, libfuse3 on Linux).
type CgofuseServer struct {
	host       *fuse.FileSystemHost
	fs         *cgoFS
	fsys       *fsnode.FS
	mountpoint string
	done       chan struct{}
	err        error // why host.Mount returned, set before done closes
	unmountMu  sync.Mutex
}

// MountCgofuse mounts fsys at mountpoint through cgofuse and returns once
// the file system answers requests. On Windows mountpoint is a drive
// letter ("X:") or a directory that does not exist yet (WinFsp creates
// it); elsewhere an existing directory. As with Mount, the caller keeps
// ownership of fsys and closes it after Wait returns.
func MountCgofuse(fsys *fsnode.FS, mountpoint string, opt Options) (*CgofuseServer, error) {
	mp, err := cgofuseMountpoint(mountpoint)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	s := &CgofuseServer{fsys: fsys, mountpoint: mp, done: make(chan struct{})}
	s.fs = newCgoFS(fsys, opt.ReadOnly, func() any {
		st := fsys.Stats()
		return &Info{Pid: os.Getpid(), Mountpoint: mp, Source: opt.FsName, Kind: "cache", ReadOnly: opt.ReadOnly, Stats: &st}
	})
	s.fs.winNames = cgofuseWindowsNames
	s.fs.libfuseHide = cgofuseLibfuseHide
	s.host = fuse.NewFileSystemHost(s.fs)
	s.host.SetCapReaddirPlus(true)
	s.host.SetUseIno(true)
	args := cgofuseArgs(opt)
	// libfuse's fuse_main changes the process's working directory to "/",
	// as a daemon would; hgfs serves in its own process and puts it back
	// once the mount is up.
	wd, wdErr := os.Getwd()
	go func() {
		defer close(s.done)
		defer func() {
			// cgofuse panics when it cannot load the FUSE library.
			if r := recover(); r != nil {
				s.err = fmt.Errorf("%w: %s (%v)", ErrFuseLibraryMissing, fuseLibraryMissing, r)
			}
		}()
		if !s.host.Mount(mp, args) {
			s.err = errors.New("the FUSE library refused the mount (see its message above)")
		}
	}()
	select {
	case <-s.fs.ready:
		if wdErr == nil {
			if err := os.Chdir(wd); err != nil {
				_ = s.Unmount()
				return nil, fmt.Errorf("mount %s: restoring the working directory: %w", mp, err)
			}
		}
		return s, nil
	case <-s.done:
		if s.err == nil {
			s.err = errors.New("file system ended before it was mounted")
		}
		return nil, fmt.Errorf("mount %s: %w", mp, s.err)
	}
}

// Mountpoint returns the mount point as mounted (absolute, or a drive).
func (s *CgofuseServer) Mountpoint() string { return s.mountpoint }

// Unmount drains fsys (everything written so far becomes durable), then
// unmounts and waits for the file system loop to end.
func (s *CgofuseServer) Unmount() error {
	s.unmountMu.Lock()
	defer s.unmountMu.Unlock()
	select {
	case <-s.done:
		return nil
	default:
	}
	// As Server.Unmount: a failed drain does not keep the mount.
	var syncErr error
	if err := s.fsys.Sync(context.Background()); err != nil {
		syncErr = fmt.Errorf("unmount %s: sync: %w", s.mountpoint, err)
	}
	if err := cgofuseUnmount(s, false); err != nil {
		return errors.Join(syncErr, err)
	}
	<-s.done
	return syncErr
}

// LazyUnmount detaches the mount at once even while files are open.
func (s *CgofuseServer) LazyUnmount() error { return cgofuseUnmount(s, true) }

// Wait blocks until the mount is gone.
func (s *CgofuseServer) Wait() { <-s.done }

// Done is closed when the mount is gone.
func (s *CgofuseServer) Done() <-chan struct{} { return s.done }
