//go:build linux

package mount

// hgfs update inside the daemon (UpdateXattr): the working copy at the
// root of a cache mount moves to another changeset without a request
// through the kernel per file. The daemon has what a process starting
// hgfs update lacks: both manifests parsed in hgview's cache, and
// knowledge of which files are virtual and name their revision (those
// are clean without a look at their bytes). It reads the dirstate from
// the cache, checks every tracked file (or only those that changed since
// its last update, update_watch_linux.go), applies the plan worktree.Update
// would (worktree.Changes and NextDirstate: the same files written and
// removed, the same dirstate), and invalidates what the kernel cached of
// each name and inode it changed. Its cost is the dirstate's and the
// materialized files', not the tree's.
//
// It declines, before changing anything, whatever the update through the
// files handles with more care: a dirstate-v2 working copy (the caller
// does not ask), a merge in progress, added, removed or merged files,
// untracked files where the target has a file, something other than a
// file or a symlink where one is written, an unknown parent. The
// caller then updates through the files as before, holding the same
// wlock, which it took before asking.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/hgview"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/worktree"
)

// maxReplyDirty bounds the dirty paths a reply names (hg's message
// names five).
const maxReplyDirty = 5

// declined is an update the daemon leaves to the caller, and why.
type declined string

func (d declined) Error() string { return string(d) }

// updateXattr answers a read of an UpdateXattr name on the root.
func (r *rawFS) updateXattr(h *fuse.InHeader, name string, dest []byte) (uint32, fuse.Status) {
	if h.NodeId != fuse.FUSE_ROOT_ID || r.virt.c.views == nil {
		return 0, fuse.ENOATTR
	}
	if len(dest) == 0 {
		// A size query would run the update twice: callers read into a
		// buffer of MaxVirtualBatch bytes at once.
		return 0, fuse.ERANGE
	}
	q, err := ParseUpdateRequest(name)
	if err != nil {
		return 0, fuse.EINVAL
	}
	r.updating.Lock()
	defer r.updating.Unlock()
	// Not cancelled by an interrupt of the request: an update stopped
	// midway would leave more to repair than one that finishes, which
	// takes milliseconds.
	u := &daemonUpdate{r: r, ctx: fsnode.WithCaller(context.Background(), h.Uid, h.Gid), q: q}
	reply, err := u.run()
	u.forgetDirs()
	var d declined
	switch {
	case errors.As(err, &d):
		reply = UpdateReply{Declined: string(d)}
	case err != nil:
		// In words, as the update through the files would say it.
		reply = UpdateReply{Failed: err.Error()}
	}
	return XattrReply(reply.Encode(), dest)
}

// daemonUpdate is one update request being answered.
type daemonUpdate struct {
	r   *rawFS
	ctx context.Context
	q   UpdateRequest
	v   *hgview.View
	hg  fsnode.Attr // .hg

	dirs     map[fsnode.Ino]bool // directories whose entries changed
	boundary dirstate.Timestamp  // the time before the dirty check (worktree.Fixup)
	// found: the inode of each dirstate entry the dirty check looked
	// at, and of its directory (0 where it found none), by index of the
	// entries, for the Watch (update_watch_linux.go).
	found []foundIno
}

type foundIno struct{ ino, dir fsnode.Ino }

func (u *daemonUpdate) run() (UpdateReply, error) {
	start := time.Now()
	fsys := u.r.fsys
	v, err := u.r.virt.c.views.view()
	if err != nil {
		return UpdateReply{}, declined(fmt.Sprintf("no repository: %v", err))
	}
	u.v = v
	if u.hg, err = fsys.LookupPath(u.ctx, ".hg"); err != nil || !u.hg.IsDir() {
		return UpdateReply{}, declined("no .hg directory")
	}
	data, err := fsys.AppendFile(u.ctx, dirstateBufs.get(0), ".hg/dirstate")
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		return UpdateReply{}, err
	}
	defer dirstateBufs.put(data) // parsed, if at all, into a copy
	// What changed since the last update, if the Watch knows it; the
	// dirstate written last is kept only by an update that succeeds,
	// with what it reads back as (keepParsed).
	changed, known, old := u.r.wc.begin(fsys, data)
	var kept []byte
	var keptParsed *dirstate.Dirstate
	defer func() {
		u.r.wc.end(kept)
		u.r.keepParsed(keptParsed)
	}()
	switch {
	case old != nil:
	case err != nil: // none: an empty one, as hg reads it
		old = &dirstate.Dirstate{}
	default:
		if old, err = dirstate.ParseV1(data); err != nil {
			return UpdateReply{}, declined(err.Error())
		}
	}
	defer func() {
		entryBufs.put(old.Entries)
		foundBufs.put(u.found)
	}()
	if old.Parents[1] != revlog.NullNode {
		return UpdateReply{}, declined("a merge is in progress")
	}
	if u.q.Target == revlog.NullNode {
		return UpdateReply{}, declined("the target is the null revision")
	}
	to, branch, err := v.ChangesetManifest(u.q.Target)
	if err != nil {
		return UpdateReply{}, declined(err.Error())
	}
	if err := u.r.checkManifest(u.q.Target, to); err != nil {
		return UpdateReply{}, declined(err.Error())
	}
	var from []revlog.ManifestEntry
	if p1 := old.Parents[0]; p1 != revlog.NullNode {
		if from, _, err = v.ChangesetManifest(p1); err != nil {
			return UpdateReply{}, declined(err.Error())
		}
	}

	// Every file is looked at unless the Watch names the ones that may
	// have changed.
	var sel []int
	if known {
		var all bool
		if sel, all = selectChanged(old.Entries, changed); all {
			sel = nil
		}
	}
	if sel == nil {
		u.r.fullChecks.Add(1)
	}
	dirty, err := u.dirty(old, from, sel)
	if err != nil {
		return UpdateReply{}, err
	}
	if len(dirty) > 0 && !u.q.Clean {
		n := min(len(dirty), maxReplyDirty)
		return UpdateReply{Dirty: dirty[:n], MoreDirty: len(dirty) > n}, nil
	}
	oldIndex := old.Index()
	gets, removes := worktree.Changes(from, to, oldIndex, dirty)
	if err := u.checkPlan(gets, removes); err != nil {
		return UpdateReply{}, err
	}
	// Every file's revision is rebuilt before anything changes, as the
	// update through the files sizes them all first: a damaged filelog
	// fails the update with the working copy untouched. Only sizes and
	// link targets are kept (hgview's cache holds the texts it can).
	sizes, targets, err := u.revisions(gets)
	if err != nil {
		return UpdateReply{}, err
	}

	// From here on the working copy changes: an error leaves it as an
	// interrupted hg update does, with .hg/updatestate naming the target.
	if err := u.writeHg("updatestate", []byte(u.q.Target.String())); err != nil {
		return UpdateReply{}, err
	}
	// The mtime a clone's checkout gives (cmd/hgfs mountVirtual): the
	// second before the update began, so that the dirstate records
	// every file and hg status reads none back.
	mtime := time.Unix(start.Unix()-1, 0)
	if err := u.remove(removes); err != nil {
		return UpdateReply{}, err
	}
	written, err := u.write(gets, sizes, targets, mtime, oldIndex)
	if err != nil {
		return UpdateReply{}, err
	}
	now := dirstate.TimestampOf(time.Now().UnixNano())
	nd := worktree.NextDirstateIn(entryBufs.get(len(to)), u.q.Target, to, gets, written, oldIndex, now, false)
	if err := u.writeHg("branch", dirstate.BranchFile(branch)); err != nil {
		return UpdateReply{}, err
	}
	encoded, err := u.writeDirstate(nd)
	if err != nil {
		return UpdateReply{}, err
	}
	if err := fsys.Unlink(u.ctx, u.hg.Ino, "updatestate"); err != nil {
		return UpdateReply{}, err
	}
	u.forgetName(u.hg.Ino, "updatestate")
	u.watch(old.Entries, sel, gets)
	kept, keptParsed = encoded, nd
	u.r.updates.Add(1)
	return UpdateReply{Updated: len(gets), Removed: len(removes), Branch: branch}, nil
}

// rewriteMtime is the mtime a rewritten file gets: mtime, or the second
// before where old records mtime's second for it. An update stopped
// midway leaves the old dirstate, which must claim no rewritten file
// clean, and a file whose size and mtime match its entry is clean to hg
// status without a look at its bytes. The update through the files
// forgets the touched entries' mtimes in a dirstate written before any
// file changes (worktree.MarkTouched); the daemon chooses the mtimes
// instead, which spares that write (3 to 14 ms of 20,000 entries, paid
// whenever updates follow each other within a second).
func rewriteMtime(mtime time.Time, e *dirstate.Entry) time.Time {
	if e != nil && e.HasMtime && e.Mtime.Sec == dirstate.TimestampOf(mtime.UnixNano()).Sec {
		return mtime.Add(-time.Second)
	}
	return mtime
}

// dirty lists the tracked files with uncommitted changes, sorted, as
// hg status would find them; it declines entries it does not judge.
// Each file is judged as worktree's dirty check judges it: by its size
// and mtime against its entry (worktree.StatSays), else by its content,
// recording what the content vouched for (worktree.Fixup); a virtual file
// naming its path's revision in the parent has that content without a
// look at its bytes.
func (u *daemonUpdate) dirty(old *dirstate.Dirstate, from []revlog.ManifestEntry, sel []int) ([]string, error) {
	u.boundary = dirstate.TimestampOf(time.Now().UnixNano())
	u.found = foundBufs.get(len(old.Entries))[:len(old.Entries)]
	clear(u.found)
	var look []lookAt
	// The walk runs on every core, a run of entries each.
	n := len(old.Entries)
	if sel != nil {
		n = len(sel)
	}
	parts := make([]walked, max(1, min(runtime.GOMAXPROCS(0), n/4096)))
	var wg sync.WaitGroup
	for k := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := k*n/len(parts), (k+1)*n/len(parts)
			if sel == nil {
				parts[k] = u.walkEntries(old.Entries, nil, lo, hi, from)
			} else {
				parts[k] = u.walkEntries(old.Entries, sel[lo:hi], 0, hi-lo, from)
			}
		}()
	}
	wg.Wait()
	var dirty []string
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
		dirty = append(dirty, p.dirty...)
		look = append(look, p.look...)
	}
	for _, l := range look {
		e, mode := l.e, dirstate.ModeRegular|l.a.Mode&0o777
		var same bool
		var err error
		if l.a.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			mode = dirstate.ModeSymlink | l.a.Mode&0o777
			same, err = u.sameLink(l.a.Ino, e.Path, l.node)
		} else {
			same, err = u.sameContent(e.Path, l.node)
		}
		if err != nil {
			return nil, err
		}
		if !same {
			dirty = append(dirty, e.Path)
			continue
		}
		worktree.Fixup(e, mode, int64(l.a.Size), dirstate.TimestampOf(l.a.Mtime.UnixNano()), u.boundary)
	}
	sort.Strings(dirty)
	return dirty, nil
}

// lookAt is a materialized file (or one naming another revision) the
// dirty check must judge by its size and mtime or its content.
type lookAt struct {
	e    *dirstate.Entry
	node revlog.Node
	a    fsnode.Attr
}

// walked is what walkEntries found.
type walked struct {
	dirty []string
	look  []lookAt
	err   error
}

// walkEntries is the dirty check's walk of entries lo to hi (a run of
// the dirstate's, or of the indexes sel names) under one lock of the
// cache's tree: the dirty files it finds and the files left to judge.
func (u *daemonUpdate) walkEntries(entries []dirstate.Entry, sel []int, lo, hi int, from []revlog.ManifestEntry) (p walked) {
	index := func(i int) int { return lo + i }
	if sel != nil {
		index = func(i int) int { return sel[lo+i] }
	}
	// Both the entries (as hgfs writes them; hg's order is its own) and
	// the manifest are usually sorted: the parent's entry is then the
	// next one, else it is searched for.
	fi := -1
	u.r.fsys.LookupStates(hi-lo, func(i int) string { return entries[index(i)].Path }, func(i int, st fsnode.PathState) {
		if p.err != nil {
			return
		}
		i = index(i)
		e := &entries[i]
		if st.Err == nil {
			u.found[i] = foundIno{st.Attr.Ino, st.Dir}
		}
		if !e.MaybeClean() {
			p.err = declined("the dirstate has added, removed or merged files")
			return
		}
		if reserved(e.Path) {
			p.err = declined("the dirstate names the mount's " + VirtualDirName)
			return
		}
		var m revlog.ManifestEntry
		ok := false
		if fi >= 0 && fi < len(from) && from[fi].Path == e.Path {
			m, ok = from[fi], true
			fi++
		} else if m, ok = repo.FindEntry(from, e.Path); ok {
			fi = sort.Search(len(from), func(j int) bool { return from[j].Path > e.Path })
		}
		switch {
		case !ok:
			p.dirty = append(p.dirty, e.Path)
		case st.Err != nil && !errors.Is(st.Err, syscall.ENOENT) && !errors.Is(st.Err, syscall.ENOTDIR):
			p.err = st.Err
		case st.Err != nil:
			p.dirty = append(p.dirty, e.Path)
		case (st.Attr.Mode&syscall.S_IFMT == syscall.S_IFLNK) != (m.Flags == "l"),
			m.Flags != "l" && st.Attr.Mode&syscall.S_IFMT != syscall.S_IFREG,
			m.Flags != "l" && (st.Attr.Mode&0o100 != 0) != (m.Flags == "x"):
			p.dirty = append(p.dirty, e.Path)
		default:
			// As hg status (and worktree's dirty check): the size and
			// mtime against the entry, else the content, and what the
			// content vouched for recorded (worktree.Fixup).
			size, mtime := int64(st.Attr.Size), dirstate.TimestampOf(st.Attr.Mtime.UnixNano())
			clean, isDirty := worktree.StatSays(e, size, mtime)
			switch {
			case clean:
			case isDirty:
				p.dirty = append(p.dirty, e.Path)
			case m.Flags != "l" && st.Virtual && st.Ref.Path == e.Path && st.Ref.Node == m.Node:
				// The parent's revision itself, without a look.
				worktree.Fixup(e, dirstate.ModeRegular|st.Attr.Mode&0o777, size, mtime, u.boundary)
			default:
				// Materialized, a symlink, or naming another revision:
				// judged after the walk, which holds the tree's lock.
				p.look = append(p.look, lookAt{e, m.Node, st.Attr})
			}
		}
	})
	return p
}

// sameContent compares the working file p with its revision node.
func (u *daemonUpdate) sameContent(p string, node revlog.Node) (bool, error) {
	want, err := u.v.FileRevision(p, node)
	if err != nil {
		return false, err
	}
	got, err := u.r.fsys.ReadFile(u.ctx, p)
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, want), nil
}

// reserved reports whether working file p is under the name the mount
// reserves at its root (its control directory, which the mount refuses
// to create or change through the kernel; the daemon writes the cache
// directly, so it must refuse too).
func reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == VirtualDirName
}

// sameLink compares the target of symlink ino with revision node of p.
func (u *daemonUpdate) sameLink(ino fsnode.Ino, p string, node revlog.Node) (bool, error) {
	want, err := u.v.FileRevision(p, node)
	if err != nil {
		return false, err
	}
	got, err := u.r.fsys.Readlink(u.ctx, ino)
	if errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	return got == string(want), err
}

// checkPlan declines, before anything changes, a plan whose files the
// daemon would not write as the update through the files would: where a
// file is written, something but a symlink or a regular file linked
// once; anything where a new file goes (hg compares untracked files); a
// file where a directory is needed; something but a file or a symlink
// where one is removed.
func (u *daemonUpdate) checkPlan(gets []worktree.Change, removes []string) error {
	fsys := u.r.fsys
	for _, g := range gets {
		if reserved(g.Entry.Path) {
			return declined("the target has a file in the mount's " + VirtualDirName)
		}
		a, err := fsys.LookupPath(u.ctx, g.Entry.Path)
		typ := a.Mode & syscall.S_IFMT
		switch {
		case err == nil && !g.Exists:
			return declined("an untracked file is in the way of " + g.Entry.Path)
		case err == nil && typ != syscall.S_IFLNK && (typ != syscall.S_IFREG || a.Nlink != 1):
			return declined("not a regular file: " + g.Entry.Path)
		case err == nil:
			continue
		case !errors.Is(err, syscall.ENOENT):
			return declined(fmt.Sprintf("%s: %v", g.Entry.Path, err))
		}
		for dir := path.Dir(g.Entry.Path); dir != "."; dir = path.Dir(dir) {
			a, err := fsys.LookupPath(u.ctx, dir)
			if err == nil && !a.IsDir() {
				return declined("not a directory: " + dir)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.ENOENT) {
				return declined(fmt.Sprintf("%s: %v", dir, err))
			}
		}
	}
	for _, p := range removes {
		if reserved(p) {
			return declined("a file to remove is in the mount's " + VirtualDirName)
		}
		a, err := fsys.LookupPath(u.ctx, p)
		if typ := a.Mode & syscall.S_IFMT; err == nil && typ != syscall.S_IFREG && typ != syscall.S_IFLNK {
			return declined("not a regular file: " + p)
		}
	}
	return nil
}

// remove unlinks the files the target lacks, then the directories that
// leaves empty, deepest first (as worktree's removeFiles).
func (u *daemonUpdate) remove(removes []string) error {
	fsys := u.r.fsys
	dirs := map[string]bool{}
	for _, p := range removes {
		parent, name := path.Split(p)
		dirIno, err := u.dirIno(parent)
		if err != nil {
			return err
		}
		if err := fsys.Unlink(u.ctx, dirIno, name); err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
		u.forgetName(dirIno, name)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool {
		if di, dj := strings.Count(order[i], "/"), strings.Count(order[j], "/"); di != dj {
			return di > dj
		}
		return order[i] < order[j]
	})
	for _, d := range order {
		parent, name := path.Split(d)
		dirIno, err := u.dirIno(parent)
		if err != nil {
			continue
		}
		if fsys.Rmdir(u.ctx, dirIno, name) == nil {
			u.forgetName(dirIno, name)
		}
	}
	return nil
}

// revisions rebuilds the revision of every file of gets and returns
// their sizes and, for symlinks, their targets (by index of gets).
func (u *daemonUpdate) revisions(gets []worktree.Change) ([]int64, map[int]string, error) {
	sizes := make([]int64, len(gets))
	targets := map[int]string{}
	for i, g := range gets {
		content, err := u.v.FileRevision(g.Entry.Path, g.Entry.Node)
		if err != nil {
			return nil, nil, err
		}
		sizes[i] = int64(len(content))
		if g.Entry.Flags == "l" {
			targets[i] = string(content)
		}
	}
	return sizes, targets, nil
}

// write makes every file of gets show its revision: an existing one
// keeps its inode (moveVirtual, which invalidates what the kernel
// cached of it), a new one is created with its directories; each gets
// hg's permission bits under the caller's umask and the mtime given,
// unless its entry in old records that second (rewriteMtime). A new
// symlink's mtime is the present, later than any entry records.
func (u *daemonUpdate) write(gets []worktree.Change, sizes []int64, targets map[int]string, mtime time.Time, old *dirstate.Index) ([]worktree.Written, error) {
	fsys := u.r.fsys
	out := make([]worktree.Written, len(gets))
	for i, g := range gets {
		size := sizes[i]
		a, err := fsys.LookupPath(u.ctx, g.Entry.Path)
		isLink := err == nil && a.Mode&syscall.S_IFMT == syscall.S_IFLNK
		if g.FlagsOnly && g.Entry.Flags != "l" && err == nil && a.Mode&syscall.S_IFMT == syscall.S_IFREG {
			// The exec flag alone: a chmod, as hg's util.setflags (the
			// entry is recorded possibly dirty, whatever out says).
			perm := a.Mode & 0o7777
			if next := worktree.ExecPerm(perm, g.Entry.Flags == "x", u.q.Umask); next != perm {
				if _, err := fsys.SetAttr(u.ctx, a.Ino, fsnode.SetAttr{Mode: &next}); err != nil {
					return nil, err
				}
				u.forgetInode(a.Ino)
			}
			continue
		}
		if g.Entry.Flags == "l" || isLink {
			// A symlink is made anew, as hg writes one, and so is a
			// regular file where one was.
			if err == nil {
				if err := u.unlink(g.Entry.Path); err != nil {
					return nil, err
				}
			}
			if g.Entry.Flags == "l" {
				w, err := u.symlink(g.Entry.Path, targets[i])
				if err != nil {
					return nil, err
				}
				out[i] = w
				continue
			}
			err = syscall.ENOENT
		}
		perm := worktree.FilePerm(g.Entry.Flags, u.q.Umask)
		switch {
		case err == nil:
			if a.Mode&0o7777 != perm {
				if _, err := fsys.SetAttr(u.ctx, a.Ino, fsnode.SetAttr{Mode: &perm}); err != nil {
					return nil, err
				}
			}
		case errors.Is(err, syscall.ENOENT):
			if a, err = u.create(g.Entry.Path, perm); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
		e, _ := old.Get(g.Entry.Path)
		mt := rewriteMtime(mtime, e)
		s := VirtualSet{Ref: fsnode.VirtualRef{Node: g.Entry.Node, Path: g.Entry.Path}, Size: uint64(size), Mtime: mt}
		if err := u.r.moveVirtual(u.ctx, u.r.nodeID(a.Ino), a.Ino, s); err != nil {
			return nil, err
		}
		out[i] = worktree.Written{Mode: dirstate.ModeRegular | perm, Size: size, Mtime: dirstate.TimestampOf(mt.UnixNano())}
	}
	return out, nil
}

// unlink removes the file at p.
func (u *daemonUpdate) unlink(p string) error {
	dir, name := path.Split(p)
	dirIno, err := u.dirIno(dir)
	if err != nil {
		return err
	}
	if err := u.r.fsys.Unlink(u.ctx, dirIno, name); err != nil {
		return err
	}
	u.forgetName(dirIno, name)
	return nil
}

// symlink makes a symlink to target at p, and the directories above it
// that are missing, and returns what its dirstate entry records.
func (u *daemonUpdate) symlink(p, target string) (worktree.Written, error) {
	parent, name, err := u.mkdirs(p)
	if err != nil {
		return worktree.Written{}, err
	}
	a, err := u.r.fsys.Symlink(u.ctx, parent, name, target)
	if err != nil {
		return worktree.Written{}, err
	}
	u.r.fsys.Forget(a.Ino, 1)
	u.forgetName(parent, name)
	return worktree.Written{Mode: dirstate.ModeSymlink | 0o777, Size: int64(len(target)), Mtime: dirstate.TimestampOf(a.Mtime.UnixNano())}, nil
}

// create makes an empty regular file at p, and the directories above it
// that are missing (0777 under the umask).
func (u *daemonUpdate) create(p string, perm uint32) (fsnode.Attr, error) {
	fsys := u.r.fsys
	parent, name, err := u.mkdirs(p)
	if err != nil {
		return fsnode.Attr{}, err
	}
	a, err := fsys.CreateInode(u.ctx, parent, name, syscall.S_IFREG|perm, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		return fsnode.Attr{}, err
	}
	fsys.Forget(a.Ino, 1)
	u.forgetName(parent, name)
	return a, nil
}

// mkdirs makes the directories above p that are missing (0777 under
// the umask) and returns the inode of p's directory and p's last name.
func (u *daemonUpdate) mkdirs(p string) (fsnode.Ino, string, error) {
	fsys := u.r.fsys
	parent := u.r.root
	dir, name := path.Split(p)
	for _, c := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if c == "" {
			continue
		}
		a, err := fsys.Mkdir(u.ctx, parent, c, 0o777&^u.q.Umask)
		switch {
		case err == nil:
			fsys.Forget(a.Ino, 1)
			u.forgetName(parent, c)
		case errors.Is(err, syscall.EEXIST):
			dirIno, err := u.child(parent, c)
			if err != nil {
				return 0, "", err
			}
			a.Ino = dirIno
		default:
			return 0, "", err
		}
		parent = a.Ino
	}
	return parent, name, nil
}

// child returns the inode of directory entry name of dir.
func (u *daemonUpdate) child(dir fsnode.Ino, name string) (fsnode.Ino, error) {
	a, err := u.r.fsys.Lookup(u.ctx, dir, name)
	if err != nil {
		return 0, err
	}
	u.r.fsys.Forget(a.Ino, 1)
	if !a.IsDir() {
		return 0, syscall.ENOTDIR
	}
	return a.Ino, nil
}

// dirIno returns the inode of directory dir ("" or ending in "/" from
// path.Split) under the root.
func (u *daemonUpdate) dirIno(dir string) (fsnode.Ino, error) {
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return u.r.root, nil
	}
	a, err := u.r.fsys.LookupPath(u.ctx, dir)
	if err != nil {
		return 0, err
	}
	return a.Ino, nil
}

// writeDirstate replaces the dirstate with d (v1), and returns what it
// wrote.
func (u *daemonUpdate) writeDirstate(d *dirstate.Dirstate) ([]byte, error) {
	data, err := d.AppendV1(dirstateBufs.get(0))
	if err != nil {
		return nil, err
	}
	if err := u.writeHg("dirstate", data); err != nil {
		return nil, err
	}
	return data, nil
}

// writeHg replaces .hg/NAME with data: written beside it and renamed
// over it, as hg's atomictemp files are, so that a crash leaves the old
// or the new one.
func (u *daemonUpdate) writeHg(name string, data []byte) error {
	fsys := u.r.fsys
	tmp := name + ".hgfs-update"
	perm := 0o666 &^ u.q.Umask
	if err := fsys.WriteFile(u.ctx, ".hg/"+tmp, data, syscall.S_IFREG|perm); err != nil {
		return err
	}
	if err := fsys.Rename(u.ctx, u.hg.Ino, tmp, u.hg.Ino, name, 0); err != nil {
		return err
	}
	u.forgetName(u.hg.Ino, tmp)
	u.forgetName(u.hg.Ino, name)
	return nil
}

// forgetName has the kernel drop what it cached of name in directory
// dir (its dentry, positive or negative): the daemon changed it behind
// the kernel's back. A directory the kernel never looked up has none.
func (u *daemonUpdate) forgetName(dir fsnode.Ino, name string) {
	if srv := u.r.kernel.srv.Load(); srv != nil {
		srv.EntryNotify(u.r.nodeID(dir), name)
	}
	if u.dirs == nil {
		u.dirs = map[fsnode.Ino]bool{}
	}
	u.dirs[dir] = true
}

// forgetInode has the kernel drop what it cached of inode ino's
// attributes.
func (u *daemonUpdate) forgetInode(ino fsnode.Ino) { u.r.forgetAttr(u.r.nodeID(ino)) }

// forgetDirs has the kernel drop the attributes it cached of every
// directory whose entries changed (its link count, size and times): a
// name's invalidation refreshes its directory only where the kernel had
// an entry for the name.
func (u *daemonUpdate) forgetDirs() {
	srv := u.r.kernel.srv.Load()
	if srv == nil {
		return
	}
	for dir := range u.dirs {
		srv.InodeNotify(u.r.nodeID(dir), -1, 0)
	}
}

// checkManifest is worktree.Check of changeset node's manifest m,
// remembered for the next updates to the same changeset (3 ms a check
// on 20,000 files, which the daemon's update otherwise spends each
// time); r.updating is held.
func (r *rawFS) checkManifest(node revlog.Node, m []revlog.ManifestEntry) error {
	if r.checked[node] {
		return nil
	}
	if err := worktree.Check(m); err != nil {
		return err
	}
	if r.checked == nil || len(r.checked) >= 64 {
		r.checked = map[revlog.Node]bool{}
	}
	r.checked[node] = true
	return nil
}
