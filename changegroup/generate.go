package changegroup

// Generating a changegroup from a local repository: every revision of
// every revlog, in revision order, which is what `hg bundle -a --hidden`
// carries (changegroup.makechangegroup over all changesets). Deltas are
// the stored ones where the format can say so: cg2/cg3 send each stored
// delta against its stored delta parent (always sent earlier, since every
// revision goes out in order) and a full snapshot as a delta against the
// null revision; cg1, whose base is implied, sends the stored delta when
// it is against the previous revision and a full replacement of the
// previous text otherwise.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// Generate writes a changegroup of every revision of r to w (in w's
// version) and closes w. Tree manifest repositories are refused with
// ErrUnsupported; revision flags with cg1/cg2 too.
func Generate(ctx context.Context, r *repo.Repo, w *Writer) error {
	cl := r.Changelog()
	if err := generateGroup(ctx, w, Changelog, "", cl, cl); err != nil {
		return err
	}
	if err := generateGroup(ctx, w, Manifest, "", r.Manifestlog(), cl); err != nil {
		return err
	}
	paths, err := filelogPaths(r)
	if err != nil {
		return err
	}
	for _, p := range paths {
		rl, err := r.File(p)
		if err != nil {
			return err
		}
		err = generateGroup(ctx, w, File, p, rl, cl)
		rl.Close()
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// GenerateSet writes a changegroup of the changesets include marks (by
// changelog revision; every parent of an included changeset must be
// included too) to w, version 02 or 03, and closes w: what hg sends to
// pull a filtered view (its served view, without secret and hidden
// changesets) into an empty repository. Manifests and file revisions go
// when an included changeset links to them. Normally that is their
// linkrev; a revision whose linkrev changeset is left out but which an
// included changeset carries (the same file revision committed again)
// goes linked to the first included changeset whose manifest has it, as
// hg's slow path (changegroup.cgpacker._generatefiles with
// fastpathlinkrev off) does. A stored delta against a revision left out
// goes as a full text.
func GenerateSet(ctx context.Context, r *repo.Repo, w *Writer, include []bool) error {
	cl := r.Changelog()
	if len(include) != cl.Len() {
		return fmt.Errorf("GenerateSet: %d flags for %d changesets", len(include), cl.Len())
	}
	for rev := 0; rev < cl.Len(); rev++ {
		if !include[rev] {
			continue
		}
		e := cl.Entry(rev)
		if e.P1 >= 0 && !include[e.P1] || e.P2 >= 0 && !include[e.P2] {
			return fmt.Errorf("GenerateSet: changeset %d is included without its parents", rev)
		}
	}
	// The manifests the included changesets name, each linked to the
	// first of them; and the files changesets left out touched, whose
	// revisions may still be carried by included ones.
	mlink := map[revlog.Node]int{}
	touchedOut := map[string]bool{}
	for rev := 0; rev < cl.Len(); rev++ {
		if rev%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c, err := r.Changeset(rev)
		if err != nil {
			return err
		}
		if !include[rev] {
			for _, f := range c.Files {
				touchedOut[f] = true
			}
			continue
		}
		if _, ok := mlink[c.Manifest]; !ok {
			mlink[c.Manifest] = rev
		}
	}
	// For those files, the included changesets that touch them.
	touchedIn := map[string][]int{}
	if len(touchedOut) > 0 {
		for rev := 0; rev < cl.Len(); rev++ {
			if !include[rev] {
				continue
			}
			c, err := r.Changeset(rev)
			if err != nil {
				return err
			}
			for _, f := range c.Files {
				if touchedOut[f] {
					touchedIn[f] = append(touchedIn[f], rev)
				}
			}
		}
	}

	if err := generateGroupOf(ctx, w, Changelog, "", cl, cl, func(rev int, _ revlog.Entry) (int, bool) {
		return rev, include[rev]
	}); err != nil {
		return err
	}
	if err := generateGroupOf(ctx, w, Manifest, "", r.Manifestlog(), cl, func(_ int, e revlog.Entry) (int, bool) {
		l, ok := mlink[e.Node]
		return l, ok
	}); err != nil {
		return err
	}
	paths, err := filelogPaths(r)
	if err != nil {
		return err
	}
	// Manifests read to find carried revisions, by changeset; bounded, as
	// a changeset touching several such files is read once per file at
	// worst.
	manifests := map[int][]revlog.ManifestEntry{}
	for _, p := range paths {
		rl, err := r.File(p)
		if err != nil {
			return err
		}
		var selErr error
		err = generateGroupOf(ctx, w, File, p, rl, cl, func(_ int, e revlog.Entry) (int, bool) {
			if e.LinkRev >= 0 && e.LinkRev < len(include) && include[e.LinkRev] {
				return e.LinkRev, true
			}
			for _, c := range touchedIn[p] {
				m, ok := manifests[c]
				if !ok {
					if m, selErr = r.Manifest(c); selErr != nil {
						return 0, false
					}
					if len(manifests) >= 64 {
						clear(manifests)
					}
					manifests[c] = m
				}
				if me, ok := repo.FindEntry(m, p); ok && me.Node == e.Node {
					return c, true
				}
			}
			return 0, false
		})
		rl.Close()
		if err == nil {
			err = selErr
		}
		if err != nil {
			return err
		}
	}
	return w.Close()
}

func generateGroup(ctx context.Context, w *Writer, kind GroupKind, name string, rl, cl *revlog.Revlog) error {
	return generateGroupOf(ctx, w, kind, name, rl, cl, nil)
}

// selectFunc picks the revisions of a revlog a changegroup carries and the
// changelog revision each links to; nil takes every revision with its own
// linkrev.
type selectFunc func(rev int, e revlog.Entry) (linkRev int, ok bool)

func generateGroupOf(ctx context.Context, w *Writer, kind GroupKind, name string, rl, cl *revlog.Revlog, sel selectFunc) error {
	// sent marks the revisions already in this group: a stored delta
	// whose base was left out goes as a full text instead. With a
	// selection the group starts at its first revision, so a file none
	// of whose revisions go has no group (hg sends no empty file group;
	// the writer fills in an empty changelog or manifest group).
	var sent []bool
	started := sel == nil
	if sel != nil {
		if w.Version() == Version1 {
			return unsupportedf("a changegroup of part of a repository needs version 02 or 03")
		}
		sent = make([]bool, rl.Len())
	} else if err := w.StartGroup(kind, name); err != nil {
		return err
	}
	node := func(rev int) [20]byte {
		if rev == revlog.NullRev {
			return [20]byte{}
		}
		return rl.Node(rev)
	}
	var prevLen int // cg1: length of the previous revision's text
	for rev := 0; rev < rl.Len(); rev++ {
		if rev%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := rl.Entry(rev)
		if e.LinkRev < 0 || e.LinkRev >= cl.Len() {
			return fmt.Errorf("%v %s rev %d: linkrev %d: %w", kind, name, rev, e.LinkRev, revlog.ErrCorrupt)
		}
		link := e.LinkRev
		if sel != nil {
			l, ok := sel(rev, e)
			if !ok {
				continue
			}
			link = l
			sent[rev] = true
			if !started {
				if err := w.StartGroup(kind, name); err != nil {
					return err
				}
				started = true
			}
		}
		d := Delta{Node: e.Node, P1: node(e.P1), P2: node(e.P2), LinkNode: cl.Node(link), Flags: e.Flags}
		dp := rl.DeltaParent(rev)
		var chunk []byte
		var err error
		if sel != nil && dp != revlog.NullRev && !sent[dp] {
			text, err := rl.Revision(rev)
			if err != nil {
				return err
			}
			dp, chunk = revlog.NullRev, text
		} else if chunk, err = rl.RawChunk(rev); err != nil {
			return err
		}
		switch {
		case w.Version() == Version1 && rev > 0 && dp == rev-1:
			d.Base, d.Data = node(rev-1), chunk
		case w.Version() == Version1:
			text, err := rl.Revision(rev)
			if err != nil {
				return err
			}
			d.Base = d.P1
			if rev > 0 {
				d.Base = node(rev - 1)
			} else if d.P1 != ([20]byte{}) {
				return fmt.Errorf("%v %s rev 0 has a parent: %w", kind, name, revlog.ErrCorrupt)
			}
			d.Data = ReplaceDelta(prevLen, text)
		case dp == revlog.NullRev:
			d.Data = FullDelta(chunk)
		default:
			d.Base, d.Data = node(dp), chunk
		}
		if err := w.WriteDelta(&d); err != nil {
			return fmt.Errorf("%v %s rev %d: %w", kind, name, rev, err)
		}
		if w.Version() == Version1 {
			prevLen = int(e.RawLen)
			if e.RawLen < 0 {
				text, err := rl.Revision(rev)
				if err != nil {
					return err
				}
				prevLen = len(text)
			}
		}
	}
	return nil
}

// filelogPaths lists the tracked paths of the store's filelogs, sorted;
// a tree manifest is ErrUnsupported.
func filelogPaths(r *repo.Repo) ([]string, error) {
	files, err := r.Store.Walk()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		if strings.HasPrefix(f.Name, "meta/") {
			return nil, unsupportedf("tree manifests are not supported (%s)", f.Name)
		}
		if p, ok := strings.CutPrefix(f.Name, "data/"); ok && strings.HasSuffix(p, ".i") {
			paths = append(paths, strings.TrimSuffix(p, ".i"))
		}
	}
	sort.Strings(paths)
	return paths, nil
}
