package fsnode

// Damage containment: every bbolt call of a mounted cache runs here, under
// recovery, so that a damaged index.db answers EIO instead of panicking
// the daemon or leaving a lock held.
//
// What bbolt (go.etcd.io/bbolt v1.4) leaves behind when a panic unwinds
// through it:
//
//   - DB.View and DB.Update defer a rollback, so a panic in the callback
//     or in a page access made from it (a cursor reaching a damaged page)
//     releases the read transaction's mmap lock (DB.mmaplock, read side)
//     and the write transaction's writer lock (DB.rwlock) on the way out.
//   - A write transaction's rollback reloads the freelist from its page
//     (Tx.rollback, freelist.Reload). If that page is damaged the rollback
//     panics in turn, before Tx.close: DB.rwlock stays locked, every
//     later Update and DB.Close block forever.
//   - A panic while a transaction begins (Tx.init reading the meta page)
//     leaves DB.metalock and the mmap read lock held: every later
//     transaction and DB.Close block.
//   - A page id past the mapped file makes bbolt dereference memory beyond
//     the file: SIGBUS or SIGSEGV at a non-nil address, which Go turns
//     into a fatal "unexpected fault address" (no recover) unless the
//     goroutine asked for a panic instead (debug.SetPanicOnFault).
//   - Tx.Check runs in a goroutine of its own: a panic there kills the
//     process whatever the caller recovers, so hgfs never calls it on an
//     index it has not verified itself (boltcheck.go does the structural
//     check with bounds-checked reads of the file).
//
// So: view and update set SetPanicOnFault for the call and recover. A
// panic in a read transaction answers this request with EIO and the FS
// keeps serving, once a probe transaction shows bbolt's locks are free;
// a panic in a write transaction, or a probe that does not finish,
// poisons the FS: from then on every index access and every change
// answers EIO at once, and Close does not wait for bbolt's locks.

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// metaOpen is the clean-close mark: meta "open" -> u64 unix ns of the
// Open that set it. Open sets it (in the transaction that reclaims
// orphans), Close deletes it after the last commit; a cache that has it
// when opened was not closed cleanly (a crash, kill -9, a failed commit),
// and Open checks its whole index file (checkBoltFile) before serving.
var metaOpen = []byte("open")

// damagedIndex is Open's error for an index the structural check refuses.
func damagedIndex(dir string, probs []string) error {
	more := ""
	if len(probs) > 1 {
		more = fmt.Sprintf(" (and %d more problems)", len(probs)-1)
	}
	return fmt.Errorf("%w: %s is damaged: %s%s; run hgfs fsck --repair %s (or clone again)",
		ErrCorrupt, filepath.Join(dir, indexName), probs[0], more, dir)
}

// errPoisoned is what index accesses return once a panic inside bbolt has
// left the index unusable.
var errPoisoned = fmt.Errorf("%w: the index is damaged and was taken out of service (run hgfs fsck --repair after unmounting): %w", ErrCorrupt, syscall.EIO)

// panicError is a panic recovered from bbolt or from a callback reading
// the index.
type panicError struct {
	op    string
	value any
}

func (e *panicError) Error() string {
	return fmt.Sprintf("%s: panic accessing the index: %v", e.op, e.value)
}

func (e *panicError) Unwrap() []error { return []error{ErrCorrupt, syscall.EIO} }

// guarded runs fn with faults turned into panics and recovers a panic as
// a *panicError (logged: one line, the stack with HGFS_DEBUG set).
func guarded(op string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{op: op, value: r}
			logPanic(op, r)
		}
	}()
	return fn()
}

// logPanic logs a recovered panic in one line; the stack only at debug
// level (HGFS_DEBUG set), so a damaged index does not flood the log.
func logPanic(op string, r any) {
	log.Printf("hgfs: %s: recovered panic (damaged index?): %v", op, r)
	if debugLog {
		log.Printf("hgfs: %s: stack:\n%s", op, debug.Stack())
	}
}

// view is db.View for a mounted cache: see the file comment.
func (f *FS) view(op string, fn func(*bolt.Tx) error) error {
	if err := f.poisonErr(); err != nil {
		return err
	}
	err := guarded(op, func() error { return f.db.View(fn) })
	if _, ok := err.(*panicError); ok && !probe(f.db) {
		f.poison(err)
	}
	return err
}

// update is db.Update for a mounted cache. A panic poisons the FS: the
// rollback may not have run to its end (see the file comment).
func (f *FS) update(op string, fn func(*bolt.Tx) error) error {
	if err := f.poisonErr(); err != nil {
		return err
	}
	err := guarded(op, func() error { return f.db.Update(fn) })
	if _, ok := err.(*panicError); ok {
		f.poison(err)
	}
	return err
}

func (f *FS) poison(cause error) {
	if f.poisoned.CompareAndSwap(nil, &cause) {
		log.Printf("hgfs: cache %s: index taken out of service after %v; every later index access answers EIO", f.dir, cause)
	}
	f.c.fail(cause)
}

// fail makes the committer refuse changes from now on, as after a failed
// commit, and wakes writers waiting for queue space.
func (c *committer) fail(cause error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = cause
	}
	c.space.Broadcast()
	c.mu.Unlock()
}

// debugLog: HGFS_DEBUG is set; recovered panics are logged with their
// stacks.
var debugLog = os.Getenv("HGFS_DEBUG") != ""

func (f *FS) poisonErr() error {
	if f.poisoned.Load() != nil {
		return errPoisoned
	}
	return nil
}

// probeTimeout bounds how long a probe transaction may take before
// bbolt's locks are taken to be held for good.
const probeTimeout = 2 * time.Second

// probe reports whether a read transaction can still begin and end: after
// a recovered panic, whether bbolt's locks were released.
func probe(db *bolt.DB) bool {
	done := make(chan bool, 1)
	go func() {
		ok := guarded("probe", func() error {
			tx, err := db.Begin(false)
			if err != nil {
				return err
			}
			return tx.Rollback()
		}) == nil
		done <- ok
	}()
	select {
	case ok := <-done:
		return ok
	case <-time.After(probeTimeout):
		return false
	}
}

// closeDB closes db, unless bbolt's locks stay held after a panic: then
// it gives up after probeTimeout (the file lock goes with the process).
func closeDB(db *bolt.DB, poisoned bool) error {
	if !poisoned {
		return guarded("close", db.Close)
	}
	done := make(chan error, 1)
	go func() { done <- guarded("close", db.Close) }()
	select {
	case err := <-done:
		return err
	case <-time.After(probeTimeout):
		return fmt.Errorf("%w: closing the damaged index timed out (bbolt's locks stay held)", ErrCorrupt)
	}
}

// openBolt is bolt.Open under recovery: opening reads the meta pages and,
// for writing, the freelist. Open checks both first (checkBoltFile), so a
// panic here is unexpected; its file lock would stay held.
func openBolt(path string, opt *bolt.Options) (db *bolt.DB, err error) {
	err = guarded("open "+path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, opt)
		return err
	})
	return db, err
}
