// Package verify checks a repository's integrity as hg verify does
// (mercurial/verify.py): every revlog's index is sane, every revision of
// the changelog, manifest log and filelogs reconstructs and hashes to its
// node, linkrevs point at the changesets that introduced them,
// changesets, manifests and filelogs agree with each other, and the
// fncache lists exactly the store's filelogs. Filelogs are checked in
// parallel. Findings are reported in hg's words, in hg's order.
//
// It owns the checks and their words, nothing else: it reads through
// repo and revlog and must not write (hg verify repairs nothing), print
// (findings go to Options.Status and Options.Warn), or parse a format of
// its own (each file format has its home in revlog or store).
package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// problem is one line of verify's report: an error (counted, and its
// changeset remembered) or a warning.
type problem struct {
	warn    bool
	linkrev int // changeset blamed, noRev for '?'
	text    string
}

const noRev = -2

// problems collects a phase's findings in order.
type problems []problem

// err records an hg-style error: " [file@]linkrev: msg".
func (p *problems) err(linkrev int, msg, file string) {
	lr := "?"
	if linkrev != noRev {
		lr = fmt.Sprint(linkrev)
	}
	text := lr + ": " + msg
	if file != "" {
		text = file + "@" + text
	}
	*p = append(*p, problem{linkrev: linkrev, text: " " + text})
}

func (p *problems) warnf(format string, args ...any) {
	*p = append(*p, problem{warn: true, linkrev: noRev, text: fmt.Sprintf(format, args...)})
}

// Options are where Repo reports.
type Options struct {
	// Status receives hg's progress lines ("checking changesets\n", ...).
	Status func(line string)
	// Warn receives each finding, a line with its newline.
	Warn func(line string)
	// Full also rebuilds every manifest's full text and checks its hash
	// and form (hg verify --full, verify.py's VERIFY_FULL). Without it,
	// as in hg, a manifest revision stored as a delta is read as its
	// delta only (the files it adds or changes); full snapshots are
	// still rebuilt and hashed.
	Full bool
	// Ahead reads the manifests' deltas on a goroutine of their own
	// while the changelog is checked, and the filelogs the store lists
	// on GOMAXPROCS goroutines meanwhile (rebuilding and hashing every
	// file revision, the bulk of the work). Off, each is read in its
	// turn, as hg does. Findings and their order are the same either
	// way.
	Ahead bool
}

// Result counts what Repo checked and found.
type Result struct {
	Changesets, Changes, Files int
	Errors, Warnings           int
	// FirstBad is the first damaged changeset, or -1 if none is named.
	FirstBad int
	// FncacheWarned: a warning was about the fncache (hg's hint to run
	// debugrebuildfncache follows the summary).
	FncacheWarned bool
}

// verifier accumulates counts across phases; only the main goroutine
// touches it.
type verifier struct {
	opt           Options
	r             *repo.Repo
	ml            *revlog.Revlog // r's manifest log
	errors        int
	warnings      int
	firstBad      int
	fncacheWarned bool
	ahead         *ahead // filelogs read ahead (Options.Ahead), or nil
	// havecl and havemf: the changelog and the manifest log have
	// revisions. As verify.py's, the checks that compare with one of
	// them are skipped when it has none: an empty or missing revlog is
	// reported once, not as every revision the other names.
	havecl, havemf bool
	// refersmf: a changeset names a manifest (or could not be read),
	// so an empty manifest log is an error (verify.py's refersmf).
	refersmf bool
}

func (v *verifier) emit(ps problems) {
	for _, p := range ps {
		v.opt.Warn(p.text + "\n")
		if p.warn {
			v.warnings++
			continue
		}
		v.errors++
		if p.linkrev != noRev && (v.firstBad == noRev || p.linkrev < v.firstBad) {
			v.firstBad = p.linkrev
		}
	}
}

// Repo checks r. An error is a failure to check (a cancelled ctx, an
// unreadable store), not a finding: findings are counted in the Result.
func Repo(ctx context.Context, r *repo.Repo, opt Options) (Result, error) {
	if opt.Status == nil {
		opt.Status = func(string) {}
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	ml, err := r.Manifestlog()
	if err != nil {
		return Result{}, err
	}
	v := &verifier{opt: opt, r: r, ml: ml, firstBad: noRev,
		havecl: r.Changelog().Len() > 0, havemf: ml.Len() > 0}
	storeFiles, err := v.storeDataFiles()
	if err != nil {
		return Result{}, err
	}
	if opt.Ahead {
		v.ahead = startAhead(ctx, v, storeFiles)
		defer v.ahead.stop()
	}
	mr := newManifestReading()
	if opt.Ahead {
		// The manifests' reading needs nothing from the changelog.
		go v.readManifests(ctx, mr)
		defer func() { <-mr.done }()
	}
	opt.Status("checking changesets\n")
	mflinkrevs, filelinkrevs, err := v.changesets()
	if err != nil {
		return Result{}, err
	}
	opt.Status("checking manifests\n")
	if !opt.Ahead {
		v.readManifests(ctx, mr)
	}
	filenodes := v.manifests(mflinkrevs, mr)
	opt.Status("crosschecking files in changesets and manifests\n")
	v.crosscheck(filelinkrevs, filenodes)
	opt.Status("checking files\n")
	nfiles, nrevs, err := v.files(ctx, storeFiles, filelinkrevs, filenodes)
	if err != nil {
		return Result{}, err
	}
	res := Result{Changesets: r.Changelog().Len(), Changes: nrevs, Files: nfiles,
		Errors: v.errors, Warnings: v.warnings, FirstBad: -1, FncacheWarned: v.fncacheWarned}
	if v.firstBad != noRev {
		res.FirstBad = v.firstBad
	}
	return res, nil
}

// checkEntry mirrors verify.py _checkentry: the linkrev is one of the
// changesets that introduce the node, parents are earlier revisions, the
// node is not duplicated. It returns the trusted linkrev or noRev.
// Without a changelog (clLen 0, verify.py's havecl false) only a
// negative linkrev is wrong.
func checkEntry(ps *problems, rl *revlog.Revlog, clLen, rev int, seen map[revlog.Node]int, linkrevs []int, label string) int {
	e := rl.Entry(rev)
	lr := e.LinkRev
	if lr < 0 || (clLen > 0 && !containsInt(linkrevs, lr)) {
		if lr < 0 || lr >= clLen {
			ps.err(noRev, fmt.Sprintf("rev %d points to nonexistent changeset %d", rev, lr), label)
		} else {
			ps.err(noRev, fmt.Sprintf("rev %d points to unexpected changeset %d", rev, lr), label)
		}
		if len(linkrevs) > 0 {
			s := make([]string, len(linkrevs))
			for i, l := range linkrevs {
				s[i] = fmt.Sprint(l)
			}
			if len(linkrevs) > 1 {
				// verify.py _checkentry means to keep the changesets in
				// which the file has this node, but empties the list
				// before filtering it: hg 6.3 and 7.2 print none.
				s = nil
			}
			ps.warnf(" (expected %s)", strings.Join(s, " "))
		}
		lr = noRev
	}
	for i, p := range []int{e.P1, e.P2} {
		if p != revlog.NullRev && (p < 0 || p >= rev) {
			ps.err(lr, fmt.Sprintf("unknown parent %d %d of %s", i+1, p, e.Node.Short()), label)
		}
	}
	if prev, dup := seen[e.Node]; dup {
		ps.err(lr, fmt.Sprintf("duplicate revision %d (%d)", rev, prev), label)
	}
	seen[e.Node] = rev
	return lr
}

// containsInt reports whether x is in list, which is ascending (linkrev
// lists are built in changelog order).
func containsInt(list []int, x int) bool {
	i := sort.SearchInts(list, x)
	return i < len(list) && list[i] == x
}

// changesets checks every changelog revision and returns, for each
// manifest node and each file, the changesets naming it. An error is
// the changelog's closing, not a finding.
func (v *verifier) changesets() (map[revlog.Node][]int, map[string][]int, error) {
	cl := v.r.Changelog()
	mflinkrevs := map[revlog.Node][]int{}
	filelinkrevs := map[string][]int{}
	seen := make(map[revlog.Node]int, cl.Len())
	var ps problems
	if cl.Len() == 0 && v.havemf {
		ps.err(0, "empty or missing changelog", "")
	}
	// Each text is built in a buffer the walk recycles: the parse copies
	// what it keeps.
	err := cl.EachRevision(func(i int, text []byte, err error) error {
		checkEntry(&ps, cl, cl.Len(), i, seen, []int{i}, "changelog")
		var cs *revlog.Changeset
		if err == nil {
			cs, err = revlog.ParseChangeset(text)
		}
		if err != nil {
			v.refersmf = true
			ps.err(i, fmt.Sprintf("unpacking changeset %s: %s", cl.Entry(i).Node.Short(), hgText(err, "00changelog")), "")
			return nil
		}
		if cs.Manifest != revlog.NullNode {
			v.refersmf = true
			mflinkrevs[cs.Manifest] = append(mflinkrevs[cs.Manifest], i)
		}
		for _, f := range cs.Files {
			filelinkrevs[f] = append(filelinkrevs[f], i)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	v.emit(ps)
	return mflinkrevs, filelinkrevs, nil
}

// nodeRef is a file node a manifest names and the first changeset
// (manifest linkrev) naming it; most files have one or two, so a slice
// costs far less than a map per file.
type nodeRef struct {
	node  revlog.Node
	lr    int
	found bool // the filelog has it
}

// fileRefs are the nodes manifests name for one path, in the order
// first named. Most paths have a few; a path with many (a hot file of a
// long history) gets an index, so that finding a node does not scan them
// all for each manifest and each filelog revision.
type fileRefs struct {
	refs []nodeRef
	idx  map[revlog.Node]int32
}

// indexFrom is the length from which a fileRefs is indexed.
const indexFrom = 16

func (f *fileRefs) find(n revlog.Node) int {
	if f == nil {
		return -1
	}
	if f.idx != nil {
		if i, ok := f.idx[n]; ok {
			return int(i)
		}
		return -1
	}
	for i := range f.refs {
		if f.refs[i].node == n {
			return i
		}
	}
	return -1
}

func (f *fileRefs) refsOrNil() []nodeRef {
	if f == nil {
		return nil
	}
	return f.refs
}

func (f *fileRefs) add(r nodeRef) {
	f.refs = append(f.refs, r)
	switch {
	case f.idx != nil:
		f.idx[r.node] = int32(len(f.refs) - 1)
	case len(f.refs) >= indexFrom:
		f.idx = make(map[revlog.Node]int32, 2*len(f.refs))
		for i := range f.refs {
			f.idx[f.refs[i].node] = int32(i)
		}
	}
}

// manifestReading is what reading the manifest log's revisions found:
// the work that needs nothing from the changelog, which Options.Ahead
// does while the changelog is checked.
type manifestReading struct {
	// filenodes is manifests' result, but each nodeRef's lr holds the
	// first manifest revision naming the node, until manifests knows
	// that revision's linkrev.
	filenodes map[string]*fileRefs
	errs      map[int][]string // a revision's "reading ..." findings, in hg's order
	done      chan struct{}
}

func newManifestReading() *manifestReading {
	return &manifestReading{filenodes: map[string]*fileRefs{}, errs: map[int][]string{}, done: make(chan struct{})}
}

// readManifests reads every manifest revision as hg's verify does
// (manifestNewEntries; with Options.Full, the full text too) into mr,
// and closes mr.done.
func (v *verifier) readManifests(ctx context.Context, mr *manifestReading) {
	defer close(mr.done)
	ml := v.ml
	for i := 0; i < ml.Len(); i++ {
		if i&255 == 0 && ctx.Err() != nil {
			return
		}
		n := ml.Entry(i).Node
		entries, err := manifestNewEntries(ml, i)
		if err != nil {
			mr.errs[i] = append(mr.errs[i], fmt.Sprintf("reading delta %s: %s", n.Short(), hgText(err, "00manifest")))
		}
		for _, e := range entries {
			refs := mr.filenodes[e.Path]
			if refs == nil {
				refs = &fileRefs{}
				mr.filenodes[e.Path] = refs
			}
			if refs.find(e.Node) < 0 {
				refs.add(nodeRef{node: e.Node, lr: i})
			}
		}
		if v.opt.Full {
			// verify.py: "Various issues can affect manifest. So we
			// read each full text from storage."
			text, err := ml.Revision(i)
			if err == nil {
				_, err = revlog.ParseManifest(text)
			}
			if err != nil {
				mr.errs[i] = append(mr.errs[i], fmt.Sprintf("reading full manifest %s: %s", n.Short(), hgText(err, "00manifest")))
			}
		}
	}
}

// manifests checks the manifest log's entries against the changesets and
// returns, for every path, the file nodes manifests name, each with the
// linkrev of the first manifest naming it. mr is readManifests' result;
// manifests waits for it.
func (v *verifier) manifests(mflinkrevs map[revlog.Node][]int, mr *manifestReading) map[string]*fileRefs {
	<-mr.done
	ml := v.ml
	clLen := v.r.Changelog().Len()
	seen := make(map[revlog.Node]int, ml.Len())
	lrOf := make([]int, ml.Len())
	var ps problems
	if v.refersmf && ml.Len() == 0 {
		ps.err(0, "empty or missing manifest", "")
	}
	for i := 0; i < ml.Len(); i++ {
		n := ml.Entry(i).Node
		lr := checkEntry(&ps, ml, clLen, i, seen, mflinkrevs[n], "manifest")
		lrOf[i] = lr
		if _, ok := mflinkrevs[n]; ok {
			delete(mflinkrevs, n)
		} else {
			ps.err(lr, n.Short()+" not in changesets", "manifest")
		}
		for _, msg := range mr.errs[i] {
			ps.err(lr, msg, "manifest")
		}
	}
	for _, refs := range mr.filenodes {
		for j := range refs.refs {
			refs.refs[j].lr = lrOf[refs.refs[j].lr]
		}
	}
	type ref struct {
		c int
		n revlog.Node
	}
	var left []ref
	// With no manifest log at all, that was said once (above), not for
	// every changeset.
	if v.havemf {
		for n, cs := range mflinkrevs {
			for _, c := range cs {
				left = append(left, ref{c, n})
			}
		}
	}
	sort.Slice(left, func(i, j int) bool {
		if left[i].c != left[j].c {
			return left[i].c < left[j].c
		}
		return string(left[i].n[:]) < string(left[j].n[:])
	})
	for _, x := range left {
		ps.err(x.c, "changeset refers to unknown revision "+x.n.Short(), "manifest")
	}
	v.emit(ps)
	return mr.filenodes
}

// manifestNewEntries returns the entries manifest rev adds or changes
// relative to its delta parent, as verify.py's readdelta(shallow=True)
// does: for a revision stored as a delta, the lines its hunks insert,
// read from the stored chunk alone (hg's revdiff returns the chunk, and
// nothing rebuilds or hashes the text); for a full snapshot (no delta
// parent), every entry of its text, which is rebuilt and hashed (hg's
// rawdata). Options.Full checks the others' texts.
func manifestNewEntries(ml *revlog.Revlog, rev int) ([]revlog.ManifestEntry, error) {
	if ml.DeltaParent(rev) == revlog.NullRev {
		text, err := ml.Revision(rev)
		if err != nil {
			return nil, err
		}
		return revlog.ParseManifest(text)
	}
	delta, err := ml.RawChunk(rev)
	if err != nil {
		return nil, err
	}
	var added []byte
	for len(delta) > 0 {
		if len(delta) < 12 {
			return nil, fmt.Errorf("%w: truncated delta hunk header", revlog.ErrBadDelta)
		}
		n := int(uint32(delta[8])<<24 | uint32(delta[9])<<16 | uint32(delta[10])<<8 | uint32(delta[11]))
		if n > len(delta)-12 {
			return nil, fmt.Errorf("%w: delta hunk of %d bytes overruns the delta", revlog.ErrBadDelta, n)
		}
		added = append(added, delta[12:12+n]...)
		delta = delta[12+n:]
	}
	entries, err := revlog.ParseManifest(added)
	if err != nil {
		// Not whole lines (a delta no hg writes): the full text.
		text, terr := ml.Revision(rev)
		if terr != nil {
			return nil, terr
		}
		return revlog.ParseManifest(text)
	}
	return entries, nil
}

// hgText is err as hg's verify words it: for a text that does not hash
// to its node, hg's "integrity check failed on RADIX:REV", RADIX being
// the revlog's unencoded name without ".i" (revlog.py's display_id:
// "00changelog", "00manifest", "data/PATH"); else err's message.
func hgText(err error, radix string) string {
	var ie *revlog.IntegrityError
	if errors.As(err, &ie) {
		return fmt.Sprintf("integrity check failed on %s:%d", radix, ie.Rev)
	}
	return err.Error()
}

func (v *verifier) crosscheck(filelinkrevs map[string][]int, filenodes map[string]*fileRefs) {
	var ps problems
	for _, f := range sortedKeys(filelinkrevs) {
		if _, ok := filenodes[f]; !ok && v.havemf {
			ps.err(filelinkrevs[f][0], "in changeset but not in manifest", f)
		}
	}
	for _, f := range sortedKeys(filenodes) {
		if _, ok := filelinkrevs[f]; !ok && v.havecl {
			lr := noRev
			if fl, err := v.r.File(f); err == nil {
				for _, ref := range filenodes[f].refs {
					if rev, ok := fl.Rev(ref.node); ok {
						if l := fl.Entry(rev).LinkRev; lr == noRev || l < lr {
							lr = l
						}
					}
				}
				fl.Close()
			}
			ps.err(lr, "in manifest but not in changeset", f)
		}
	}
	v.emit(ps)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileResult is what checking one filelog found.
type fileResult struct {
	ps        problems
	revisions int
	files     []string // unencoded store names of the filelog's files
	missing   bool     // the filelog does not exist
}

// files checks every filelog, GOMAXPROCS at a time, and reports results
// in path order so the output does not depend on scheduling. storeFiles
// (storeDataFiles) is consumed.
func (v *verifier) files(ctx context.Context, storeFiles map[string]bool, filelinkrevs map[string][]int, filenodes map[string]*fileRefs) (int, int, error) {
	set := map[string]bool{}
	for f := range filelinkrevs {
		set[f] = true
	}
	for f := range filenodes {
		set[f] = true
	}
	files := sortedKeys(set)
	// Each result is made when its filelog is checked and dropped once
	// reported: made up front, with a channel each, 250,000 filelogs
	// held 46 MB of them at once.
	results := make([]*fileResult, len(files))
	var mu sync.Mutex
	ready := sync.NewCond(&mu)
	clLen := v.r.Changelog().Len()
	if v.ahead != nil {
		v.ahead.handedOver.Store(true)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(len(files), 1))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				res := &fileResult{}
				if ctx.Err() == nil {
					v.checkFile(ctx, res, files[i], clLen, filelinkrevs[files[i]], filenodes[files[i]])
				}
				mu.Lock()
				results[i] = res
				ready.Broadcast()
				mu.Unlock()
			}
		}()
	}
	revisions := 0
	for i := range files {
		mu.Lock()
		for results[i] == nil {
			ready.Wait()
		}
		res := results[i]
		mu.Unlock()
		var ps problems
		for _, name := range res.files {
			if storeFiles[name] && !res.missing {
				delete(storeFiles, name)
			} else {
				ps.warnf(" warning: revlog '%s' not in fncache!", name)
				v.fncacheWarned = true
			}
		}
		v.emit(append(ps, res.ps...))
		revisions += res.revisions
		results[i] = nil // no worker writes it again
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	var ps problems
	for _, f := range sortedKeys(storeFiles) {
		// Like hg's datafiles, skip fncache entries whose file is gone.
		if fi, err := fs.Stat(v.r.Store.FS(), v.r.Store.Encode(f)); err != nil || fi.Size() == 0 {
			continue
		}
		ps.warnf("warning: orphan data file '%s'", f)
	}
	v.emit(ps)
	return len(files), revisions, nil
}

// contents is what reading every revision of one filelog found: the
// work of hg's verifyintegrity, which needs nothing from the changelog
// or the manifests, so Options.Ahead does it early.
type contents struct {
	err     error // opening the filelog (repo.ErrNoFile: it does not exist)
	inline  bool
	revs    int
	bad     []badRev     // revisions that do not rebuild or hash
	copies  []copySource // revisions recording a copy
	linkrev []int        // each revision's linkrev as stored
}

type badRev struct {
	rev int
	msg string
}

type copySource struct {
	rev  int
	path string
	node string
}

// readContents rebuilds and hashes every revision of filelog f and
// notes the copies they record. It stops early when ctx is done.
func (v *verifier) readContents(ctx context.Context, f string) *contents {
	c := &contents{}
	fl, err := v.r.File(f)
	if err != nil {
		c.err = err
		return c
	}
	defer fl.Close()
	c.inline, c.revs = fl.Inline(), fl.Len()
	c.linkrev = make([]int, fl.Len())
	// Each text is looked at once and dropped: EachRevision recycles
	// their buffers (Revision would allocate one per revision).
	err = fl.EachRevision(func(i int, text []byte, err error) error {
		if i&255 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e := fl.Entry(i)
		c.linkrev[i] = e.LinkRev
		if err != nil {
			c.bad = append(c.bad, badRev{i, fmt.Sprintf("unpacking %s: %s", e.Node.Short(), hgText(err, "data/"+f))})
			return nil
		}
		if meta, _, err := revlog.ParseFileMeta(text); err == nil && meta["copy"] != "" {
			c.copies = append(c.copies, copySource{i, meta["copy"], meta["copyrev"]})
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		c.err = err
	}
	return c
}

// ahead reads filelogs' contents (readContents) on a bounded pool of
// goroutines, in path order, while the changelog and manifests are
// checked; checkFile takes each result, or reads the filelog itself
// if the pool has not reached it (once: whoever comes first reads, the
// other waits).
type ahead struct {
	paths []string // sorted: a path's slot is found by binary search (a map of 250,000 paths held 13 MB)
	slots []aheadSlot
	next  atomic.Int64
	// handedOver: the files phase has started, whose own workers read
	// what the pool has not reached; the pool stops claiming more, so
	// that no more than GOMAXPROCS filelogs are read at once (each
	// reader holds its texts and chunks).
	handedOver atomic.Bool
	ctx        context.Context
	quit       context.CancelFunc
	wg         sync.WaitGroup
	v          *verifier
}

type aheadSlot struct {
	once sync.Once
	c    *contents
}

// startAhead starts the pool on the filelogs storeFiles lists.
func startAhead(ctx context.Context, v *verifier, storeFiles map[string]bool) *ahead {
	a := &ahead{v: v}
	for name := range storeFiles {
		if p, ok := strings.CutPrefix(name, "data/"); ok {
			if p, ok = strings.CutSuffix(p, ".i"); ok {
				a.paths = append(a.paths, p)
			}
		}
	}
	sort.Strings(a.paths)
	a.slots = make([]aheadSlot, len(a.paths))
	a.ctx, a.quit = context.WithCancel(ctx)
	workers := min(runtime.GOMAXPROCS(0), len(a.paths))
	for w := 0; w < workers; w++ {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for a.ctx.Err() == nil && !a.handedOver.Load() {
				i := int(a.next.Add(1) - 1)
				if i >= len(a.paths) {
					return
				}
				a.fill(i)
			}
		}()
	}
	return a
}

// fill reads slot i's filelog unless it was read (or is being read:
// then it waits). Only take reads the result, once, after its own fill.
func (a *ahead) fill(i int) {
	s := &a.slots[i]
	s.once.Do(func() { s.c = a.v.readContents(a.ctx, a.paths[i]) })
}

// take returns f's contents, reading them now if the pool has not, and
// releases them; ok is false for a filelog the pool does not cover.
func (a *ahead) take(f string) (*contents, bool) {
	i, ok := slices.BinarySearch(a.paths, f)
	if !ok {
		return nil, false
	}
	a.fill(i)
	c := a.slots[i].c
	a.slots[i].c = nil
	return c, true
}

// stop ends the pool and waits for it.
func (a *ahead) stop() {
	a.quit()
	a.wg.Wait()
}

// storeDataFiles lists the store's filelog files (unencoded "data/..."
// names) as verify.py's storefiles: the fncache entries when there is an
// fncache — existence is checked only for the few not matched by a tracked
// file, saving a stat per file — else a walk of the store.
func (v *verifier) storeDataFiles() (map[string]bool, error) {
	out := map[string]bool{}
	if v.r.Store.Requirements.Has("fncache") {
		entries, err := v.r.Store.Fncache()
		if err != nil {
			return nil, fmt.Errorf("reading fncache: %w", err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e, "data/") {
				out[e] = true
			}
		}
		return out, nil
	}
	walked, err := v.r.Store.Walk()
	if err != nil {
		return nil, fmt.Errorf("listing store files: %w", err)
	}
	for _, f := range walked {
		if f.Size > 0 && strings.HasPrefix(f.Name, "data/") {
			out[f.Name] = true
		}
	}
	return out, nil
}

// checkFile verifies one filelog: every revision reconstructs with its
// node, linkrevs and parents are sane, every node is named by a manifest
// and every manifest reference exists, copy sources exist.
func (v *verifier) checkFile(ctx context.Context, res *fileResult, f string, clLen int, linkrevs []int, fnodes *fileRefs) {
	ps := &res.ps
	lr := noRev
	if len(linkrevs) > 0 {
		lr = linkrevs[0]
	}
	var c *contents
	if v.ahead != nil {
		c, _ = v.ahead.take(f)
	}
	if c == nil {
		c = v.readContents(ctx, f)
	}
	var fl *revlog.Revlog
	if c.err == nil {
		// Indexes are small: opening again costs less than keeping
		// every filelog's open from the pool.
		var err error
		if fl, err = v.r.File(f); err != nil {
			c.err = err
		}
	}
	if errors.Is(c.err, repo.ErrNoFile) {
		res.files, res.missing = []string{"data/" + f + ".i"}, true
		ps.err(lr, "empty or missing "+f, "")
	} else if c.err != nil {
		ps.err(lr, fmt.Sprintf("broken revlog! (%v)", c.err), f)
		return
	}
	if fl != nil {
		defer fl.Close()
		res.files = []string{"data/" + f + ".i"}
		if !fl.Inline() {
			res.files = append(res.files, "data/"+f+".d")
		}
		if fl.Len() == 0 {
			ps.err(lr, "empty or missing "+f, "")
		}
		if fl.Len() != c.revs {
			// Changed under us; read again.
			c = v.readContents(ctx, f)
		}
		for _, b := range c.bad {
			ps.err(linkOr(c.linkrev[b.rev], clLen, lr), b.msg, f)
		}
		seen := make(map[revlog.Node]int, fl.Len())
		lrs := make([]int, fl.Len())
		for i := 0; i < fl.Len(); i++ {
			res.revisions++
			n := fl.Entry(i).Node
			l := checkEntry(ps, fl, clLen, i, seen, linkrevs, f)
			lrs[i] = l
			if fnodes != nil {
				if j := fnodes.find(n); j < 0 {
					ps.err(l, n.Short()+" not in manifests", f)
				} else {
					fnodes.refs[j].found = true
				}
			}
		}
		for _, cp := range c.copies {
			l := lrs[cp.rev]
			fl2, err := v.r.File(cp.path)
			if err != nil || fl2.Len() == 0 {
				short := cp.node
				if len(short) > 12 {
					short = short[:12]
				}
				ps.err(l, fmt.Sprintf("empty or missing copy source revlog %s:%s", cp.path, short), f)
				if fl2 != nil {
					fl2.Close()
				}
				continue
			}
			node, err := revlog.ParseNode(cp.node)
			if err == nil && node != revlog.NullNode {
				if _, ok := fl2.Rev(node); !ok {
					ps.err(l, fmt.Sprintf("checking rename of %s: %s@%s: no node", fl.Entry(cp.rev).Node.Short(), cp.path, cp.node), f)
				}
			}
			fl2.Close()
		}
	}
	var left []nodeRef
	for _, ref := range fnodes.refsOrNil() {
		if !ref.found {
			left = append(left, ref)
		}
	}
	sort.Slice(left, func(i, j int) bool {
		if left[i].lr != left[j].lr {
			return left[i].lr < left[j].lr
		}
		return string(left[i].node[:]) < string(left[j].node[:])
	})
	for _, x := range left {
		ps.err(x.lr, "manifest refers to unknown revision "+x.node.Short(), f)
	}
}

func linkOr(linkrev, clLen, def int) int {
	if linkrev >= 0 && linkrev < clLen {
		return linkrev
	}
	return def
}
