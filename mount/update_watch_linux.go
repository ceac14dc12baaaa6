//go:build linux

package mount

// Between its updates the daemon watches the working copy
// (fsnode.Watch): every tracked file's inode and every directory above
// one. An update that finds the dirstate as the daemon's last update
// wrote it then checks only the files whose inodes changed since, and
// those under a directory whose entries did (a rename, a removal, a new
// name), instead of every tracked file: on the 20,000-file working copy
// that check was 5 to 8 ms of an update's 10 to 20 in the daemon.
//
// The watch is exact in one direction only: it may name files that did
// not change (an update's own writes, compaction moving a file's
// extents), never miss one that did. What keeps it so:
//
//   - every lasting change of an inode goes through fsnode's commit
//     queue, where the Watch sees it; a file replaced, created, removed
//     or renamed changes its directory's entries, and every directory
//     on a tracked path is watched, up to the root;
//   - during an update the Watch records every inode's change
//     (Watch.All), so that what changes while the daemon looks at the
//     files, or after it wrote them and before they are watched, is
//     reported by the next update's Take;
//   - anything else (a dirstate hg wrote, a refused or failed update, a
//     daemon just started, more changes than the Watch remembers) makes
//     the next update check every file, as before.

import (
	"bytes"
	"strings"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/worktree"
)

// wcWatch is what the daemon knows of the working copy between updates;
// r.updating is held.
type wcWatch struct {
	w *fsnode.Watch
	// dirstate is the dirstate the last update wrote, nil when the next
	// update must check every file; parsed is it as a parse would read
	// it, made after the update replied (keepParsed), nil until then.
	// gen counts the updates ended.
	dirstate []byte
	parsed   *dirstate.Dirstate
	gen      uint64
}

// rootName is what the Watch calls the root directory; other directories
// are their paths with "/" appended, files their paths.
const rootName = "/"

// begin starts an update whose dirstate is data: from now on every
// change is recorded. It returns what changed since the last update and
// whether that is all that may have: the dirstate is the one the last
// update wrote and the Watch remembers every change since. parsed is
// data parsed, if the last update's was ready (the caller's to change).
func (c *wcWatch) begin(fsys *fsnode.FS, data []byte) (changed []string, known bool, parsed *dirstate.Dirstate) {
	if c.w == nil {
		c.w = fsnode.NewWatch()
		fsys.SetWatch(c.w)
	}
	c.w.All(true)
	changed, overflow := c.w.Take()
	same := c.dirstate != nil && bytes.Equal(c.dirstate, data)
	if same {
		parsed = c.parsed
	}
	known = !overflow && same
	dirstateBufs.put(c.dirstate)
	c.dirstate, c.parsed = nil, nil
	return changed, known, parsed
}

// end finishes an update: what it wrote is the state the next one starts
// from (nil after a refused or failed update: the next checks every
// file).
func (c *wcWatch) end(written []byte) {
	c.dirstate = written
	c.gen++
	c.w.All(false)
}

// keepParsed keeps d, the dirstate the update just ended wrote (nil if
// none; the caller gives it up), as the next update would read it
// (dirstate.ReadBackV1, made after the update replied), for the next
// update to use instead of a parse of what it wrote; r.updating is held.
func (r *rawFS) keepParsed(d *dirstate.Dirstate) {
	if d == nil {
		return
	}
	gen := r.wc.gen
	go func() {
		if d.ReadBackV1() != nil {
			return
		}
		r.updating.Lock()
		defer r.updating.Unlock()
		if c := &r.wc; c.gen == gen && c.dirstate != nil {
			c.parsed = d
		}
	}()
}

// selectChanged returns the indexes of the entries an update must look
// at when changed is what changed since the last one: the files named,
// every file under a directory named, and every entry that records no
// mtime (as hg status, which looks at those each time, and records what
// it finds). all is true when the root is named.
func selectChanged(entries []dirstate.Entry, changed []string) (sel []int, all bool) {
	files := map[string]bool{}
	var dirs []string
	for _, name := range changed {
		switch {
		case name == rootName:
			return nil, true
		case strings.HasSuffix(name, "/"):
			dirs = append(dirs, name)
		default:
			files[name] = true
		}
	}
	sel = []int{}
	for i := range entries {
		p := entries[i].Path
		if !entries[i].HasMtime || files[p] {
			sel = append(sel, i)
			continue
		}
		for _, d := range dirs {
			if strings.HasPrefix(p, d) {
				sel = append(sel, i)
				break
			}
		}
	}
	return sel, false
}

// watchNames collects the names an update learned for the Watch: the
// inodes of files it looked at or wrote, and of the directories above
// them.
type watchNames struct {
	files map[fsnode.Ino]string
	dirs  map[string]fsnode.Ino // by path ("" the root)
}

func newWatchNames() *watchNames {
	return &watchNames{files: map[fsnode.Ino]string{}, dirs: map[string]fsnode.Ino{}}
}

// add records file p at inode ino, in the directory at inode dir.
func (n *watchNames) add(p string, ino, dir fsnode.Ino) {
	n.files[ino] = p
	if d := parentDir(p); dir != 0 {
		n.dirs[d] = dir
	}
}

// parentDir is the directory of working file p, "" for the root.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// complete adds the directories above the ones known, looked up (the
// root is the daemon's).
func (n *watchNames) complete(u *daemonUpdate) {
	known := make([]string, 0, len(n.dirs))
	for d := range n.dirs {
		known = append(known, d)
	}
	n.dirs[""] = u.r.root
	for _, d := range known {
		for d = parentDir(d); ; d = parentDir(d) {
			if _, ok := n.dirs[d]; ok {
				break
			}
			a, err := u.r.fsys.LookupPath(u.ctx, d)
			if err != nil || !a.IsDir() {
				// Gone meanwhile: its parent's entries changed, which
				// the Watch records.
				n.dirs[d] = 0
				continue
			}
			n.dirs[d] = a.Ino
		}
	}
}

// names is every inode n learned with its name for the Watch.
func (n *watchNames) names() map[fsnode.Ino]string {
	m := make(map[fsnode.Ino]string, len(n.files)+len(n.dirs))
	for ino, p := range n.files {
		m[ino] = p
	}
	for d, ino := range n.dirs {
		if ino != 0 {
			m[ino] = dirName(d)
		}
	}
	return m
}

// set adds what n learned to the Watch. The names are copied: a path
// cut from a dirstate's text would keep all of it (a megabyte on the
// 20,000-file working copy) for as long as the Watch keeps the name,
// and each update adds a few.
func (n *watchNames) set(w *fsnode.Watch) {
	for ino, name := range n.names() {
		w.Set(ino, strings.Clone(name))
	}
}

// dirName is the Watch's name for directory d.
func dirName(d string) string {
	if d == "" {
		return rootName
	}
	return d + "/"
}

// lookupAll adds to n the inodes at paths ps, as they are now.
func (n *watchNames) lookupAll(u *daemonUpdate, ps []string) {
	u.r.fsys.LookupStates(len(ps), func(i int) string { return ps[i] }, func(i int, st fsnode.PathState) {
		if st.Err == nil {
			n.add(ps[i], st.Attr.Ino, st.Dir)
		}
	})
}

// watch has the Watch follow the working copy the update left: the files
// the dirty check found (every tracked file, or those sel names) and
// those it wrote, with the directories above them. After a check of
// every file it watches only those; else it adds them to what it
// watched.
func (u *daemonUpdate) watch(entries []dirstate.Entry, sel []int, gets []worktree.Change) {
	n := newWatchNames()
	add := func(i int) {
		if f := u.found[i]; f.ino != 0 {
			n.add(entries[i].Path, f.ino, f.dir)
		}
	}
	if sel == nil {
		for i := range entries {
			add(i)
		}
	} else {
		for _, i := range sel {
			add(i)
		}
	}
	ps := make([]string, len(gets))
	for i, g := range gets {
		ps[i] = g.Entry.Path
	}
	n.lookupAll(u, ps)
	n.complete(u)
	if sel == nil {
		u.r.wc.w.Reset(n.names())
	} else {
		n.set(u.r.wc.w)
	}
}
