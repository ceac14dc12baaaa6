package exchange

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/txn"
)

// Options tune a Session.
type Options struct {
	// Status receives the progress lines hg prints at the same points
	// ("adding changesets\n", ...); nil discards them.
	Status func(msg string)
	// Debug receives hg's --debug lines ("add changeset 1234abcd\n"...).
	Debug func(msg string)
	// Warn receives what hg writes to stderr: the transaction's messages
	// ("transaction abort!", "rollback completed") and the warnings
	// after a commit ("1 new orphan changesets").
	Warn func(msg string)
	// QuietRollback keeps the transaction's messages from Warn: a
	// clone's, whose destination is removed anyway, as hg's clone says
	// nothing of its rollback.
	QuietRollback bool
	// Lock tunes how long the locks are waited for.
	Lock store.LockOptions
	// WLock takes .hg/wlock before the store lock, as hg's pull does when
	// the bookmarks live in .hg (not with bookmarksinstore).
	WLock bool
	// CreateMarkers is obsolete.isenabled(repo, createmarkersopt): the
	// repository adds the obsolescence markers it receives (an
	// obsmarkers part is refused, or ignored when advisory, without).
	CreateMarkers bool
	// ExchangeMarkers is obsolete.isenabled(repo, exchangeopt): a pull
	// asks the server for its markers.
	ExchangeMarkers bool
	// WriteBatch is how many bytes of finished filelogs are kept before
	// they are written together; 0 means DefaultWriteBatch, negative
	// writes each filelog when its group ends.
	WriteBatch int
	// FileWorkers is how many goroutines apply a changegroup's file
	// groups (filegroups.go); 0 means GOMAXPROCS, 1 applies them on the
	// session's goroutine as they are read.
	FileWorkers int
	// Progress, when set, is told how far a changegroup's application
	// is, as hg's changegroup apply reports it to its progress bar:
	// topic "changesets" (pos: changelog chunks read; total: the
	// part's nbchanges, 0 when unknown), then "manifests" (chunks read;
	// total: the changesets added), then "files" (file groups read;
	// total: the distinct files the added changesets touch). pos -1
	// closes the topic. It is called on the session's goroutine.
	Progress func(topic string, pos, total int)
}

// Session is a repository locked for writing with an open transaction.
type Session struct {
	root string
	st   *store.Store
	opt  Options

	unlock func()
	tx     *txn.Tx
	desc   string // the transaction's name, as journal.desc holds it
	wopt   revlog.WriterOptions

	cl *revlog.Writer // changelog, delayed until Commit
	ml *revlog.Writer // flat manifest

	pending      []pendingFile // finished filelogs not yet flushed
	pendingBytes int
	// pendingFiles are the writers of s.pending by tracked file: a file
	// seen again before its writer is flushed continues in that writer.
	pendingFiles map[string]*revlog.Writer

	// ctx is Begin's: Commit gives up once it is cancelled.
	ctx context.Context

	origLen int // changelog length when the session began
	// The manifest's length and both revlogs' inline flags when the
	// session began, for the persistent nodemaps (nodemap.go).
	mlOrigLen          int
	clInline, mlInline bool

	fncache      map[string]bool // entries (unencoded store names); nil without the fncache layout
	fncacheDirty bool

	phases    *phaseRoots
	origPhase []int                  // phases before the session
	bookmarks map[string]revlog.Node // nil until loaded
	bmDirty   bool
	// quietBookmarks routes bookmark moves to Debug (ui.quietbookmarkmove).
	quietBookmarks bool

	obs *obsState // the obsstore, once markers arrive (obsmarkers.go)
	// Orphan and phase-divergent changesets at Begin, with CreateMarkers.
	orphanBefore, bumpedBefore int

	// Summary counters, as tr.changes['changegroup-count-*'].
	Changesets, Revisions, Files, HeadsDelta int
	// FilesAdded counts the file groups that added a revision; the
	// summary reports it for Files when summaryFilesAdded is set (a pull
	// from a bundle file, whose groups may hold revisions already here,
	// where hg's bundlerepo sends only the missing ones).
	FilesAdded        int
	summaryFilesAdded bool
	// ModHeads is combinechangegroupresults over the changegroups applied
	// (what postincoming uses): 0 when none was applied.
	ModHeads int
	headsSum int
	done     bool
}

// Begin locks the repository at root and opens a transaction named desc
// ("unbundle", "pull\n<url>"), as localrepo.transaction does. ctx governs
// the whole session: once it is cancelled, every apply and Commit fail
// with its error, and the transaction rolls back.
func Begin(ctx context.Context, root, desc string, opt Options) (*Session, error) {
	st, err := store.Open(root)
	if err != nil {
		return nil, err
	}
	if st.Requirements.Has("treemanifest") {
		return nil, fmt.Errorf("%w: repositories with tree manifests are not supported", ErrUnsupported)
	}
	var wunlock func()
	if opt.WLock && !st.Requirements.Has("bookmarksinstore") {
		if wunlock, err = store.WLock(ctx, root, opt.Lock); err != nil {
			return nil, err
		}
	}
	unlock, err := store.Lock(ctx, st.Dir, opt.Lock)
	if err != nil {
		if wunlock != nil {
			wunlock()
		}
		return nil, err
	}
	if wunlock != nil {
		storeUnlock := unlock
		unlock = func() { storeUnlock(); wunlock() }
	}
	s := &Session{root: root, st: st, opt: opt, unlock: unlock, ctx: ctx}
	defer s.guard()
	if err := s.begin(desc); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// WriterOptions returns the revlog writer options a store's requirements
// imply (localrepo.resolverevlogstorevfsoptions).
func WriterOptions(req store.Requirements) revlog.WriterOptions {
	o := revlog.WriterOptions{
		Compression:  "zlib",
		GeneralDelta: req.Has("generaldelta"),
		SparseRevlog: req.Has("sparserevlog"),
	}
	// The engine is named by the requirement (localrepo.py
	// resolverevlogstorevfsoptions: "revlog-compression-zstd",
	// "exp-compression-none", ...); zlib without one.
	for _, r := range req.List() {
		for _, prefix := range []string{"revlog-compression-", "exp-compression-"} {
			if engine, ok := strings.CutPrefix(r, prefix); ok {
				o.Compression = engine
			}
		}
	}
	if o.SparseRevlog {
		o.GeneralDelta = true
	}
	return o
}

func (s *Session) begin(desc string) error {
	s.wopt = WriterOptions(s.st.Requirements)
	// The changelog length for journal.desc: read it before the
	// transaction exists (the writer would journal nothing yet anyway).
	clLen, err := changelogLen(s.st)
	if err != nil {
		return err
	}
	s.origLen = clLen
	s.desc = desc
	tx, err := txn.Begin(s.root, s.st.Dir, desc, clLen)
	if err != nil {
		return err
	}
	s.tx = tx
	if !s.opt.QuietRollback {
		tx.Report = s.opt.Warn
	}
	if s.cl, err = s.openWriter("00changelog.i", true); err != nil {
		return s.fail(err)
	}
	if s.ml, err = s.openWriter("00manifest.i", false); err != nil {
		return s.fail(err)
	}
	s.mlOrigLen, s.clInline, s.mlInline = s.ml.Len(), s.cl.Inline(), s.ml.Inline()
	if s.st.Layout.HasFncache() {
		names, err := s.st.Fncache()
		if err != nil {
			return s.fail(err)
		}
		s.fncache = make(map[string]bool, len(names))
		for _, n := range names {
			s.fncache[n] = true
		}
	}
	if s.phases, err = readPhaseRoots(s.st); err != nil {
		return s.fail(err)
	}
	s.origPhase = s.phases.phaseOf(s.cl)
	if s.opt.CreateMarkers {
		// hg counts instabilities before and after (scmutil's
		// reportnewinstabilities), which needs the markers.
		if err := s.loadObsstore(); err != nil {
			return s.fail(err)
		}
		s.orphanBefore, s.bumpedBefore = s.instabilities(s.origLen, s.origPhase)
	} else if err := s.warnReadonlyObsstore(); err != nil {
		return s.fail(err)
	}
	return nil
}

func changelogLen(st *store.Store) (int, error) {
	r, err := revlog.Open(st.FS(), st.Encode("00changelog.i"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.Len(), nil
}

func (s *Session) status(format string, args ...any) {
	if s.opt.Status != nil {
		s.opt.Status(fmt.Sprintf(format, args...))
	}
}

func (s *Session) debug(format string, args ...any) {
	if s.opt.Debug != nil {
		s.opt.Debug(fmt.Sprintf(format, args...))
	}
}

// guard is deferred by every exported entry point: a panic inside the
// session rolls the transaction back and releases the locks, as any
// exception does in hg's transaction context, then goes on up unchanged,
// so the caller still sees (and reports) a bug, not an ordinary error.
// The alternative, turning the panic into an error, would let a caller
// carry on as if the input had been bad.
func (s *Session) guard() {
	if r := recover(); r != nil {
		s.Abort() // the panic is the failure to report
		panic(r)
	}
}

func (s *Session) warn(format string, args ...any) {
	if s.opt.Warn != nil {
		s.opt.Warn(fmt.Sprintf(format, args...))
	}
}

// fail aborts the session and returns err (joined with any abort failure).
func (s *Session) fail(err error) error {
	if aerr := s.Abort(); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

// addFncache records a store file (unencoded name) in the fncache.
func (s *Session) addFncache(name string) {
	if s.fncache == nil || s.fncache[name] {
		return
	}
	s.fncache[name] = true
	s.fncacheDirty = true
}

// Commit flushes every revlog (changelog last), writes fncache, phaseroots
// and bookmarks, closes the transaction and releases the lock.
func (s *Session) Commit() error {
	if s.done {
		return ErrSessionDone
	}
	defer s.guard()
	if err := s.flushPending(s.ctx); err != nil {
		return s.fail(err)
	}
	if err := s.ml.Close(); err != nil {
		return s.fail(err)
	}
	if s.fncacheDirty {
		names := make([]string, 0, len(s.fncache))
		for n := range s.fncache {
			names = append(names, n)
		}
		sort.Strings(names)
		if err := s.replaceFile("fncache", store.FormatFncache(names)); err != nil {
			return s.fail(err)
		}
	}
	if s.phases.dirty {
		if err := s.replaceFile("phaseroots", s.phases.format()); err != nil {
			return s.fail(err)
		}
	}
	if s.bmDirty {
		if err := s.writeBookmarks(); err != nil {
			return s.fail(err)
		}
	}
	if err := s.writeObsstore(); err != nil {
		return s.fail(err)
	}
	// The changelog last: its new revisions become visible once everything
	// they refer to is on disk.
	if err := s.cl.Close(); err != nil {
		return s.fail(err)
	}
	cleanup, err := s.writeNodemaps()
	if err != nil {
		return s.fail(err)
	}
	// The last point where an interrupt can still roll back.
	if err := s.ctx.Err(); err != nil {
		return s.fail(err)
	}
	summary := s.summary()
	s.done = true
	err = s.tx.Close()
	if err == nil {
		cleanup() // under the lock, as hg's post-close callbacks
	}
	s.release()
	if err != nil {
		return err
	}
	for _, line := range summary {
		if line.warn {
			s.warn("%s", line.text)
		} else {
			s.status("%s", line.text)
		}
	}
	return nil
}

// Abort rolls the transaction back and releases the lock.
func (s *Session) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	var errs []error
	// Writers are discarded, not flushed: the playback truncates whatever
	// reached the files.
	writers := []*revlog.Writer{s.cl, s.ml}
	for _, p := range s.pending {
		writers = append(writers, p.w)
	}
	s.pending, s.pendingFiles = nil, nil
	for _, w := range writers {
		if w != nil {
			if err := w.Discard(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if s.tx != nil {
		if err := s.tx.Abort(); err != nil {
			errs = append(errs, err)
		}
	}
	s.release()
	return errors.Join(errs...)
}

func (s *Session) release() {
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
}

// replaceFile rewrites a store file (name relative to the store) after
// backing it up in the transaction.
func (s *Session) replaceFile(name string, data []byte) error {
	return s.tx.WriteFile(name, data)
}

// openWriter opens the revlog whose unencoded index name is name. Its
// journal entries carry unencoded names, as hg's (the transaction's
// opener is the store's encoding vfs), so `hg recover` finds them; they
// are buffered until the writer's first write to a file.
func (s *Session) openWriter(name string, delay bool) (*revlog.Writer, error) {
	o := s.wopt
	o.Delay = delay
	o.Changelog = name == "00changelog.i"
	o.Censorable = strings.HasPrefix(name, "data/")
	o.Journal = s.tx.RevlogJournal(name)
	o.DataName = s.st.Encode(strings.TrimSuffix(name, ".i") + ".d")
	return revlog.OpenWriter(s.st.Dir, s.st.Encode(name), o)
}

// filelogName is the unencoded store name of a tracked file's index.
func filelogName(file string) string { return "data/" + file + ".i" }
