package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
)

// Sentinel errors.
var (
	// ErrCorrupt: a changegroup contradicts itself or the repository
	// (unknown linknode, empty file group, bad file name).
	ErrCorrupt = errors.New("invalid changegroup")
	// ErrUnsupported: content this package does not apply (tree
	// manifests, stream bundles given to unbundle).
	ErrUnsupported = errors.New("unsupported")
	// ErrSessionDone: the session was already committed or aborted.
	ErrSessionDone = errors.New("session already finished")
	// ErrUnrelated is setdiscovery's abort: a pull's remote shares no
	// changeset with the repository, which has some (PullOptions.Force).
	ErrUnrelated = errors.New("repository is unrelated")
)

// Phase numbers (phases.py).
const (
	Public = 0
	Draft  = 1
	Secret = 2
)

// ApplyResult is what one changegroup added.
type ApplyResult struct {
	Changesets int // new changelog revisions
	Revisions  int // new filelog revisions
	Files      int // file groups received
	// FilesAdded are the file groups that added a revision: the files a
	// changegroup of only the revisions missing here would hold.
	FilesAdded int
	// Return is cg1unpacker.apply's value: 1 + change in heads (never 0).
	Return int
	// Added are the new changelog revisions, in order.
	Added []int
}

// ApplyChangegroup adds the changegroup read from cg, as
// cg1unpacker.apply does for srctype "unbundle" or "pull": changelog,
// manifests, files; new changesets registered in targetPhase (Draft for
// unbundle and pull; the caller then moves phases as the source says).
func (s *Session) ApplyChangegroup(ctx context.Context, cg *changegroup.Reader, targetPhase int) (*ApplyResult, error) {
	return s.applyChangegroup(ctx, cg, targetPhase, 0)
}

// applyChangegroup is ApplyChangegroup with the number of changesets the
// bundle part announces (nbchanges; 0 when unknown), the changesets
// progress topic's total.
func (s *Session) applyChangegroup(ctx context.Context, cg *changegroup.Reader, targetPhase, nbChanges int) (*ApplyResult, error) {
	if s.done {
		return nil, ErrSessionDone
	}
	defer s.guard()
	res, err := s.apply(ctx, cg, targetPhase, nbChanges)
	if err != nil {
		return nil, s.fail(err)
	}
	return res, nil
}

func (s *Session) apply(ctx context.Context, cg *changegroup.Reader, targetPhase, nbChanges int) (*ApplyResult, error) {
	cl := s.cl
	oldHeads := headSet(cl)
	clStart := cl.Len()
	res := &ApplyResult{}

	kind, _, err := cg.NextGroup()
	if err != nil {
		return nil, groupErr(err, "changelog")
	}
	if kind != changegroup.Changelog {
		return nil, fmt.Errorf("%w: changegroup does not start with the changelog", ErrCorrupt)
	}
	s.status("adding changesets\n")
	// The files the new changesets touch: the files topic's total (hg's
	// efiles), read only for a progress bar.
	var efiles map[string]bool
	if s.opt.Progress != nil {
		efiles = map[string]bool{}
	}
	var d changegroup.Delta
	for chunks := 1; ; chunks++ {
		ok, err := cg.NextDelta(&d)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		s.progress("changesets", chunks, nbChanges)
		s.debug("add changeset %s\n", revlog.Node(d.Node).Short())
		// Changesets already present are skipped; hg moves their phase
		// only for push and serve sources (phaseall), never here.
		rev, added, err := cl.AddDelta(d.Node, d.P1, d.P2, d.Base, d.Data, cl.Len(), d.Flags)
		if err != nil {
			return nil, err
		}
		if added && efiles != nil {
			if err := addFiles(efiles, cl, rev); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	s.progress("changesets", -1, 0)
	clEnd := cl.Len()
	res.Changesets = clEnd - clStart
	for r := clStart; r < clEnd; r++ {
		res.Added = append(res.Added, r)
	}
	linkRev := func(n [20]byte) (int, error) {
		r, ok := cl.Rev(n)
		if !ok {
			return 0, fmt.Errorf("%w: revision links to unknown changeset %s", ErrCorrupt, revlog.Node(n))
		}
		return r, nil
	}

	kind, _, err = cg.NextGroup()
	if err != nil {
		return nil, groupErr(err, "manifest")
	}
	if kind != changegroup.Manifest {
		return nil, fmt.Errorf("%w: manifests expected after the changelog", ErrCorrupt)
	}
	// The manifest and file groups go to worker goroutines unless
	// Options.FileWorkers (or GOMAXPROCS) is 1 (filegroups.go).
	var fa *fileApplier
	if s.fileWorkers() > 1 {
		fa = s.newFileApplier(ctx, linkRev, res)
		defer fa.stop(nil) // a no-op unless a panic left jobs running
	}
	s.status("adding manifests\n")
	// hg: "We know that we'll never have more manifests than we had
	// changesets."
	next := s.counted(cg, "manifests", res.Changesets)
	if fa != nil {
		err = fa.group(next, "00manifest.i", true)
	} else {
		_, _, err = s.addGroup(ctx, next, s.ml, "00manifest.i", linkRev)
	}
	if err != nil {
		return nil, err
	}
	s.progress("manifests", -1, 0)

	s.status("adding file changes\n")
	if err := s.applyFiles(ctx, cg, fa, linkRev, res, len(efiles)); err != nil {
		return nil, err
	}
	s.progress("files", -1, 0)

	// Heads, as apply counts them: an empty repository has the null head.
	heads := headSet(cl)
	deltaHeads := 0
	if len(oldHeads) > 0 {
		deltaHeads = len(heads) - len(oldHeads)
		for h := range heads {
			if oldHeads[h] {
				continue
			}
			closes, err := closesBranch(cl, h)
			if err != nil {
				return nil, err
			}
			if closes {
				deltaHeads--
			}
		}
	}
	if len(res.Added) > 0 {
		s.phases.registerNew(cl, targetPhase, res.Added)
	}
	s.Changesets += res.Changesets
	s.Revisions += res.Revisions
	s.Files += res.Files
	s.FilesAdded += res.FilesAdded
	s.HeadsDelta += deltaHeads
	if deltaHeads < 0 {
		res.Return = deltaHeads - 1
	} else {
		res.Return = deltaHeads + 1
	}
	s.recordResult(res.Return)
	return res, nil
}

// recordResult folds one apply result into ModHeads as
// bundle2.combinechangegroupresults does.
func (s *Session) recordResult(ret int) {
	if ret < -1 {
		s.headsSum += ret + 1
	} else if ret > 1 {
		s.headsSum += ret - 1
	}
	switch {
	case s.headsSum > 0:
		s.ModHeads = 1 + s.headsSum
	case s.headsSum < 0:
		s.ModHeads = -1 + s.headsSum
	default:
		s.ModHeads = 1
	}
}

// progress reports to Options.Progress.
func (s *Session) progress(topic string, pos, total int) {
	if s.opt.Progress != nil {
		s.opt.Progress(topic, pos, total)
	}
}

// counted is cg.NextDelta, reporting each delta read as the next
// position of topic when there is a progress bar (hg's chunk callback).
func (s *Session) counted(cg *changegroup.Reader, topic string, total int) func(*changegroup.Delta) (bool, error) {
	if s.opt.Progress == nil {
		return cg.NextDelta
	}
	chunks := 0
	return func(d *changegroup.Delta) (bool, error) {
		ok, err := cg.NextDelta(d)
		if ok {
			chunks++
			s.opt.Progress(topic, chunks, total)
		}
		return ok, err
	}
}

// addFiles adds the files changeset rev of cl touches to set (hg's
// onchangelog callback).
func addFiles(set map[string]bool, cl *revlog.Writer, rev int) error {
	text, err := cl.Revision(rev)
	if err != nil {
		return err
	}
	cs, err := revlog.ParseChangeset(text)
	if err != nil {
		return err
	}
	for _, f := range cs.Files {
		set[f] = true
	}
	return nil
}

func groupErr(err error, what string) error {
	if err == io.EOF {
		return fmt.Errorf("%w: changegroup ends before its %s group", ErrCorrupt, what)
	}
	return err
}

// applyFiles adds the file groups: on fa's workers, or here when fa is
// nil.
func (s *Session) applyFiles(ctx context.Context, cg *changegroup.Reader, fa *fileApplier, linkRev func([20]byte) (int, error), res *ApplyResult, expectedFiles int) error {
	for {
		kind, name, err := cg.NextGroup()
		if err == io.EOF {
			break
		}
		if err == nil && kind != changegroup.File {
			err = fmt.Errorf("%w: unexpected group after the file groups", ErrCorrupt)
		}
		// Checked per group as well as per delta: a bundle of many
		// small files is mostly groups of one delta, and each group
		// opens a file.
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			err = fault("file group")
		}
		// The reader checks names too; a store path is built from this
		// one, so it is checked where it is used.
		if err == nil {
			err = changegroup.CheckPath(name)
		}
		if err != nil {
			if fa != nil {
				return fa.fail(err)
			}
			return err
		}
		res.Files++
		s.debug("adding %s revisions\n", name)
		s.progress("files", res.Files, expectedFiles)
		if fa != nil {
			if err := fa.group(cg.NextDelta, name, false); err != nil {
				return err
			}
			continue
		}
		n, err := s.addFileGroup(ctx, cg, name, linkRev)
		if err != nil {
			return err
		}
		res.Revisions += n
		if n > 0 {
			res.FilesAdded++
		}
	}
	if fa != nil {
		return fa.finish()
	}
	return nil
}

// addGroup adds one group's deltas, as next gives them (NextDelta's
// contract), to w, returning how many deltas the group held and how many
// revisions were new.
func (s *Session) addGroup(ctx context.Context, next func(*changegroup.Delta) (bool, error), w *revlog.Writer, what string,
	linkRev func([20]byte) (int, error)) (seen, added int, err error) {
	var d changegroup.Delta
	for ; ; seen++ {
		ok, err := next(&d)
		if err != nil {
			return seen, added, err
		}
		if !ok {
			return seen, added, nil
		}
		lr, err := linkRev(d.LinkNode)
		if err != nil {
			return seen, added, fmt.Errorf("%s: %w", what, err)
		}
		_, isNew, err := w.AddDelta(d.Node, d.P1, d.P2, d.Base, d.Data, lr, d.Flags)
		if err != nil {
			return seen, added, err
		}
		if isNew {
			added++
		}
		if err := ctx.Err(); err != nil {
			return seen, added, err
		}
	}
}

// addFileGroup adds a filelog group, closing the writer when it ends so
// that a changegroup of many files keeps few descriptors open. A file
// whose earlier group (in this changegroup or an earlier part of the
// bundle) is still pending continues in that group's writer: one writer
// per revlog per transaction, since a second one would read the file
// without the pending revisions and write over them at flush.
func (s *Session) addFileGroup(ctx context.Context, cg *changegroup.Reader, name string,
	linkRev func([20]byte) (int, error)) (int, error) {
	w, pending := s.pendingFiles[name]
	if !pending {
		var err error
		if w, err = s.openWriter(filelogName(name), false); err != nil {
			return 0, err
		}
	}
	before := w.Pending()
	seen, n, err := s.addGroup(ctx, cg.NextDelta, w, name, linkRev)
	if err == nil && seen == 0 {
		err = fmt.Errorf("%w: received file revlog group is empty", ErrCorrupt)
	}
	if err != nil {
		if !pending {
			w.Discard() // a pending writer is Abort's to discard
		}
		return 0, err
	}
	w.EndGroup()
	if err := s.groupDone(ctx, w, name, pending, before); err != nil {
		return 0, err
	}
	return n, nil
}

// groupDone records a filelog whose group ended (EndGroup called): it is
// pending (continued by a later group of the same file until flushed),
// and the pending filelogs are flushed once they hold a batch. pending
// says w was already; before is w.Pending() when the group began.
func (s *Session) groupDone(ctx context.Context, w *revlog.Writer, name string, pending bool, before int) error {
	if !pending {
		s.pending = append(s.pending, pendingFile{w: w, name: name})
		if s.pendingFiles == nil {
			s.pendingFiles = map[string]*revlog.Writer{}
		}
		s.pendingFiles[name] = w
	}
	s.pendingBytes += w.Pending() - before
	batch := s.opt.WriteBatch
	if batch == 0 {
		batch = DefaultWriteBatch
	}
	if s.pendingBytes >= batch || len(s.pending) >= maxPendingFiles {
		return s.flushPending(ctx)
	}
	return nil
}

// Finished filelog writers are flushed in batches: their journal entries
// then reach the journal with one write per batch, and each file gets one
// write per batch (two once split), instead of hg's writes per revision.
const (
	// DefaultWriteBatch is Options.WriteBatch's default.
	DefaultWriteBatch = 8 << 20
	maxPendingFiles   = 4096
)

// pendingFile is a filelog whose group is complete but not yet flushed.
type pendingFile struct {
	w    *revlog.Writer
	name string // tracked file path
}

// flushPending writes and closes the finished filelogs, recording them
// in the fncache. The journal entries of the whole batch are written
// first, with one write; the files are then written by flushWorkers
// goroutines, because creating a file is the kernel's slowest step here
// (hundreds of microseconds on ext4, more on Windows) and independent
// files can be created concurrently. A cancelled ctx stops the batch
// between files; a panic in a worker is raised again here, on the
// session's goroutine, once every worker has stopped.
func (s *Session) flushPending(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.tx.FlushJournal(); err != nil {
		return err
	}
	pending := s.pending
	s.pending, s.pendingFiles = nil, nil
	s.pendingBytes = 0
	errs := make([]error, len(pending)+1)
	var panicked any
	var panicOnce sync.Once
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(flushWorkers, len(pending))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicOnce.Do(func() { panicked = r })
					for range next { // let the feeder finish
					}
				}
			}()
			for i := range next {
				if errs[i] = fault("flush"); errs[i] == nil {
					errs[i] = pending[i].w.Close()
				}
			}
		}()
	}
	for i := range pending {
		if err := ctx.Err(); err != nil {
			errs[len(pending)] = err
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if panicked != nil {
		s.pending = pending // for Abort to discard
		panic(panicked)
	}
	if err := errors.Join(errs...); err != nil {
		// Close after Close is a no-op: Abort discards nothing twice.
		s.pending = pending
		return err
	}
	for _, p := range pending {
		s.addFncache(filelogName(p.name))
		if !p.w.Inline() {
			s.addFncache("data/" + p.name + ".d")
		}
	}
	return nil
}

// flushWorkers is how many filelogs are written at once.
const flushWorkers = 4

// faultHook, set by the package's tests only, is called at points inside
// an apply ("file group", at each file group; "group apply", before a
// worker applies a group, the manifests' first; "flush", before each
// filelog a flush worker writes) to inject a failure there: the error it
// returns, or its panic.
var faultHook func(at string) error

func fault(at string) error {
	if faultHook == nil {
		return nil
	}
	return faultHook(at)
}

// headSet returns the changelog's heads (revisions without children); an
// empty changelog has the null head, as changelog.heads() says.
func headSet(cl *revlog.Writer) map[int]bool {
	n := cl.Len()
	if n == 0 {
		return map[int]bool{revlog.NullRev: true}
	}
	hasChild := make([]bool, n)
	for r := 0; r < n; r++ {
		e := cl.Entry(r)
		if e.P1 >= 0 {
			hasChild[e.P1] = true
		}
		if e.P2 >= 0 {
			hasChild[e.P2] = true
		}
	}
	heads := map[int]bool{}
	for r := 0; r < n; r++ {
		if !hasChild[r] {
			heads[r] = true
		}
	}
	return heads
}

func closesBranch(cl *revlog.Writer, rev int) (bool, error) {
	if rev < 0 {
		return false, nil
	}
	text, err := cl.Revision(rev)
	if err != nil {
		return false, err
	}
	cs, err := revlog.ParseChangeset(text)
	if err != nil {
		return false, err
	}
	_, ok := cs.Extra["close"]
	return ok, nil
}
