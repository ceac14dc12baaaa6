package hgview

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// snapshot is the repository as it was when its changelog was opened:
// the changelog and manifest log, and the names computed from them on
// first use. A newer snapshot replaces it when the changelog or a names
// file changes; readers holding an old one keep a consistent (older)
// view, since revlogs only grow.
type snapshot struct {
	hg     fs.FS // the .hg directory
	st     fs.FS // the store directory
	layout store.Layout
	key    stateKey
	cl     *revlog.Revlog
	ml     *revlog.Revlog

	refs    int  // uses in progress (View.mu)
	retired bool // replaced by a newer snapshot: close when refs drops to 0

	textMu sync.Mutex
	texts  map[string][]byte

	namesOnce sync.Once
	names     *names
	namesErr  error
}

// stateKey is what makes a snapshot stale: the sizes and times of the
// files it was computed from. Revlogs are append-only, so a size change
// is every change a commit or pull makes to the changelog.
type stateKey struct {
	cl, bookmarks, localtags, active, phases, obsstore, dirstate fileKey
}

type fileKey struct {
	size  int64
	mtime int64
	ok    bool
}

func statKey(fsys fs.FS, name string) fileKey {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return fileKey{}
	}
	return fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}
}

// readRequirements reads requires (and, with share-safe, store/requires)
// from the .hg directory. Shared repositories point outside it and are
// refused.
func readRequirements(hg fs.FS) (store.Requirements, error) {
	// Every repository hg has made since 0.9 has a requires file; without
	// one this is no repository (yet: an empty cache before a clone).
	b, err := fs.ReadFile(hg, "requires")
	if err != nil {
		return store.Requirements{}, fmt.Errorf("not a repository: %w", err)
	}
	req := store.ParseRequirements(b)
	if req.Has(store.ReqShared) || req.Has(store.ReqRelShared) {
		return store.Requirements{}, fmt.Errorf("%w: shared repositories (the store lives elsewhere)", ErrUnsupported)
	}
	if req.Has(store.ReqShareSafe) {
		sb, err := fs.ReadFile(hg, "store/requires")
		if err != nil {
			return store.Requirements{}, err
		}
		req = req.Union(store.ParseRequirements(sb))
	}
	if err := req.Check(); err != nil {
		return store.Requirements{}, err
	}
	if err := req.CheckReadable(); err != nil {
		return store.Requirements{}, err
	}
	return req, nil
}

func storeSub(hg fs.FS, layout store.Layout) (fs.FS, error) {
	if layout == store.LayoutBasic {
		return hg, nil
	}
	return fs.Sub(hg, "store")
}

func currentKey(hg, st fs.FS) stateKey {
	return stateKey{
		cl:        statKey(st, "00changelog.i"),
		bookmarks: statKey(hg, "bookmarks"),
		localtags: statKey(hg, "localtags"),
		active:    statKey(hg, "bookmarks.current"),
		phases:    statKey(st, "phaseroots"),
		obsstore:  statKey(st, "obsstore"),
		dirstate:  statKey(hg, "dirstate"),
	}
}

func openSnapshot(hg, st fs.FS, layout store.Layout, key stateKey) (*snapshot, error) {
	s := &snapshot{hg: hg, st: st, layout: layout, key: key}
	var err error
	if s.cl, err = openOrEmpty(st, "00changelog.i"); err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	if s.ml, err = openOrEmpty(st, layout.Encode("00manifest.i")); err != nil {
		s.cl.Close()
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return s, nil
}

func openOrEmpty(st fs.FS, name string) (*revlog.Revlog, error) {
	rl, err := revlog.Open(st, name)
	if errors.Is(err, fs.ErrNotExist) {
		return revlog.FromBytes(name, nil, nil)
	}
	return rl, err
}

func (s *snapshot) close() { s.cl.Close(); s.ml.Close() }

func (s *snapshot) node(rev int) revlog.Node {
	if rev < 0 || rev >= s.cl.Len() {
		return revlog.NullNode
	}
	return s.cl.Entry(rev).Node
}

func (s *snapshot) rev(n revlog.Node) (int, bool) {
	rev, ok := s.cl.Rev(n)
	return rev, ok && rev >= 0 && rev < s.cl.Len()
}

func (s *snapshot) changeset(rev int) (*revlog.Changeset, error) {
	if rev < 0 || rev >= s.cl.Len() {
		return &revlog.Changeset{DateText: "0 0", Extra: map[string]string{}}, nil
	}
	text, err := s.cl.Revision(rev)
	if err != nil {
		return nil, err
	}
	c, err := revlog.ParseChangeset(text)
	if err != nil {
		return nil, fmt.Errorf("changelog revision %d: %w", rev, err)
	}
	return c, nil
}

// names are the symbols that point into the changelog, computed as
// mercurial/tags.py, bookmarks.py and branchmap.py do over the visible
// changesets (mercurial/repoview.py), as hg shows them by default.
type names struct {
	hidden    []bool
	tip       int                    // highest visible rev
	tags      map[string]revlog.Node // including "tip"
	bookmarks map[string]revlog.Node
	active    string // active bookmark
	branches  []branchInfo
	nodeTags  map[revlog.Node][]string
	nodeBms   map[revlog.Node][]string
	heads     []int // changesets without children, increasing
}

// branchInfo is one named branch as hg's branchmap describes it.
type branchInfo struct {
	name   string
	heads  []int // increasing
	closed []bool
	tip    int // tipmost open head, else the tipmost head
}

func (b *branchInfo) allClosed() bool {
	for _, c := range b.closed {
		if !c {
			return false
		}
	}
	return true
}

func (s *snapshot) getNames() (*names, error) {
	s.namesOnce.Do(func() { s.names, s.namesErr = s.loadNames() })
	return s.names, s.namesErr
}

func (s *snapshot) loadNames() (*names, error) {
	n := s.cl.Len()
	nm := &names{bookmarks: map[string]revlog.Node{}, nodeTags: map[revlog.Node][]string{}, nodeBms: map[revlog.Node][]string{}}
	// Bookmarks (mercurial/bookmarks.py: "HEX NAME" lines, bad ones skipped).
	b, err := readOptional(s.hg, "bookmarks")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		hex, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		node, err := revlog.ParseNode(hex)
		if err != nil {
			continue
		}
		if _, ok := s.rev(node); ok {
			nm.bookmarks[name] = node
		}
	}
	if a, err := readOptional(s.hg, "bookmarks.current"); err != nil {
		return nil, err
	} else if _, ok := nm.bookmarks[string(a)]; ok {
		nm.active = string(a)
	}
	localData, err := readOptional(s.hg, "localtags")
	if err != nil {
		return nil, err
	}
	local := readTags(localData)
	if nm.hidden, err = s.computeHidden(nm.bookmarks, local); err != nil {
		return nil, err
	}
	nm.tip = revlog.NullRev
	for rev := n - 1; rev >= 0; rev-- {
		if !nm.hidden[rev] {
			nm.tip = rev
			break
		}
	}
	for name, node := range nm.bookmarks {
		if rev, _ := s.rev(node); !nm.hidden[rev] {
			nm.nodeBms[node] = append(nm.nodeBms[node], name)
		}
	}
	// Heads and branches, one pass over the visible changelog.
	hasChild := make([]bool, n)
	branchOf := make([]string, n)
	closed := make([]bool, n)
	for rev := 0; rev < n; rev++ {
		if nm.hidden[rev] {
			continue
		}
		e := s.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < n {
				hasChild[p] = true
			}
		}
		c, err := s.changeset(rev)
		if err != nil {
			return nil, err
		}
		branchOf[rev] = c.Branch()
		_, closed[rev] = c.Extra["close"]
	}
	for rev := 0; rev < n; rev++ {
		if !hasChild[rev] && !nm.hidden[rev] {
			nm.heads = append(nm.heads, rev)
		}
	}
	// A branch head has no child on its own branch.
	hasBranchChild := make([]bool, n)
	for rev := 0; rev < n; rev++ {
		if nm.hidden[rev] {
			continue
		}
		e := s.cl.Entry(rev)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && p < n && branchOf[p] == branchOf[rev] {
				hasBranchChild[p] = true
			}
		}
	}
	byName := map[string]*branchInfo{}
	for rev := 0; rev < n; rev++ {
		if hasBranchChild[rev] || nm.hidden[rev] {
			continue
		}
		b := byName[branchOf[rev]]
		if b == nil {
			b = &branchInfo{name: branchOf[rev]}
			byName[b.name] = b
		}
		b.heads = append(b.heads, rev)
		b.closed = append(b.closed, closed[rev])
	}
	for _, b := range byName {
		b.tip = b.heads[len(b.heads)-1]
		for i := len(b.heads) - 1; i >= 0; i-- {
			if !b.closed[i] {
				b.tip = b.heads[i]
				break
			}
		}
		nm.branches = append(nm.branches, *b)
	}
	sort.Slice(nm.branches, func(i, j int) bool { return nm.branches[i].name < nm.branches[j].name })

	// Tags: .hgtags of every head, oldest first, then localtags.
	all := map[string]tagEntry{}
	seen := map[revlog.Node]bool{}
	var fl *revlog.Revlog
	defer func() {
		if fl != nil {
			fl.Close()
		}
	}()
	for _, head := range nm.heads {
		man, err := s.manifestOf(head)
		if err != nil {
			return nil, err
		}
		e, ok := findEntry(man, ".hgtags")
		if !ok || seen[e.Node] {
			continue
		}
		seen[e.Node] = true
		if fl == nil {
			if fl, err = revlog.Open(s.st, s.layout.Encode("data/.hgtags.i")); err != nil {
				return nil, err
			}
		}
		frev, ok := fl.Rev(e.Node)
		if !ok {
			return nil, fmt.Errorf(".hgtags@%s: %w", e.Node.Short(), revlog.ErrNotFound)
		}
		text, err := fl.Revision(frev)
		if err != nil {
			return nil, err
		}
		_, body, err := revlog.ParseFileMeta(text)
		if err != nil {
			return nil, err
		}
		updateTags(readTags(body), all)
	}
	updateTags(local, all)
	nm.tags = map[string]revlog.Node{}
	for name, t := range all {
		if rev, ok := s.rev(t.node); ok && !nm.hidden[rev] {
			nm.tags[name] = t.node
		}
	}
	nm.tags["tip"] = s.node(nm.tip)
	for name, node := range nm.tags {
		nm.nodeTags[node] = append(nm.nodeTags[node], name)
	}
	for _, m := range []map[revlog.Node][]string{nm.nodeTags, nm.nodeBms} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	return nm, nil
}

func readOptional(fsys fs.FS, name string) ([]byte, error) {
	b, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// manifestOf reads the manifest of changeset rev (uncached: names use it
// once per head).
func (s *snapshot) manifestOf(rev int) ([]revlog.ManifestEntry, error) {
	c, err := s.changeset(rev)
	if err != nil {
		return nil, err
	}
	if c.Manifest.IsNull() {
		return nil, nil
	}
	mrev, ok := s.ml.Rev(c.Manifest)
	if !ok {
		return nil, fmt.Errorf("manifest %s: %w", c.Manifest, revlog.ErrNotFound)
	}
	text, err := s.ml.Revision(mrev)
	if err != nil {
		return nil, err
	}
	return revlog.ParseManifest(text)
}

func findEntry(m []revlog.ManifestEntry, p string) (revlog.ManifestEntry, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].Path >= p })
	if i < len(m) && m[i].Path == p {
		return m[i], true
	}
	return revlog.ManifestEntry{}, false
}

// tagEntry is a tag's current node and the nodes it named before.
type tagEntry struct {
	node revlog.Node
	hist []revlog.Node
}

// readTags parses .hgtags or localtags as mercurial/tags.py _readtags.
func readTags(data []byte) map[string]tagEntry {
	hist := map[string][]revlog.Node{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		hex, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		node, err := revlog.ParseNode(hex)
		if err != nil {
			continue
		}
		name = strings.TrimSpace(name)
		hist[name] = append(hist[name], node)
	}
	out := map[string]tagEntry{}
	for name, h := range hist {
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

// lookup resolves a symbol as mercurial/scmutil.py revsymbol does on the
// visible repository:
// "tip", "null", rev numbers (negative ones count from the end), full
// nodes, bookmarks, tags, branch names, then unambiguous node prefixes.
// "." (the working directory parent) is not offered: a view has no
// working directory.
func (s *snapshot) lookup(symbol string) (int, error) {
	nm, err := s.getNames()
	if err != nil {
		return 0, err
	}
	rev, err := s.lookupUnfiltered(nm, symbol)
	if err == nil && rev >= 0 && nm.hidden[rev] {
		// hg refuses hidden changesets without --hidden.
		return 0, unknownRevision(symbol)
	}
	return rev, err
}

func (s *snapshot) lookupUnfiltered(nm *names, symbol string) (int, error) {
	n := s.cl.Len()
	switch symbol {
	case "null":
		return revlog.NullRev, nil
	case "tip":
		return nm.tip, nil
	case "", ".", "..":
		return 0, unknownRevision(symbol)
	}
	if v, err := strconv.Atoi(symbol); err == nil && strconv.Itoa(v) == symbol {
		if v < 0 {
			v += n
		}
		if v >= 0 && v < n {
			return v, nil
		}
		if v == -1 {
			return revlog.NullRev, nil
		}
	}
	if len(symbol) == 40 {
		if node, err := revlog.ParseNode(symbol); err == nil {
			if rev, ok := s.rev(node); ok {
				return rev, nil
			}
			if node.IsNull() {
				return revlog.NullRev, nil
			}
		}
	}
	if node, ok := nm.bookmarks[symbol]; ok {
		if rev, ok := s.rev(node); ok {
			return rev, nil
		}
	}
	if node, ok := nm.tags[symbol]; ok {
		if rev, ok := s.rev(node); ok {
			return rev, nil
		}
	}
	for _, b := range nm.branches {
		if b.name == symbol {
			return b.tip, nil
		}
	}
	prefix := strings.TrimPrefix(symbol, "x")
	if len(prefix) > 40 || strings.Trim(prefix, "0123456789abcdef") != "" {
		return 0, unknownRevision(symbol)
	}
	if strings.HasPrefix(revlog.NullNode.String(), prefix) {
		if _, err := s.cl.LookupPrefix(prefix); err == nil {
			return 0, fmt.Errorf("%w: %s", ErrAmbiguous, symbol)
		}
		return revlog.NullRev, nil
	}
	rev, err := s.cl.LookupPrefix(prefix)
	switch {
	case errors.Is(err, revlog.ErrAmbiguous):
		return 0, fmt.Errorf("%w: %s", ErrAmbiguous, symbol)
	case err != nil:
		return 0, unknownRevision(symbol)
	}
	return rev, nil
}

func unknownRevision(symbol string) error {
	return fmt.Errorf("%w '%s'", ErrUnknownRevision, symbol)
}
