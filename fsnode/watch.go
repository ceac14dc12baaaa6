package fsnode

import "sync"

// A Watch records which of a set of inodes changed since it was last
// asked. The mount's daemon keeps one over a working copy's tracked
// files and the directories above them: an update that finds none of
// them changed since the daemon last looked at every file (or wrote
// them) needs to look only at those that did, instead of at every one
// (mount/update_watch_linux.go).
//
// A change is anything that queues an inode for the next commit
// through markDirtyLocked, the one door every lasting change goes
// through: contents, attributes, link counts, extended attributes and,
// for a directory, its entries (a file created, removed or renamed in
// it, files deferred to it, or a directory moved out of or into it).
// Changes that move no meaning (compaction moving a file's extents)
// count as well: a Watch may say more changed than did, never less. The
// one exception is a directory's load making its deferred files
// (vdir.go, queueLocked): the files were there before, so nothing
// changed.
type Watch struct {
	mu    sync.RWMutex
	names map[Ino]string // the watched inodes, with what each stands for
	// all: every inode's change is recorded, watched or not, for Take to
	// judge against the watched set it then has (see All).
	all      bool
	hits     map[Ino]struct{} // changed since Take
	overflow bool             // more than maxWatchHits changed
}

// maxWatchHits bounds what a Watch remembers: past it, it only says that
// too much changed (Take's overflow), and the watcher looks at
// everything.
const maxWatchHits = 4096

// NewWatch returns a Watch of no inode.
func NewWatch() *Watch {
	return &Watch{names: make(map[Ino]string), hits: make(map[Ino]struct{})}
}

// Reset watches the inodes names holds (keys) instead, each standing for
// its value, which Take reports; the Watch keeps names, and the changes
// it recorded.
func (w *Watch) Reset(names map[Ino]string) {
	w.mu.Lock()
	w.names = names
	w.mu.Unlock()
}

// Set watches ino, which Take then reports as name.
func (w *Watch) Set(ino Ino, name string) {
	w.mu.Lock()
	w.names[ino] = name
	w.mu.Unlock()
}

// All has w record every inode's change (on), or only the watched ones'
// (off). A watcher about to learn which inodes it must watch turns it on
// before it looks at them and off once it has Set them: a change made
// in between, to an inode it had not set yet, is then reported by the
// next Take.
func (w *Watch) All(on bool) {
	w.mu.Lock()
	w.all = on
	w.mu.Unlock()
}

// Take returns the names of the watched inodes that changed since the
// last Take, or overflow if more inodes did than the Watch remembers,
// and starts recording afresh.
func (w *Watch) Take() (names []string, overflow bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	overflow = w.overflow
	if !overflow {
		for ino := range w.hits {
			if name, ok := w.names[ino]; ok {
				names = append(names, name)
			}
		}
	}
	clear(w.hits)
	w.overflow = false
	return names, overflow
}

// note records a change of ino. It is on the path of every change the
// cache takes while a Watch is set: an inode neither watched nor
// recorded in All mode costs a read lock.
func (w *Watch) note(ino Ino) {
	w.mu.RLock()
	_, watched := w.names[ino]
	record := (watched || w.all) && !w.overflow
	w.mu.RUnlock()
	if !record {
		return
	}
	w.mu.Lock()
	if _, ok := w.names[ino]; (ok || w.all) && !w.overflow {
		if len(w.hits) >= maxWatchHits {
			w.overflow = true
			clear(w.hits)
		} else {
			w.hits[ino] = struct{}{}
		}
	}
	w.mu.Unlock()
}

// SetWatch has f record changes in w from now on, in place of any Watch
// it had; nil stops recording.
func (f *FS) SetWatch(w *Watch) { f.watch.Store(w) }
