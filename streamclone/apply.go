package streamclone

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// Sink receives the files of a clone. Names are slash-separated paths
// relative to the repository root, already validated and encoded by the
// applier: ".hg/requires", ".hg/store/requires", ".hg/store/data/foo.i",
// ".hg/store/fncache", ".hg/cache/branch2-served", ".hg/bookmarks", ...
// They are always under ".hg/". Each file is created once, written with
// exactly size bytes and closed before the next is created.
type Sink interface {
	Create(name string, size int64) (io.WriteCloser, error)
	// Finish is called once all files are closed successfully: wait for
	// background work, make the result valid and visible.
	Finish() error
	// Abort discards everything this sink created.
	Abort() error
}

// Expecter is implemented by sinks that size their resources by the
// announced file count (DirSink starts background closing only for large
// clones, like hg). The applier calls it once the stream header is read.
type Expecter interface {
	Expect(files int64, bytes int64)
}

// StoreCreator is implemented by sinks that need a store file's logical
// (unencoded) name, as a transaction journal records it: one writing into
// an existing repository. The applier then creates store files with
// CreateStore instead of Create; logical is the store name ("data/Foo.i",
// "phaseroots"), name the sink name as Create would get it.
type StoreCreator interface {
	CreateStore(name, logical string, size int64) (io.WriteCloser, error)
}

// Progress is called with cumulative counts of files and stream bytes
// applied; it is called often and must be cheap.
type Progress func(files int, bytes int64)

// Options configure an apply.
type Options struct {
	Progress Progress
	// Requirements are the source's stream requirements for ApplyV1, which
	// carries none itself: the "streamreqs" capability split at commas, or
	// nil when the server advertises the bare "stream" capability (which
	// means revlogv1 only).
	Requirements []string
	// DefaultRequirements are the requirements a new local repository gets;
	// nil means store.DefaultRequirements(). The clone's requirements are
	// these merged with the stream's (store.NewStreamCloneRequirements).
	DefaultRequirements []string
	// Output receives the text of bundle2 "output" parts (server messages);
	// nil drops them.
	Output func(text string)
	// Whole, when set, sees each store file that the stream carries in
	// one piece of at most copyBufSize bytes (a small revlog's whole
	// index), by its stream name ("data/f.i"), before it goes to the
	// sink; data is valid only during the call. A clone into a cache
	// learns its working files' sizes from it (worktree.Sizes).
	Whole func(name string, data []byte)
}

// Result describes an applied clone.
type Result struct {
	Files        int      // files in the stream
	Bytes        int64    // file bytes in the stream
	Requirements []string // requirements written to the clone, sorted
	Bookmarks    []string // names of bookmarks written, sorted
}

// copyBufSize is the chunk size of writes to a sink: large, so a DirSink
// makes few syscalls, and independent of the stream's own chunking.
const copyBufSize = 256 << 10

type applier struct {
	ctx    context.Context
	sink   Sink
	opt    Options
	layout layout
	reqs   store.Requirements
	res    Result

	seen      map[string]bool     // sink names written, other than store files'
	stored    *nameSet            // store files' names, as the stream names them
	bookmarks map[string][20]byte // name -> node
	buf       []byte
}

func newApplier(ctx context.Context, sink Sink, opt Options) *applier {
	return &applier{ctx: ctx, sink: sink, opt: opt, seen: map[string]bool{}, stored: newNameSet()}
}

// setRequirements checks the stream's requirements and fixes the
// destination layout; it runs before anything is written.
func (a *applier) setRequirements(streamed []string) error {
	if err := checkSupported(streamed); err != nil {
		return err
	}
	defaults := store.DefaultRequirements()
	if a.opt.DefaultRequirements != nil {
		defaults = store.NewRequirements(a.opt.DefaultRequirements...)
	}
	reqs := store.NewStreamCloneRequirements(defaults, store.NewRequirements(streamed...))
	if err := checkSupported(reqs.List()); err != nil {
		return err
	}
	// Without "store" (only where DefaultRequirements lack it: a local
	// clone of such a repository, as hg's clone_requirements keeps the
	// source's) the store is .hg itself; storeSinkName's
	// store.ValidateStreamName keeps stream names to revlogs, phaseroots
	// and obsstore there, never hgrc or requires.
	a.layout = layout{fncache: reqs.Has(store.ReqFncache), dotencode: reqs.Has(store.ReqDotencode), noStore: !reqs.Has(store.ReqStore)}
	a.reqs = reqs
	a.res.Requirements = reqs.List()
	if a.layout.noStore {
		// The changelog is the store's own .hg/00changelog.i.
		return nil
	}
	// The dummy changelog goes first: from here on, a sink that does not
	// stage (and is left half-written by a crash) holds a .hg that hg
	// refuses ("unknown version (65535) in revlog 00changelog") until
	// .hg/requires, written last, makes it a repository.
	return a.writeSmall(".hg/00changelog.i", store.DummyChangelog)
}

func (a *applier) expect(files, bytes int64) {
	if e, ok := a.sink.(Expecter); ok {
		e.Expect(files, bytes)
	}
}

// storeFile copies one store file of size bytes from r.
func (a *applier) storeFile(name string, size int64, r io.Reader) error {
	sinkName, err := a.layout.storeSinkName(name)
	if err != nil {
		return err
	}
	if isNodemapFile(name) && !a.reqs.Has(store.ReqPersistentNodemap) {
		return a.copy("", name, size, r, false)
	}
	if !a.stored.add(name) {
		return corruptf("file %q appears twice in the stream", name)
	}
	var check *indexCheck
	if display, ok := indexChecked(name); ok {
		check = &indexCheck{display: display}
		r = io.TeeReader(r, check)
	}
	if err := a.copy(sinkName, name, size, r, true); err != nil {
		return err
	}
	if check != nil {
		if err := check.done(size); err != nil {
			return err
		}
	}
	return nil
}

// cacheFile copies one .hg/cache file, except a branch or tags cache
// whose header records filtered (or obsolete) changesets: whether it
// holds for the clone depends on the clone's phases and markers (a
// publishing server sends no phaseroots, so nothing is filtered), and
// servers keep stale ones (hg validates a cache when it reads it, and a
// read-only server does not rewrite it), which hg would find invalid
// ("invalid branch cache (served): tip differs") and recompute on every
// read until something rewrote it. hg's own clone rewrites all its
// caches afterwards (updatecaches(CACHES_POST_CLONE)); hgfs leaves these
// out and hg computes them, from the caches kept, when it first needs
// them. The others (the unfiltered branch2, rbc-*, hgtagsfnodes1) do not
// depend on phases or markers.
func (a *applier) cacheFile(name string, size int64, r io.Reader) error {
	sinkName, err := cacheSinkName(name)
	if err != nil {
		return err
	}
	if viewCache(name) {
		head := make([]byte, min(size, maxCacheHeader))
		if k, err := io.ReadFull(r, head); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return corruptf("stream ended unexpectedly in %s: got %d of %d bytes", name, k, size)
			}
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if recordsFiltered(head) {
			sinkName = ""
		}
		r = io.MultiReader(bytes.NewReader(head), r)
	}
	return a.copy(sinkName, name, size, r, false)
}

// maxCacheHeader bounds the first line of a cache file read to decide
// on it (hg's headers are some hundred bytes).
const maxCacheHeader = 4096

// viewCache reports the caches of one filtered view: hg's branchmap
// (branch2-*, hg 7's branch3-*) and tags (tags2-*) caches.
func viewCache(name string) bool {
	return strings.HasPrefix(name, "branch2-") || strings.HasPrefix(name, "branch3-") || strings.HasPrefix(name, "tags2-")
}

// recordsFiltered reports whether a view cache's header names a hash
// of filtered or obsolete changesets: branch2 and tags2 as a third
// field ("tipnode tiprev filteredhash", branchmap.py and tags.py),
// branch3 as a key ("filtered-hash=", "obsolete-hash=").
func recordsFiltered(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	if bytes.Contains(line, []byte("=")) {
		return bytes.Contains(line, []byte("filtered-hash=")) || bytes.Contains(line, []byte("obsolete-hash="))
	}
	return len(bytes.Fields(line)) >= 3
}

// copy streams size bytes from r into sinkName ("" discards them);
// inStore says streamName is a store file's logical name (which
// storeFile has checked against those written before).
func (a *applier) copy(sinkName, streamName string, size int64, r io.Reader, inStore bool) error {
	if sinkName != "" && !inStore {
		if a.seen[sinkName] {
			return corruptf("file %q appears twice in the stream", streamName)
		}
		a.seen[sinkName] = true
	}
	var w io.WriteCloser = nopWriteCloser{io.Discard}
	if sinkName != "" {
		var err error
		if sc, ok := a.sink.(StoreCreator); ok && inStore {
			w, err = sc.CreateStore(sinkName, streamName, size)
		} else {
			w, err = a.sink.Create(sinkName, size)
		}
		if err != nil {
			return fmt.Errorf("creating %s: %w", sinkName, err)
		}
	}
	if a.buf == nil {
		a.buf = make([]byte, copyBufSize)
	}
	var done int64
	for done < size {
		if err := a.ctx.Err(); err != nil {
			w.Close()
			return err
		}
		n := int64(len(a.buf))
		if size-done < n {
			n = size - done
		}
		k, err := io.ReadFull(r, a.buf[:n])
		if err != nil {
			w.Close()
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return corruptf("stream ended unexpectedly in %s: got %d of %d bytes", streamName, done+int64(k), size)
			}
			return fmt.Errorf("reading %s: %w", streamName, err)
		}
		if inStore && a.opt.Whole != nil && done == 0 && int64(k) == size {
			a.opt.Whole(streamName, a.buf[:k])
		}
		if _, err := w.Write(a.buf[:k]); err != nil {
			w.Close()
			return fmt.Errorf("writing %s: %w", sinkName, err)
		}
		done += int64(k)
		a.res.Bytes += int64(k)
		if a.opt.Progress != nil {
			a.opt.Progress(a.res.Files, a.res.Bytes)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", sinkName, err)
	}
	a.res.Files++
	if a.opt.Progress != nil {
		a.opt.Progress(a.res.Files, a.res.Bytes)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// writeSmall writes a file the applier produces itself.
func (a *applier) writeSmall(name, content string) error {
	return a.writeOwn(name, int64(len(content)), func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	})
}

// writeOwn writes a file of size bytes the applier produces itself with
// write.
func (a *applier) writeOwn(name string, size int64, write func(io.Writer) error) error {
	if a.seen[name] {
		return corruptf("file %q appears twice", name)
	}
	a.seen[name] = true
	w, err := a.sink.Create(name, size)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	if err := write(w); err != nil {
		w.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	return nil
}

// finish writes the files hg's clone writes besides the stream (fncache,
// bookmarks, requirements: requirements last, so a sink without staging
// only looks like a repository at the very end) and finishes the sink.
func (a *applier) finish() (*Result, error) {
	if a.layout.fncache {
		if err := a.writeFncache(); err != nil {
			return nil, err
		}
	}
	if len(a.bookmarks) > 0 {
		marks := store.Bookmarks(a.bookmarks)
		content, err := marks.Format()
		if err != nil {
			return nil, corruptf("%v", err)
		}
		if err := a.writeSmall(".hg/"+store.BookmarksFile(a.reqs), string(content)); err != nil {
			return nil, err
		}
		names := make([]string, 0, len(marks))
		for n := range marks {
			names = append(names, n)
		}
		sort.Strings(names)
		a.res.Bookmarks = names
	}
	wc, st, hasStore := a.reqs.Split()
	if hasStore {
		if err := a.writeSmall(".hg/store/requires", string(st.Bytes())); err != nil {
			return nil, err
		}
	}
	if err := a.writeSmall(".hg/requires", string(wc.Bytes())); err != nil {
		return nil, err
	}
	if err := a.ctx.Err(); err != nil {
		return nil, err
	}
	if err := a.sink.Finish(); err != nil {
		return nil, fmt.Errorf("finishing clone: %w", err)
	}
	res := a.res
	return &res, nil
}

// writeFncache writes the fncache: the store's data/ and meta/ names,
// encodedir'd, a line each, in the order the stream sent them (hg's is
// nearly sorted). hg writes a set in arbitrary order, and every reader
// (hg's fncache, store.ParseFncache) takes the lines as a set. It is
// written from the names where they are, through one buffer: the
// fncache of a large store is as large as its names.
func (a *applier) writeFncache() error {
	var size int64
	if err := a.stored.each(func(name []byte) error {
		if store.InFncache(string(name)) {
			size += int64(len(store.EncodeDir(string(name)))) + 1
		}
		return nil
	}); err != nil || size == 0 {
		return err
	}
	return a.writeOwn(a.layout.storeDir()+"fncache", size, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := a.stored.each(func(name []byte) error {
			if store.InFncache(string(name)) {
				bw.WriteString(store.EncodeDir(string(name)))
				bw.WriteByte('\n')
			}
			return nil
		}); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// run applies with body and finishes, or aborts the sink on any error.
func (a *applier) run(body func() error) (*Result, error) {
	err := body()
	var res *Result
	if err == nil {
		res, err = a.finish()
	}
	if err != nil {
		if aerr := a.sink.Abort(); aerr != nil {
			err = errors.Join(err, fmt.Errorf("aborting clone: %w", aerr))
		}
		return nil, err
	}
	return res, nil
}
