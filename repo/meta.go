package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// Phase is a changeset phase. Keep in sync with mercurial/phases.py.
type Phase int

// Phases hg writes to phaseroots.
const (
	Public   Phase = 0
	Draft    Phase = 1
	Secret   Phase = 2
	Archived Phase = 32
	Internal Phase = 96
)

func (p Phase) String() string {
	switch p {
	case Public:
		return "public"
	case Draft:
		return "draft"
	case Secret:
		return "secret"
	case Archived:
		return "archived"
	case Internal:
		return "internal"
	}
	return fmt.Sprintf("phase%d", int(p))
}

// meta is everything derived from names files and phases, computed once.
type meta struct {
	phases    []Phase
	hidden    []bool
	obsolete  map[int]bool
	succs     map[revlog.Node][]revlog.Node // precursor -> successors (last marker wins)
	pruned    map[revlog.Node]bool
	parents   [2]revlog.Node // working directory parents
	bookmarks map[string]revlog.Node
	active    string // active bookmark ("" for none)
	nodeBms   map[revlog.Node][]string
	tip       int

	// Tags are computed on first use (getTags): they read .hgtags from
	// every head, which a server answering a stream clone never needs.
	local    map[string]tagEntry // .hg/localtags
	tagsOnce sync.Once
	tagsErr  error
	tags     map[string]revlog.Node // includes "tip"
	nodeTags map[revlog.Node][]string
}

func (r *Repo) getMeta() (*meta, error) {
	r.metaOnce.Do(func() { r.meta, r.metaErr = r.loadMeta() })
	return r.meta, r.metaErr
}

// getTags is getMeta with the tags computed.
func (r *Repo) getTags() (*meta, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	m.tagsOnce.Do(func() { m.tagsErr = r.computeTags(m, m.local) })
	if m.tagsErr != nil {
		return nil, m.tagsErr
	}
	return m, nil
}

// readOptional reads a file of the .hg directory that may legitimately be
// absent.
func (r *Repo) readOptional(name string) ([]byte, error) {
	b, err := fs.ReadFile(r.hg, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// dirstateHead is how much of the dirstate readDirstateParents reads:
// a v1 file's parents are its first 40 bytes, and a v2 docket (about
// 110 bytes) fits whole. A 20,000-file working copy's v1 dirstate is a
// megabyte, which every command resolving "." would otherwise read.
const dirstateHead = 4096

// readHead is readOptional of at most the first n bytes. The buffer
// starts at up to 64 KiB (a dirstate's head is read in one call) and
// grows with what the file holds, not with n (a cache file's bound).
func (r *Repo) readHead(name string, n int64) ([]byte, error) {
	f, err := r.hg.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, min(n, 64<<10))
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(n-int64(len(b)), int64(cap(b)))))
		}
		m, err := f.Read(b[len(b):int(min(int64(cap(b)), n))])
		b = b[:len(b)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (r *Repo) loadMeta() (*meta, error) {
	m := &meta{}
	n := r.cl.Len()
	var err error
	if m.parents, err = r.readDirstateParents(); err != nil {
		return nil, err
	}
	if m.phases, err = r.readPhases(); err != nil {
		return nil, err
	}
	if err := r.readObsstore(m); err != nil {
		return nil, err
	}
	if m.bookmarks, err = r.readBookmarks(); err != nil {
		return nil, err
	}
	// bookmarks.py _readactive: the first line (newline included), if it
	// is a bookmark; hg writes the name alone.
	if a, err := r.readOptional("bookmarks.current"); err != nil {
		return nil, err
	} else if _, ok := m.bookmarks[string(a)]; ok {
		m.active = string(a)
	}
	localTags, err := r.readOptional("localtags")
	if err != nil {
		return nil, err
	}
	m.local = readTags(localTags)
	m.computeHidden(r, m.local)
	m.tip = revlog.NullRev
	for rev := n - 1; rev >= 0; rev-- {
		if !m.hidden[rev] {
			m.tip = rev
			break
		}
	}
	m.nodeBms = map[revlog.Node][]string{}
	for name, node := range m.bookmarks {
		if rev, ok := r.rev(node); ok && !m.hidden[rev] {
			m.nodeBms[node] = append(m.nodeBms[node], name)
		}
	}
	for _, v := range m.nodeBms {
		sort.Strings(v)
	}
	return m, nil
}

// readDirstateParents reads the working directory parents: the first 40
// bytes of a dirstate-v1 file, or the parents of a dirstate-v2 docket
// (dirstate.ParseDocket).
func (r *Repo) readDirstateParents() ([2]revlog.Node, error) {
	var p [2]revlog.Node
	b, err := r.readHead("dirstate", dirstateHead)
	if err != nil {
		return p, err
	}
	if bytes.HasPrefix(b, []byte("dirstate-v2\n")) {
		if dk, err := dirstate.ParseDocket(b); err == nil {
			p = dk.Parents
		}
		return p, nil
	}
	if len(b) >= 40 {
		copy(p[0][:], b[:20])
		copy(p[1][:], b[20:40])
	}
	return p, nil
}

// readPhases reads phaseroots (store.PhaseRoots) and propagates each
// root's phase to its descendants.
func (r *Repo) readPhases() ([]Phase, error) {
	n := r.cl.Len()
	phases := make([]Phase, n)
	roots, err := r.Store.ReadPhaseRoots()
	if err != nil {
		return nil, err
	}
	for p, nodes := range roots {
		for _, node := range nodes {
			if rev, ok := r.rev(revlog.Node(node)); ok && Phase(p) > phases[rev] {
				phases[rev] = Phase(p)
			}
		}
	}
	for rev := 0; rev < n; rev++ {
		e := r.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < rev && phases[p] > phases[rev] {
				phases[rev] = phases[p]
			}
		}
	}
	return phases, nil
}

func (r *Repo) readObsstore(m *meta) error {
	b, err := fs.ReadFile(r.Store.FS(), "obsstore")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, markers, err := store.ParseObsstore(b)
	if err != nil {
		return fmt.Errorf("obsstore: %w", err)
	}
	m.obsolete = map[int]bool{}
	m.succs = map[revlog.Node][]revlog.Node{}
	m.pruned = map[revlog.Node]bool{}
	for _, mk := range markers {
		// Changesets have 20-byte nodes: a marker of other nodes names
		// none of them.
		if len(mk.Prec) != revlog.NodeLen {
			continue
		}
		prec := revlog.Node(mk.Prec)
		if len(mk.Succs) == 0 {
			m.pruned[prec] = true
		} else {
			succs := make([]revlog.Node, 0, len(mk.Succs))
			for _, sn := range mk.Succs {
				if len(sn) == revlog.NodeLen {
					succs = append(succs, revlog.Node(sn))
				}
			}
			m.succs[prec] = succs
		}
		if rev, ok := r.rev(prec); ok && m.phases[rev] != Public {
			m.obsolete[rev] = true
		}
	}
	return nil
}

// computeHidden follows mercurial/repoview.py computehidden: obsolete (and
// internal/archived) changesets are hidden unless pinned or an ancestor of
// a visible mutable changeset.
func (m *meta) computeHidden(r *Repo, local map[string]tagEntry) {
	n := r.cl.Len()
	m.hidden = make([]bool, n)
	any := false
	for rev := 0; rev < n; rev++ {
		if m.obsolete[rev] || m.phases[rev] >= Archived {
			m.hidden[rev] = true
			any = true
		}
	}
	if !any {
		return
	}
	pin := func(node revlog.Node) {
		if rev, ok := r.rev(node); ok {
			m.hidden[rev] = false
		}
	}
	pin(m.parents[0])
	pin(m.parents[1])
	for _, node := range m.bookmarks {
		pin(node)
	}
	for _, t := range local {
		pin(t.node)
	}
	// Ancestors of visible changesets stay visible: walk from the top.
	for rev := n - 1; rev >= 0; rev-- {
		if m.hidden[rev] {
			continue
		}
		e := r.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < rev {
				m.hidden[p] = false
			}
		}
	}
}

// readBookmarks reads the bookmarks file (store.ReadBookmarks) and keeps
// the bookmarks on changesets the changelog has, as bmstore does.
func (r *Repo) readBookmarks() (map[string]revlog.Node, error) {
	marks, _, err := r.Store.ReadBookmarks()
	if err != nil {
		return nil, err
	}
	out := make(map[string]revlog.Node, len(marks))
	for name, node := range marks {
		if _, ok := r.rev(node); ok {
			out[name] = node
		}
	}
	return out, nil
}

// tagEntry is a tag's current node and the nodes it named before.
type tagEntry struct {
	node revlog.Node
	hist []revlog.Node
}

// readTags parses a .hgtags or localtags file as mercurial/tags.py
// _readtags does: later lines override earlier ones, bad lines are skipped.
func readTags(data []byte) map[string]tagEntry {
	hist := map[string][]revlog.Node{}
	var order []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		hex, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		node, err := revlog.ParseNode(hex)
		if err != nil {
			continue
		}
		if _, seen := hist[name]; !seen {
			order = append(order, name)
		}
		hist[name] = append(hist[name], node)
	}
	out := map[string]tagEntry{}
	for _, name := range order {
		h := hist[name]
		out[name] = tagEntry{node: h[len(h)-1], hist: h[:len(h)-1]}
	}
	return out
}

func containsNode(list []revlog.Node, n revlog.Node) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// updateTags merges file tags into all as mercurial/tags.py _updatetags.
func updateTags(file, all map[string]tagEntry) {
	for name, a := range file {
		b, ok := all[name]
		if !ok {
			all[name] = a
			continue
		}
		anode, ahist := a.node, append([]revlog.Node{}, a.hist...)
		if b.node != anode && containsNode(b.hist, anode) && (!containsNode(ahist, b.node) || len(b.hist) > len(ahist)) {
			anode = b.node
		}
		for _, n := range b.hist {
			if !containsNode(ahist, n) {
				ahist = append(ahist, n)
			}
		}
		all[name] = tagEntry{node: anode, hist: ahist}
	}
}

// Heads returns the visible heads, in increasing rev order.
func (r *Repo) Heads() ([]int, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	return m.heads(r), nil
}

func (m *meta) heads(r *Repo) []int {
	n := r.cl.Len()
	hasChild := make([]bool, n)
	for rev := 0; rev < n; rev++ {
		if m.hidden[rev] {
			continue
		}
		e := r.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < n {
				hasChild[p] = true
			}
		}
	}
	var heads []int
	for rev := 0; rev < n; rev++ {
		if !m.hidden[rev] && !hasChild[rev] {
			heads = append(heads, rev)
		}
	}
	return heads
}

// computeTags reads the global tags from each head's .hgtags, and adds
// the local ones. As hg's tags._readtagcache, it looks in no manifest
// when the .hgtags filelog is missing or empty (no tag was ever
// committed), and in each head's it finds .hgtags without parsing the
// rest (the manifest of a 250,000-file tree is 20 MB parsed).
func (r *Repo) computeTags(m *meta, local map[string]tagEntry) error {
	all := map[string]tagEntry{}
	seen := map[revlog.Node]bool{}
	fl, err := r.File(".hgtags")
	switch {
	case errors.Is(err, ErrNoFile):
	case err != nil:
		return err
	default:
		defer fl.Close()
	}
	var heads []int
	if fl != nil && fl.Len() > 0 {
		heads = m.heads(r)
	}
	var fnodes io.ReaderAt
	if len(heads) > 0 {
		// A cache that cannot be read is no cache (hg reads it so too).
		if f, err := r.hg.Open("cache/" + fnodesCache); err == nil {
			defer f.Close()
			fnodes, _ = f.(io.ReaderAt)
		}
	}
	for _, head := range heads { // oldest to newest
		e, ok, err := r.tagsFnode(head, fl, fnodes)
		if err != nil {
			return err
		}
		if !ok || seen[e.Node] {
			continue
		}
		seen[e.Node] = true
		body, err := FileContent(fl, e)
		if err != nil {
			return err
		}
		updateTags(readTags(body), all)
	}
	updateTags(local, all)
	m.tags = map[string]revlog.Node{}
	m.nodeTags = map[revlog.Node][]string{}
	for name, t := range all {
		if t.node == revlog.NullNode {
			continue
		}
		if rev, ok := r.rev(t.node); !ok || m.hidden[rev] {
			continue
		}
		m.tags[name] = t.node
	}
	m.tags["tip"] = r.Node(m.tip)
	for name, node := range m.tags {
		m.nodeTags[node] = append(m.nodeTags[node], name)
	}
	for _, v := range m.nodeTags {
		sort.Strings(v)
	}
	return nil
}

// fnodesCache is hg's cache of each changeset's .hgtags file node
// (tags.hgtagsfnodescache), in .hg/cache: a record a revision, the
// first 4 bytes of the changeset's node then the file node (the null
// node where the changeset has no .hgtags), all 0xff where unknown.
const (
	fnodesCache  = "hgtagsfnodes1"
	fnodesRecord = 4 + 20
)

// tagsFnode is the .hgtags entry of rev's manifest (ok false without
// one), from hg's fnodes cache where its record is for this changeset
// and names a revision the filelog fl has, as hg's _getfnodes takes it,
// else from the manifest. With the cache warm, tags need no manifest
// read; a manifest log hg can do without does not fail them either.
//
// Only the heads' records are read: the file holds one for every
// revision (17 MB for 700,000 changesets).
func (r *Repo) tagsFnode(rev int, fl *revlog.Revlog, fnodes io.ReaderAt) (revlog.ManifestEntry, bool, error) {
	node := r.cl.Node(rev)
	var rec [fnodesRecord]byte
	if fnodes != nil {
		if n, _ := fnodes.ReadAt(rec[:], int64(rev)*fnodesRecord); n == fnodesRecord && bytes.Equal(rec[:4], node[:4]) {
			var fnode revlog.Node
			copy(fnode[:], rec[4:])
			if fnode == revlog.NullNode {
				return revlog.ManifestEntry{}, false, nil
			}
			if _, ok := fl.Rev(fnode); ok {
				return revlog.ManifestEntry{Path: ".hgtags", Node: fnode}, true, nil
			}
		}
	}
	cs, err := r.Changeset(rev)
	if err != nil {
		return revlog.ManifestEntry{}, false, err
	}
	return r.FindInManifest(cs.Manifest, ".hgtags")
}

// Tags returns tag names (including "tip") and the nodes they name.
func (r *Repo) Tags() (map[string]revlog.Node, error) {
	m, err := r.getTags()
	if err != nil {
		return nil, err
	}
	return m.tags, nil
}

// Bookmarks returns the bookmarks and their nodes.
func (r *Repo) Bookmarks() (map[string]revlog.Node, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	return m.bookmarks, nil
}

// ActiveBookmark returns the active bookmark, "" if none.
func (r *Repo) ActiveBookmark() (string, error) {
	m, err := r.getMeta()
	if err != nil {
		return "", err
	}
	return m.active, nil
}

// NodeTags returns the sorted tags naming node. An error is a failure
// to compute the tags (a head's manifest that cannot be read).
func (r *Repo) NodeTags(node revlog.Node) ([]string, error) {
	m, err := r.getTags()
	if err != nil {
		return nil, err
	}
	return m.nodeTags[node], nil
}

// NodeBookmarks returns the sorted bookmarks on node.
func (r *Repo) NodeBookmarks(node revlog.Node) []string {
	m, err := r.getMeta()
	if err != nil {
		return nil
	}
	return m.nodeBms[node]
}

// Phase returns the phase of rev (Public for the null revision).
func (r *Repo) Phase(rev int) Phase {
	m, err := r.getMeta()
	if err != nil || rev < 0 || rev >= len(m.phases) {
		return Public
	}
	return m.phases[rev]
}

// Hidden reports whether rev is hidden from hg's default (visible) view.
func (r *Repo) Hidden(rev int) bool {
	m, err := r.getMeta()
	if err != nil || rev < 0 || rev >= len(m.hidden) {
		return false
	}
	return m.hidden[rev]
}

// Tip returns the highest visible rev (NullRev for an empty repository).
func (r *Repo) Tip() (int, error) {
	m, err := r.getMeta()
	if err != nil {
		return 0, err
	}
	return m.tip, nil
}

// WorkingParent returns the first working directory parent as a rev.
func (r *Repo) WorkingParent() (int, error) {
	m, err := r.getMeta()
	if err != nil {
		return 0, err
	}
	if m.parents[0] == revlog.NullNode {
		return revlog.NullRev, nil
	}
	rev, ok := r.rev(m.parents[0])
	if !ok {
		//lint:ignore ST1005 hg's own wording, compared byte for byte in tests
		return 0, fmt.Errorf("working directory has unknown parent '%s'!", m.parents[0].Short())
	}
	return rev, nil
}

// Visible returns every visible rev in increasing order.
func (r *Repo) Visible() ([]int, error) {
	m, err := r.getMeta()
	if err != nil {
		return nil, err
	}
	revs := make([]int, 0, len(m.hidden))
	for rev, h := range m.hidden {
		if !h {
			revs = append(revs, rev)
		}
	}
	return revs, nil
}

// Obsolete reports whether rev is obsolete (a precursor in the obsstore
// or pruned), visible or not.
func (r *Repo) Obsolete(rev int) bool {
	m, err := r.getMeta()
	return err == nil && m.obsolete[rev]
}

// Orphan reports whether rev is an orphan (obsolete.py's "orphan", one of
// ctx.isunstable's instabilities): not obsolete itself, with an obsolete
// ancestor.
func (r *Repo) Orphan(rev int) bool {
	m, err := r.getMeta()
	if err != nil || len(m.obsolete) == 0 || rev < 0 || rev >= r.cl.Len() {
		return false
	}
	r.orphanOnce.Do(func() {
		n := r.cl.Len()
		r.orphans = make([]bool, n)
		for i := 0; i < n; i++ {
			e := r.cl.Entry(i)
			for _, p := range []int{e.P1, e.P2} {
				if p >= 0 && p < i && (m.obsolete[p] || r.orphans[p]) {
					r.orphans[i] = !m.obsolete[i]
				}
			}
		}
	})
	return r.orphans[rev]
}

// IsWorkingParent reports whether rev is a parent of the working
// directory.
func (r *Repo) IsWorkingParent(rev int) bool {
	m, err := r.getMeta()
	if err != nil || rev < 0 {
		return false
	}
	n := r.Node(rev)
	return n == m.parents[0] || n == m.parents[1]
}

// TagType is localrepo.tagtype: "local" for a tag from .hg/localtags,
// "global" for one from .hgtags, "" for "tip" and unknown names.
func (r *Repo) TagType(name string) string {
	m, err := r.getTags()
	if err != nil || name == "tip" {
		return ""
	}
	if _, ok := m.tags[name]; !ok {
		return ""
	}
	if _, ok := m.local[name]; ok {
		return "local"
	}
	return "global"
}
