package main

// hgfs unbundle of a stream bundle (hg bundle -t 'none-v2;stream=v2'):
// bundle2.handlestreamv2bundle. The stream's files go into the existing,
// empty repository under its lock, in an "unbundle" transaction;
// requirements become the repository's own with the stream's format
// ones (streamclone.new_stream_clone_requirements over repo.requirements).
//
// hg writes the streamed files outside its transaction's journal; here
// each store file is journaled (a new one is deleted, an existing one
// restored from its backup, on failure or by hg recover), existing files
// are replaced through a temporary file so their hard-linked backups stay
// intact, and cache files written are removed on failure. The
// requirements are written last, just before the transaction closes (hg
// does not journal them either).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/txn"
)

// errNonEmpty is hg's refusal of a stream into a repository with history.
var errNonEmpty = errors.New("cannot apply stream clone to non empty repository")

// unbundleStream applies the stream bundle f (positioned at its start)
// to the repository at root in a transaction named txName and returns
// postincoming's modheads.
func unbundleStream(ctx context.Context, c *cmdContext, root, fname, txName string, f io.Reader) (int, error) {
	st, err := store.Open(root)
	if err != nil {
		return 0, localRepoError(err)
	}
	opt := sessionOptions(c, root)
	unlock, err := store.Lock(ctx, st.Dir, opt.Lock)
	if err != nil {
		return 0, sessionError(err, root)
	}
	defer unlock()
	clLen, err := storeChangelogLen(st)
	if err != nil {
		return 0, abortf("%v", err)
	}
	tx, err := txn.Begin(root, st.Dir, txName, clLen)
	if err != nil {
		return 0, sessionError(err, root)
	}
	// hg journals none of the streamed files, so its abort has nothing to
	// report; this rollback is hgfs's own and stays as quiet.
	tx.Report = nil
	bar := newProgress(c.ui, "clone")
	sink := &repoSink{root: root, st: st, tx: tx, ui: c.ui, bar: bar}
	if clLen > 0 {
		sink.Abort()
		return 0, abortf("%v", errNonEmpty)
	}
	res, err := streamclone.ApplyBundle(ctx, f, sink, streamclone.Options{
		Progress:            bar.update,
		DefaultRequirements: st.Requirements.List(),
		Output: func(text string) {
			for _, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
				c.ui.status("remote: %s\n", strings.TrimSuffix(l, "\n"))
			}
		},
	})
	bar.done()
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if errors.Is(err, streamclone.ErrNotStream) {
			return 0, bundleError(fname, err)
		}
		return 0, applyError(ctx, c.ui, err)
	}
	elapsed := time.Since(sink.start).Seconds()
	if elapsed <= 0 {
		elapsed = 0.001
	}
	c.ui.status("transferred %s in %.1f seconds (%s/sec)\n",
		formatBytes(float64(res.Bytes)), elapsed, formatBytes(float64(res.Bytes)/elapsed))
	// The transaction's summary (scmutil.registersummarycallback): the
	// new changesets, without the phase counts, which hg's phase cache,
	// read before the stream, does not see. A clone bundle's transaction
	// ("bundleurl") has no such report.
	if n, err := storeChangelogLen(st); err == nil && n > 0 && txName == "unbundle" {
		cl, err := revlog.Open(st.FS(), st.Encode("00changelog.i"))
		if err == nil {
			rng := cl.Node(0).Short()
			if n > 1 {
				rng += ":" + cl.Node(n-1).Short()
			}
			cl.Close()
			c.ui.status("new changesets %s\n", rng)
		}
	}
	// combinechangegroupresults with no changegroup: 1.
	return 1, nil
}

// storeChangelogLen is the number of changesets in a store.
func storeChangelogLen(st *store.Store) (int, error) {
	cl, err := revlog.Open(st.FS(), st.Encode("00changelog.i"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return cl.Len(), nil
}

// repoSink is a streamclone.Sink writing into an existing repository in
// a transaction (see the file comment).
type repoSink struct {
	root string
	st   *store.Store
	tx   *txn.Tx

	fncache  []byte            // the applier's fncache, merged at Finish
	books    []byte            // bookmarks, written at Finish
	bookLoc  txn.Location      // where the bookmarks go
	requires map[string][]byte // ".hg/requires", ".hg/store/requires"
	temps    []string          // temporary files not yet renamed
	caches   []string          // cache files written
	dirs     []string          // directories made, outermost first
	done     bool

	ui    *ui
	bar   *progressBar
	start time.Time
}

var (
	_ streamclone.StoreCreator = (*repoSink)(nil)
	_ streamclone.Expecter     = (*repoSink)(nil)
)

// Expect prints hg's announcement of the stream (consumev2).
func (s *repoSink) Expect(files, bytes int64) {
	s.ui.status("%d files to transfer, %s of data\n", files, formatBytes(float64(bytes)))
	s.ui.out.Flush()
	s.start = time.Now()
	s.bar.setTotal(files, bytes)
}

func (s *repoSink) path(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

// Create takes the files the applier makes itself and the cache files.
func (s *repoSink) Create(name string, size int64) (io.WriteCloser, error) {
	if s.done {
		return nil, streamclone.ErrSinkClosed
	}
	switch name {
	case ".hg/00changelog.i":
		// The dummy changelog every repository has: keep the one there.
		if _, err := os.Lstat(s.path(name)); err == nil {
			return nopCloser{io.Discard}, nil
		}
		return s.replace(name, func() {})
	case ".hg/store/fncache":
		return &memFile{dst: &s.fncache}, nil
	case ".hg/bookmarks", ".hg/store/bookmarks":
		s.bookLoc = txn.Plain
		if name == ".hg/store/bookmarks" {
			s.bookLoc = txn.Store
		}
		return &memFile{dst: &s.books}, nil
	case ".hg/requires", ".hg/store/requires":
		if s.requires == nil {
			s.requires = map[string][]byte{}
		}
		b := new([]byte)
		return &memFile{dst: b, done: func() { s.requires[name] = *b }}, nil
	}
	if !strings.HasPrefix(name, ".hg/cache/") {
		return nil, fmt.Errorf("unexpected file %s for an existing repository", name)
	}
	return s.replace(name, func() { s.caches = append(s.caches, name) })
}

// CreateStore journals the store file (logical name) before writing it.
func (s *repoSink) CreateStore(name, logical string, size int64) (io.WriteCloser, error) {
	if s.done {
		return nil, streamclone.ErrSinkClosed
	}
	if _, err := os.Lstat(s.path(name)); err == nil {
		if err := s.tx.AddBackup(logical); err != nil {
			return nil, err
		}
	} else if err := s.tx.Add(logical, 0); err != nil {
		return nil, err
	}
	return s.replace(name, func() {})
}

// replace writes name through a temporary file renamed over it on Close.
func (s *repoSink) replace(name string, renamed func()) (io.WriteCloser, error) {
	p := s.path(name)
	var made []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == s.root {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return nil, err
	}
	for i := len(made) - 1; i >= 0; i-- {
		s.dirs = append(s.dirs, made[i])
	}
	tmp := p + ".hgfs-stream"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	s.temps = append(s.temps, tmp)
	return &renameFile{f: f, tmp: tmp, dst: p, renamed: func() {
		s.temps = s.temps[:len(s.temps)-1]
		renamed()
	}}, nil
}

// Finish writes fncache (merged with the repository's) and bookmarks in
// the transaction, then the requirements, and closes the transaction.
func (s *repoSink) Finish() error {
	if s.done {
		return streamclone.ErrSinkClosed
	}
	if s.fncache != nil {
		streamed, err := store.ParseFncache(s.fncache)
		if err != nil {
			return s.fail(err)
		}
		old, err := s.st.Fncache()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return s.fail(err)
		}
		set := map[string]bool{}
		for _, n := range append(old, streamed...) {
			set[n] = true
		}
		names := make([]string, 0, len(set))
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		if err := s.tx.WriteFile("fncache", store.FormatFncache(names)); err != nil {
			return s.fail(err)
		}
	}
	if s.books != nil {
		if err := s.tx.WriteFileIn(s.bookLoc, "bookmarks", s.books); err != nil {
			return s.fail(err)
		}
	}
	for _, name := range []string{".hg/store/requires", ".hg/requires"} {
		if data, ok := s.requires[name]; ok {
			if err := txn.WriteFileAtomic(s.path(name), data); err != nil {
				return s.fail(err)
			}
		}
	}
	s.done = true
	return s.tx.Close()
}

func (s *repoSink) fail(err error) error {
	if aerr := s.Abort(); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

// Abort rolls the transaction back and removes what it left.
func (s *repoSink) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	errs := []error{s.tx.Abort()}
	for _, p := range s.temps {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, name := range s.caches {
		if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// Directories made for the files, deepest first; one still holding
	// something (another writer's file) stays.
	for i := len(s.dirs) - 1; i >= 0; i-- {
		os.Remove(s.dirs[i])
	}
	return errors.Join(errs...)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// memFile keeps a small file the sink writes at Finish.
type memFile struct {
	dst  *[]byte
	done func()
}

func (m *memFile) Write(p []byte) (int, error) {
	*m.dst = append(*m.dst, p...)
	return len(p), nil
}

func (m *memFile) Close() error {
	if *m.dst == nil {
		*m.dst = []byte{}
	}
	if m.done != nil {
		m.done()
	}
	return nil
}

// renameFile is a temporary file renamed to dst when closed.
type renameFile struct {
	f        *os.File
	tmp, dst string
	renamed  func()
}

func (r *renameFile) Write(p []byte) (int, error) { return r.f.Write(p) }

func (r *renameFile) Close() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(r.tmp, r.dst); err != nil {
		return err
	}
	r.renamed()
	return nil
}
