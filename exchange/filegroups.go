package exchange

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
)

// The manifest group and the file groups applied on worker goroutines
// (Options.FileWorkers; HGFS_TUNE=-applyfork in the hgfs command sets
// one, the plain path).
//
// Each group is applied to its own revlog, and its work (patching each
// delta onto its base, hashing the text against its node, choosing and
// compressing the stored chunk) needs nothing from the other groups'
// but the changelog, complete by then (link revisions). The session's
// goroutine reads the changegroup: it copies each group's deltas into a
// job and hands the job to a worker, so the manifests are applied while
// the file groups after them are read and applied on the other workers.
// The jobs are retired in changegroup order, doing what the plain path
// does when a group ends (pending writers, batched flushes, revision
// counts), by whichever goroutine finishes the oldest job (or waits for
// it), under the applier's lock: so a finished filelog reaches its file
// (with write-batch 0, or once a batch is full) while the session's
// goroutine waits for the rest of a slow stream, as on one goroutine. On the corpus bundle the manifest group is about a quarter of
// the unbundle's CPU time and the file groups about 60%.
//
// What is checked, and what fails, is the plain path's: every group is
// applied by the same addGroup, and the error returned is the first in
// changegroup order. A job holds the deltas read up to the group's end
// or to the reader's error, which ends it (the deltas before a damaged
// chunk are applied, and can fail, first, as when reading and applying
// alternate); an error of the session's goroutine (a bad file name, a
// cancelled context) comes after every job already handed out. Later
// jobs are cancelled once one fails, and a failure waits for every
// worker to stop before the session is aborted; the writers of the file
// jobs not retired are discarded there, the pending ones (and the
// manifest's) by Abort. A panic in a worker is raised again on the
// session's goroutine.
//
// Memory is bounded: at most maxJobs jobs and maxJobBytes bytes of copied
// deltas are in flight. A group larger than maxJobBytes is applied on
// the session's goroutine, after the jobs before it, reading the rest of
// the group as it goes (the plain path), so no group is held whole in
// memory. A file whose group is in flight when another group of it
// begins (a bundle whose parts repeat a file) waits for it, and a file
// whose writer is pending is continued on the session's goroutine: one
// writer per revlog, used by one goroutine at a time.
const (
	maxJobBytes = 16 << 20
	maxJobs     = 64
)

// fileJob is one group.
type fileJob struct {
	name    string
	deltas  []changegroup.Delta // Data points into data
	data    []byte
	readErr error                                  // how the group's reading ended, if not at its end
	rest    func(*changegroup.Delta) (bool, error) // reading continues here (a group too large to copy)
	w       *revlog.Writer
	pending bool // w continues an earlier group's writer (or is s.ml)
	before  int  // w.Pending() when the group began
	// manifest: the manifest group (name "00manifest.i"), applied to
	// the session's manifest writer.
	manifest bool
	here     bool // applied on the session's goroutine

	n        int // new revisions
	err      error
	panicked any
	finished bool // run returned (under mu)
}

// fileApplier runs the groups of one changegroup.
type fileApplier struct {
	s       *Session
	outer   context.Context // the apply's
	ctx     context.Context // the workers': also cancelled when a job fails
	cancel  context.CancelFunc
	linkRev func([20]byte) (int, error)
	workers int
	started int
	res     *ApplyResult

	// mu guards what follows, and the session's pending filelogs and
	// fncache (groupDone, flushPending) while the applier runs.
	mu      sync.Mutex
	changed *sync.Cond          // a job finished or was retired, or one failed
	jobs    chan *fileJob       // nil once stopped
	queue   []*fileJob          // handed out, not retired, in changegroup order
	bytes   int                 // copied delta bytes in queue
	names   map[string]*fileJob // queued file jobs by file
	err     error               // the first failure, in changegroup order
	panic   any                 // or the first panic
	failed  bool
	stopped bool // nothing is retired any more
}

// fileWorkers is how many goroutines apply groups.
func (s *Session) fileWorkers() int {
	if n := s.opt.FileWorkers; n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

func (s *Session) newFileApplier(ctx context.Context, linkRev func([20]byte) (int, error), res *ApplyResult) *fileApplier {
	wctx, cancel := context.WithCancel(ctx)
	fa := &fileApplier{s: s, outer: ctx, ctx: wctx, cancel: cancel, linkRev: linkRev,
		jobs: make(chan *fileJob, maxJobs), workers: s.fileWorkers(), names: map[string]*fileJob{}, res: res}
	fa.changed = sync.NewCond(&fa.mu)
	return fa
}

// group reads the current group of a changegroup with next (its
// NextDelta: the manifests', or file name's group) and queues it, or
// applies it here when it is too large to copy or continues a pending
// writer.
func (fa *fileApplier) group(next func(*changegroup.Delta) (bool, error), name string, manifest bool) error {
	j := &fileJob{name: name, manifest: manifest}
	if manifest {
		// The session's writer: Abort discards it, Commit flushes it.
		j.w, j.pending = fa.s.ml, true
	}
	var d changegroup.Delta
	for {
		ok, err := next(&d)
		if err != nil {
			j.readErr = err
			break
		}
		if !ok {
			break
		}
		if len(j.data)+len(d.Data) > maxJobBytes {
			// Too large to hold: applied here, reading as it goes.
			j.fix()
			j.rest = next
			j.deltas = append(j.deltas, d) // valid until the next read
			return fa.here(j)
		}
		j.data = append(j.data, d.Data...)
		j.deltas = append(j.deltas, d)
	}
	j.fix()
	fa.mu.Lock()
	if !manifest && fa.names[name] != nil {
		// The same file again: its earlier group first.
		if err := fa.drainLocked(); err != nil {
			fa.mu.Unlock()
			return fa.stop(err)
		}
	}
	if !manifest {
		if _, ok := fa.s.pendingFiles[name]; ok {
			// A writer a flush batch still holds (flushed by whoever
			// retires a job), so it is continued here, alone.
			fa.mu.Unlock()
			return fa.here(j)
		}
		w, err := fa.s.openWriter(filelogName(name), false)
		if err != nil {
			fa.mu.Unlock()
			return fa.fail(err)
		}
		j.w = w
	}
	for !fa.failed && (len(fa.queue) >= maxJobs || (len(fa.queue) > 0 && fa.bytes+len(j.data) > maxJobBytes)) {
		fa.changed.Wait()
	}
	if fa.failed {
		fa.mu.Unlock()
		fa.discard(j)
		return fa.stop(nil)
	}
	if fa.started < fa.workers {
		fa.started++
		go fa.work(fa.jobs)
	}
	fa.queue = append(fa.queue, j)
	if !manifest {
		fa.names[name] = j
	}
	fa.bytes += len(j.data)
	fa.jobs <- j // never blocks: as many slots as queued jobs
	fa.mu.Unlock()
	if j.readErr != nil {
		// The reader is done: what remains is to apply what came before
		// the damage, whose failure would come first.
		return fa.finish()
	}
	return nil
}

// fix points the deltas at their bytes in data, which moved as it grew.
func (j *fileJob) fix() {
	off := 0
	for i := range j.deltas {
		n := len(j.deltas[i].Data)
		j.deltas[i].Data = j.data[off : off+n : off+n]
		off += n
	}
}

// here applies j on the session's goroutine, once every job before it
// is retired: the group continues a pending writer, or is read as it is
// applied.
func (fa *fileApplier) here(j *fileJob) error {
	fa.mu.Lock()
	err := fa.drainLocked()
	fa.mu.Unlock()
	if err != nil {
		return fa.stop(nil)
	}
	// Nothing else runs until j is retired: the queue is empty.
	s := fa.s
	j.here = true
	if j.manifest {
		// s.ml, set by group.
	} else if w, ok := s.pendingFiles[j.name]; ok {
		j.w, j.pending, j.before = w, true, w.Pending()
	} else {
		w, err := s.openWriter(filelogName(j.name), false)
		if err != nil {
			return fa.fail(err)
		}
		j.w = w
	}
	fa.run(j)
	fa.mu.Lock()
	fa.queue = append(fa.queue, j)
	fa.retireLocked()
	failed := fa.failed
	fa.mu.Unlock()
	if failed {
		return fa.stop(nil)
	}
	return nil
}

func (fa *fileApplier) work(jobs <-chan *fileJob) {
	for j := range jobs {
		fa.run(j)
		fa.mu.Lock()
		fa.retireLocked()
		fa.mu.Unlock()
	}
}

// run applies j's group to its writer.
func (fa *fileApplier) run(j *fileJob) {
	defer func() {
		r := recover()
		fa.mu.Lock()
		if r != nil {
			j.panicked = r
		}
		j.finished = true
		fa.changed.Broadcast()
		fa.mu.Unlock()
	}()
	if j.err = fault("group apply"); j.err != nil {
		return
	}
	ctx := fa.ctx
	if j.here {
		ctx = fa.outer // nothing else in flight
	}
	i := 0
	next := func(d *changegroup.Delta) (bool, error) {
		if i < len(j.deltas) {
			*d = j.deltas[i]
			i++
			return true, nil
		}
		if j.rest != nil {
			return j.rest(d)
		}
		return false, j.readErr
	}
	seen, n, err := fa.s.addGroup(ctx, next, j.w, j.name, fa.linkRev)
	if !j.manifest {
		if err == nil && seen == 0 {
			err = fmt.Errorf("%w: received file revlog group is empty", ErrCorrupt)
		}
		if err == nil {
			j.w.EndGroup()
		}
	}
	j.n, j.err = n, err
}

// retireLocked retires the finished jobs at the head of the queue, in
// order, as the plain path records a finished group; the first failure
// (a job's error or panic, or groupDone's) stops it, cancels the jobs
// after it and is kept for the session's goroutine.
func (fa *fileApplier) retireLocked() {
	for !fa.failed && !fa.stopped && len(fa.queue) > 0 && fa.queue[0].finished {
		j := fa.queue[0]
		fa.queue = fa.queue[1:]
		fa.bytes -= len(j.data)
		if fa.names[j.name] == j {
			delete(fa.names, j.name)
		}
		switch {
		case j.panicked != nil || j.err != nil:
			fa.discard(j)
			fa.failed, fa.err, fa.panic = true, j.err, j.panicked
		case j.manifest:
		default:
			fa.res.Revisions += j.n
			if j.n > 0 {
				fa.res.FilesAdded++
			}
			// Before any later group, as on one goroutine.
			if p, err := fa.groupDone(j); err != nil || p != nil {
				fa.failed, fa.err, fa.panic = true, err, p
			}
		}
		if fa.failed {
			fa.cancel()
		}
		fa.changed.Broadcast()
	}
}

// groupDone is Session.groupDone of a retired job, with a panic of its
// flush (raised again from a flush worker) returned for the session's
// goroutine.
func (fa *fileApplier) groupDone(j *fileJob) (panicked any, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	return nil, fa.s.groupDone(fa.outer, j.w, j.name, j.pending, j.before)
}

// drainLocked waits until every job is retired, or one failed.
func (fa *fileApplier) drainLocked() error {
	for !fa.failed && len(fa.queue) > 0 {
		fa.changed.Wait()
	}
	if fa.failed {
		return fa.err
	}
	return nil
}

// discard drops the writer of a job that is not retired.
func (fa *fileApplier) discard(j *fileJob) {
	if !j.pending && j.w != nil {
		j.w.Discard() // a pending writer is Abort's to discard
	}
}

// stop cancels the jobs in flight, waits for them and discards their
// writers, then returns the first failure of a job (raising a job's
// panic again here), or err. Stop after stop returns err.
func (fa *fileApplier) stop(err error) error {
	fa.cancel()
	fa.mu.Lock()
	fa.stopped = true
	if fa.jobs != nil {
		close(fa.jobs)
		fa.jobs = nil
	}
	for _, j := range fa.queue {
		for !j.finished {
			fa.changed.Wait()
		}
	}
	// No job runs now, and none is retired after stopped: what is
	// left in the queue is discarded.
	queue := fa.queue
	fa.queue = nil
	failed, ferr, p := fa.failed, fa.err, fa.panic
	fa.panic = nil
	fa.mu.Unlock()
	for _, j := range queue {
		fa.discard(j)
	}
	if p != nil {
		panic(p)
	}
	if failed && ferr != nil {
		return ferr
	}
	return err
}

// fail returns err, an error of the session's goroutine, unless a job
// handed out before it fails: that failure comes first.
func (fa *fileApplier) fail(err error) error {
	fa.mu.Lock()
	derr := fa.drainLocked()
	fa.mu.Unlock()
	if derr != nil {
		return fa.stop(nil)
	}
	return fa.stop(err)
}

// finish retires every job and stops the workers, returning the first
// job's failure.
func (fa *fileApplier) finish() error {
	return fa.fail(nil)
}
