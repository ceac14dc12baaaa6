package changegroup

// Generating a changegroup from a local repository: Generate sends every
// revision of every revlog, in revision order, which is what
// `hg bundle -a --hidden` carries (changegroup.makechangegroup over all
// changesets); GenerateOutgoing sends what a receiver having some
// changesets lacks of others (exchange._computeoutgoing and
// changegroup.makestream: a pull, a clone of a filtered view), and
// GenerateSet is its case of a receiver having nothing. Deltas are the
// stored ones where the format can say so (emitGroup).

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
	ml, err := r.Manifestlog()
	if err != nil {
		return err
	}
	if err := generateGroup(ctx, w, Manifest, "", ml, cl); err != nil {
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
// included too) to w (any version) and closes w: what hg sends to
// pull a filtered view (its served view, without secret and hidden
// changesets) into an empty repository. It is GenerateOutgoing with
// nothing in common.
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
	return GenerateOutgoing(ctx, r, w, include, nil)
}

// GenerateOutgoing writes to w (any version) and closes it the changegroup
// hg's exchange sends a receiver that has the changesets common marks and
// lacks those missing marks (both by changelog revision; common must hold
// every ancestor of what it marks, nil for nothing): what
// changegroup.makestream builds from a filtered repository, slow path
// (cgpacker with fastpathlinkrev off).
//
//   - The changelog group: the missing changesets, in revision order.
//   - The manifest group: the manifests they name, each linked to the
//     first missing changeset naming it.
//   - A group per file some missing changeset lists as changed (sorted by
//     path): its revisions not linked to a common changeset that a missing
//     changeset carries. A revision linked to a missing changeset goes
//     linked to it; one linked to a changeset neither missing nor common
//     (hidden, secret, or outside the requested heads) goes linked to the
//     first missing changeset touching the file whose manifest has it, and
//     not at all if none has.
//
// Deltas (storageutil.emitrevisions): the stored delta when its base was
// sent in this group or the receiver has it (linked to a common
// changeset); else a delta against a parent the receiver has or was sent;
// else the full text. cg1 deltas are against the previous revision of the
// group: the stored delta when that is its base, else a replacement of
// the whole previous text. Memory holds the node lists and two texts at a
// time, never the changegroup.
func GenerateOutgoing(ctx context.Context, r *repo.Repo, w *Writer, missing, common []bool) error {
	cl := r.Changelog()
	if len(missing) != cl.Len() || common != nil && len(common) != cl.Len() {
		return fmt.Errorf("GenerateOutgoing: %d and %d flags for %d changesets", len(missing), len(common), cl.Len())
	}
	inCommon := func(clrev int) bool { return common != nil && common[clrev] }
	// The changesets, sent as each is read, and from them the manifests
	// to send (linked to the first changeset naming them) and the files
	// changed, with the missing changesets touching each.
	var clrevs []int
	for rev := 0; rev < cl.Len(); rev++ {
		if !missing[rev] {
			continue
		}
		if inCommon(rev) {
			return fmt.Errorf("GenerateOutgoing: changeset %d is both missing and common", rev)
		}
		clrevs = append(clrevs, rev)
	}
	mlink := map[revlog.Node]int{}
	touched := map[string][]int32{}
	changeset := func(rev int, text []byte) error {
		c, err := revlog.ParseChangeset(text)
		if err != nil {
			return fmt.Errorf("changelog revision %d: %w", rev, err)
		}
		if _, ok := mlink[c.Manifest]; !ok {
			mlink[c.Manifest] = rev
		}
		for _, f := range c.Files {
			touched[f] = append(touched[f], int32(rev))
		}
		return nil
	}
	if err := emitGroup(ctx, w, Changelog, "", cl, cl, clrevs, clrevs, inCommon, changeset); err != nil {
		return err
	}

	ml, err := r.Manifestlog()
	if err != nil {
		return err
	}
	mrevs := make([]int, 0, len(mlink))
	for n := range mlink {
		rev, ok := ml.Rev(n)
		if !ok {
			return fmt.Errorf("manifest %s of a changeset: %w", n, revlog.ErrCorrupt)
		}
		mrevs = append(mrevs, rev)
	}
	sort.Ints(mrevs)
	mlinks := make([]int, len(mrevs))
	for i, rev := range mrevs {
		mlinks[i] = mlink[ml.Node(rev)]
	}
	clear(mlink)
	if err := emitGroup(ctx, w, Manifest, "", ml, cl, mrevs, mlinks, inCommon, nil); err != nil {
		return err
	}

	paths := make([]string, 0, len(touched))
	for p := range touched {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// Manifests read to find carried revisions, by changeset; bounded, as
	// a changeset touching several such files is read once per file at
	// worst.
	manifests := map[int][]revlog.ManifestEntry{}
	// carriers maps the nodes of file p that the missing changesets
	// touching it and above rev after carry to the first of them.
	carriers := func(p string, after int) (map[revlog.Node]int, error) {
		out := map[revlog.Node]int{}
		for _, c := range touched[p] {
			if int(c) <= after {
				continue
			}
			m, ok := manifests[int(c)]
			if !ok {
				var err error
				if m, err = r.Manifest(int(c)); err != nil {
					return nil, err
				}
				if len(manifests) >= 64 {
					clear(manifests)
				}
				manifests[int(c)] = m
			}
			if me, ok := repo.FindEntry(m, p); ok {
				if _, seen := out[me.Node]; !seen {
					out[me.Node] = int(c)
				}
			}
		}
		return out, nil
	}
	var revs, links, search []int
	for _, p := range paths {
		rl, err := r.File(p)
		if err != nil {
			return err
		}
		if rl.Len() == 0 {
			rl.Close()
			return fmt.Errorf("empty or missing file data for %s: %w", p, revlog.ErrCorrupt)
		}
		// The revisions linked to missing changesets go with them; those
		// linked to changesets neither missing nor common go with the
		// first missing changeset carrying them, if any: one of those
		// touching the file, and (linkrevs being the first changeset to
		// carry a revision) after the linkrev.
		revs, links, search = revs[:0], links[:0], search[:0]
		minLink := cl.Len()
		for rev := 0; rev < rl.Len(); rev++ {
			lr := rl.LinkRev(rev)
			if lr < 0 || lr >= cl.Len() {
				rl.Close()
				return fmt.Errorf("%v %s rev %d: linkrev %d: %w", File, p, rev, lr, revlog.ErrCorrupt)
			}
			switch {
			case inCommon(lr):
			case missing[lr]:
				revs, links = append(revs, rev), append(links, lr)
			default:
				search = append(search, rev)
				minLink = min(minLink, lr)
			}
		}
		if len(search) > 0 && len(touched[p]) > 0 && int(touched[p][len(touched[p])-1]) > minLink {
			found, err := carriers(p, minLink)
			if err != nil {
				rl.Close()
				return err
			}
			for _, rev := range search {
				if c, ok := found[rl.Node(rev)]; ok {
					revs, links = append(revs, rev), append(links, c)
				}
			}
			if len(found) > 0 {
				sortTogether(revs, links)
			}
		}
		if len(revs) > 0 {
			err = emitGroup(ctx, w, File, p, rl, cl, revs, links, inCommon, nil)
		}
		rl.Close()
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// sortTogether sorts revs increasing, links with them.
func sortTogether(revs, links []int) {
	idx := make([]int, len(revs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return revs[idx[a]] < revs[idx[b]] })
	r2, l2 := make([]int, len(revs)), make([]int, len(links))
	for i, j := range idx {
		r2[i], l2[i] = revs[j], links[j]
	}
	copy(revs, r2)
	copy(links, l2)
}

// emitGroup writes the group of revlog rl (starting it) holding revs
// (increasing), each linked to the changelog revision of links; have
// reports whether the receiver has the changeset a revision is linked
// to, that is whether it has the revision. texts, when not nil, is given
// each revision's text as it is sent (rebuilt from the chunk the delta
// sent is read from, so that chunk is decompressed once).
func emitGroup(ctx context.Context, w *Writer, kind GroupKind, name string, rl, cl *revlog.Revlog, revs, links []int, have func(clrev int) bool, texts func(rev int, text []byte) error) error {
	if err := w.StartGroup(kind, name); err != nil {
		return err
	}
	if len(revs) == 0 {
		return nil
	}
	node := func(rev int) [20]byte {
		if rev == revlog.NullRev {
			return [20]byte{}
		}
		return rl.Node(rev)
	}
	sent := make([]bool, rl.Len())
	usable := func(rev int) bool {
		return rev != revlog.NullRev && (sent[rev] || have(rl.LinkRev(rev)))
	}
	ahead := chunkAhead{rl: rl, revs: revs}
	// cg1: the previous revision of the group, the implied base.
	prev, _ := rl.Parents(revs[0])
	for i, rev := range revs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := rl.Entry(rev)
		d := Delta{Node: e.Node, P1: node(e.P1), P2: node(e.P2), LinkNode: cl.Node(links[i]), Flags: e.Flags}
		dp := rl.DeltaParent(rev)
		// The stored chunk and the text, read once each when needed.
		var text, chunk []byte
		var err error
		if texts != nil {
			if text, chunk, err = rl.RevisionChunk(rev); err == nil {
				err = texts(rev, text)
			}
		}
		rawChunk := func() ([]byte, error) {
			if chunk != nil {
				return chunk, nil
			}
			return ahead.chunk(i)
		}
		revision := func() ([]byte, error) {
			if text != nil {
				return text, nil
			}
			return rl.Revision(rev)
		}
		switch {
		case err != nil:
		case w.Version() == Version1:
			d.Base = node(prev)
			if dp == prev && dp != revlog.NullRev {
				d.Data, err = rawChunk()
			} else {
				d.Data, err = replaceDelta(rl, prev, revision)
			}
		case dp == revlog.NullRev || usable(dp):
			if d.Data, err = rawChunk(); err == nil && dp == revlog.NullRev {
				d.Data = FullDelta(d.Data)
			}
			d.Base = node(dp)
		case usable(e.P1) || usable(e.P2):
			base := e.P1
			if !usable(base) {
				base = e.P2
			}
			d.Base = node(base)
			d.Data, err = diffDelta(rl, base, revision)
		default:
			if text, err = revision(); err == nil {
				d.Data = FullDelta(text)
			}
		}
		if err != nil {
			return fmt.Errorf("%v %s rev %d: %w", kind, name, rev, err)
		}
		if err := w.WriteDelta(&d); err != nil {
			return fmt.Errorf("%v %s rev %d: %w", kind, name, rev, err)
		}
		sent[rev] = true
		prev = rev
	}
	return nil
}

// chunkAhead reads the stored chunks of a group's revisions a window at
// a time (aheadBytes, aheadRevs), so that sending a run of stored deltas
// reads the file once per window rather than once per revision. A
// window read for a revision whose delta is then not the stored one
// costs its bytes only: chunks are decompressed when asked for.
type chunkAhead struct {
	rl     *revlog.Revlog
	revs   []int
	from   int      // index in revs of stored[0]
	stored [][]byte // the window's stored chunks
}

const (
	aheadBytes = 256 << 10
	aheadRevs  = 256
)

// chunk returns the stored chunk of revs[i], decompressed.
func (a *chunkAhead) chunk(i int) ([]byte, error) {
	if i < a.from || i >= a.from+len(a.stored) {
		j, n := i, int64(0)
		for j < len(a.revs) && j-i < aheadRevs {
			n += a.rl.Entry(a.revs[j]).CompressedLen
			if j > i && n > aheadBytes {
				break
			}
			j++
		}
		stored, err := a.rl.StoredChunks(a.revs[i:j])
		if err != nil {
			return nil, err
		}
		a.from, a.stored = i, stored
	}
	return a.rl.DecompressChunk(a.revs[i], a.stored[i-a.from])
}

// replaceDelta is a delta replacing base's whole text by the text
// revision gives.
func replaceDelta(rl *revlog.Revlog, base int, revision func() ([]byte, error)) ([]byte, error) {
	text, err := revision()
	if err != nil {
		return nil, err
	}
	baseLen := 0
	if base != revlog.NullRev {
		if n := rl.Entry(base).RawLen; n >= 0 {
			baseLen = int(n)
		} else {
			b, err := rl.Revision(base)
			if err != nil {
				return nil, err
			}
			baseLen = len(b)
		}
	}
	return ReplaceDelta(baseLen, text), nil
}

// diffDelta computes a delta from base's text to the text revision
// gives.
func diffDelta(rl *revlog.Revlog, base int, revision func() ([]byte, error)) ([]byte, error) {
	a, err := rl.Revision(base)
	if err != nil {
		return nil, err
	}
	b, err := revision()
	if err != nil {
		return nil, err
	}
	return revlog.Diff(a, b), nil
}

// generateGroup sends every revision of rl with its own linkrev.
func generateGroup(ctx context.Context, w *Writer, kind GroupKind, name string, rl, cl *revlog.Revlog) error {
	revs := make([]int, rl.Len())
	links := make([]int, rl.Len())
	for rev := range revs {
		revs[rev] = rev
		links[rev] = rl.LinkRev(rev)
		if links[rev] < 0 || links[rev] >= cl.Len() {
			return fmt.Errorf("%v %s rev %d: linkrev %d: %w", kind, name, rev, links[rev], revlog.ErrCorrupt)
		}
	}
	return emitGroup(ctx, w, kind, name, rl, cl, revs, links, func(int) bool { return false }, nil)
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
