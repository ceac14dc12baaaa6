package worktree

// What an update changes, apart from how it changes it: the files to
// write and remove, found by pairing two manifests with the dirstate,
// and the dirstate that follows. Update writes through the file system;
// a mount's daemon (package mount) moves a virtual working copy with the
// same plan inside the cache.

import (
	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/revlog"
)

// Change is a file of the target an update writes.
type Change struct {
	Entry     revlog.ManifestEntry
	Exists    bool // something may be at its path already
	FlagsOnly bool // a clean file whose flags alone change
}

// Written is what lstat says of a file an update wrote: the mode, size
// and mtime its dirstate entry records.
type Written struct {
	Mode  uint32
	Size  int64
	Mtime dirstate.Timestamp
}

// Changes pairs the manifest of the working copy's parent (from) with
// the target's (to), both sorted by path, in one merge pass: it returns
// the files of the target that are new, differ, or are dirty (changed
// in the working copy: -C rewrites them), in path order, and the files
// of from the target lacks that old (the dirstate) tracks.
func Changes(from, to []revlog.ManifestEntry, old *dirstate.Index, dirty []string) (gets []Change, removes []string) {
	dirtySet := make(map[string]bool, len(dirty))
	for _, p := range dirty {
		dirtySet[p] = true
	}
	removed := func(e revlog.ManifestEntry) {
		if ent, ok := old.Get(e.Path); ok && ent.WCTracked {
			removes = append(removes, e.Path)
		}
	}
	fi := 0
	for _, e := range to {
		for fi < len(from) && from[fi].Path < e.Path {
			removed(from[fi])
			fi++
		}
		var o revlog.ManifestEntry
		had := fi < len(from) && from[fi].Path == e.Path
		if had {
			o = from[fi]
			fi++
		}
		_, tracked := old.Get(e.Path)
		if had && o.Node == e.Node && o.Flags == e.Flags && tracked && !dirtySet[e.Path] {
			continue
		}
		// Only the flags changed: hg's "update permissions" (ACTION_EXEC),
		// recorded possibly dirty.
		flagsOnly := had && o.Node == e.Node && tracked && !dirtySet[e.Path]
		gets = append(gets, Change{Entry: e, Exists: had || tracked || dirtySet[e.Path], FlagsOnly: flagsOnly})
	}
	for ; fi < len(from); fi++ {
		removed(from[fi])
	}
	return gets, removes
}

// MarkTouched returns old with the mtimes of the files an update is
// about to write or remove forgotten: the dirstate written before any
// of them changes, so that an update stopped midway leaves none claimed
// clean (a file rewritten in the second its entry records may keep its
// mtime and size).
func MarkTouched(old *dirstate.Dirstate, gets []Change, removes []string) *dirstate.Dirstate {
	touched := make(map[string]bool, len(gets)+len(removes))
	for _, g := range gets {
		touched[g.Entry.Path] = true
	}
	for _, p := range removes {
		touched[p] = true
	}
	marked := &dirstate.Dirstate{Parents: old.Parents, Entries: make([]dirstate.Entry, 0, len(old.Entries))}
	for _, e := range old.Entries {
		if touched[e.Path] {
			e.HasMtime = false
		}
		marked.Entries = append(marked.Entries, e)
	}
	return marked
}

// Fixup records in e, a clean-able entry whose file was found clean by
// its content, the file's mode, size and mtime, when that mtime is
// reliable against boundary (the time before the file was looked at):
// hg status's fixup (context._checklookup), so that the next look
// needs no content.
func Fixup(e *dirstate.Entry, mode uint32, size int64, mtime, boundary dirstate.Timestamp) {
	if mt, ok := dirstate.Reliable(mtime, boundary); ok {
		e.HasModeSize, e.Mode, e.Size = true, mode, int32(size&dirstate.RangeMask)
		e.HasMtime, e.Mtime = true, mt
	}
}

// NextDirstate is the dirstate after an update to target (whose
// manifest is to) wrote gets (written[i] is what gets[i] became):
// written files clean unless their mtime is too close to now (with
// nanos, hg 7's rule: recordable), files whose flags alone changed
// possibly dirty, unchanged ones keeping their entries in old.
func NextDirstate(target revlog.Node, to []revlog.ManifestEntry, gets []Change, written []Written, old *dirstate.Index, now dirstate.Timestamp, nanos bool) *dirstate.Dirstate {
	return NextDirstateIn(nil, target, to, gets, written, old, now, nanos)
}

// NextDirstateIn is NextDirstate with its entries in buf's array when
// it holds them all (a buffer the caller reuses; not old's).
func NextDirstateIn(buf []dirstate.Entry, target revlog.Node, to []revlog.ManifestEntry, gets []Change, written []Written, old *dirstate.Index, now dirstate.Timestamp, nanos bool) *dirstate.Dirstate {
	if cap(buf) < len(to) {
		buf = make([]dirstate.Entry, 0, len(to))
	}
	nd := &dirstate.Dirstate{Entries: buf[:0]}
	nd.Parents[0] = target
	wi := 0
	for _, e := range to {
		if wi < len(gets) && gets[wi].Entry.Path == e.Path {
			w, flagsOnly := written[wi], gets[wi].FlagsOnly
			wi++
			if flagsOnly {
				nd.Entries = append(nd.Entries, dirstate.Entry{Path: e.Path, WCTracked: true, P1Tracked: true})
				continue
			}
			var mt *dirstate.Timestamp
			if m, ok := recordable(w.Mtime, now, nanos); ok {
				mt = &m
			}
			nd.Entries = append(nd.Entries, dirstate.Clean(e.Path, w.Mode, w.Size, mt))
			continue
		}
		if o, ok := old.Get(e.Path); ok && o.MaybeClean() {
			nd.Entries = append(nd.Entries, *o)
		} else {
			nd.Entries = append(nd.Entries, dirstate.Entry{Path: e.Path, WCTracked: true, P1Tracked: true})
		}
	}
	return nd
}

// StatSays is what a regular file's size and mtime tell of its content
// against its dirstate entry e, which is clean-able (MaybeClean), as hg
// status decides before reading: dirty when the size differs from the
// recorded one, clean when it is the same and the recorded mtime equals
// the file's, neither when the content must be compared.
func StatSays(e *dirstate.Entry, size int64, mtime dirstate.Timestamp) (clean, dirty bool) {
	if !e.HasModeSize {
		return false, false
	}
	if int64(e.Size) != size&dirstate.RangeMask && int64(e.Size) != size {
		return false, true
	}
	return e.HasMtime && mtimeEqual(e.Mtime, mtime), false
}
