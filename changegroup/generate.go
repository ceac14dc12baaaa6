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
	files, err := r.Store.Walk()
	if err != nil {
		return err
	}
	var paths []string
	for _, f := range files {
		if strings.HasPrefix(f.Name, "meta/") {
			return unsupportedf("tree manifests are not supported (%s)", f.Name)
		}
		if p, ok := strings.CutPrefix(f.Name, "data/"); ok && strings.HasSuffix(p, ".i") {
			paths = append(paths, strings.TrimSuffix(p, ".i"))
		}
	}
	sort.Strings(paths)
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

func generateGroup(ctx context.Context, w *Writer, kind GroupKind, name string, rl, cl *revlog.Revlog) error {
	if err := w.StartGroup(kind, name); err != nil {
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
		d := Delta{Node: e.Node, P1: node(e.P1), P2: node(e.P2), LinkNode: cl.Node(e.LinkRev), Flags: e.Flags}
		dp := rl.DeltaParent(rev)
		chunk, err := rl.RawChunk(rev)
		if err != nil {
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
