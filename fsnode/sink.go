package fsnode

// Sink: ingest a stream clone straight into the cache.
//
// Each file's size is announced first, so a file above InlineMax gets one
// contiguous reservation in the current data file and its bytes are
// pwritten there sequentially as they arrive; smaller files collect in
// memory and go inline. Close of a file only links it into the namespace
// (one short tree-locked step) and queues it; the group committer writes
// thousands of files per bbolt transaction, and the only wait for
// durability is Finish's.

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Sink creates files by path; it has the shape of streamclone.Sink.
type Sink struct {
	f   *FS
	ctx context.Context

	mu      sync.Mutex
	dirs    map[string]Ino // directory path -> inode, to skip lookups
	files   []string       // created, for Abort
	newDirs []string       // created, for Abort
	noTrack bool
	// fresh: the sink fills a cache CreateForIngest made, marked
	// unfinished until Finish (mount and fsck refuse it) and removed by
	// its maker on failure. Abort leaves it as it is, so the sink keeps
	// no list of its files: at 250,000 files the list and the names it
	// held were 18 MB of the clone's peak live heap of 115.
	fresh bool
	done  bool

	unhinted atomic.Int64 // data bytes written since the last writeback hint
}

const writebackEvery = 8 << 20

// NewSink returns a sink writing into the cache. ctx bounds Finish's wait.
//
// While a sink is active (until Finish or Abort) the cache is in ingest
// mode: group commits are large and are not fsynced unless someone waits
// (Fsync, Sync); Finish makes everything durable with one sync. A crash of
// the process (kill -9) during an ingest is safe like any other; a power
// failure or OS crash during one can, like Options.NoSync, leave an index
// that does not open, so the clone has to be redone from scratch.
func (f *FS) NewSink(ctx context.Context) *Sink {
	f.bulk.Add(1)
	f.c.mu.Lock()
	fresh := f.c.unfinished
	f.c.mu.Unlock()
	return &Sink{f: f, ctx: ctx, dirs: map[string]Ino{"": RootIno}, fresh: fresh}
}

// tracking says whether the sink records the files it makes, for Abort.
func (s *Sink) tracking() bool { return !s.noTrack && !s.fresh }

// track records files the sink made, for Abort.
func (s *Sink) track(names ...string) {
	if !s.tracking() || len(names) == 0 {
		return
	}
	s.mu.Lock()
	s.files = append(s.files, names...)
	s.mu.Unlock()
}

// Sink is NewSink with a background context.
func (f *FS) Sink() *Sink { return f.NewSink(context.Background()) }

// end leaves ingest mode once.
func (s *Sink) end() {
	s.mu.Lock()
	done := s.done
	s.done = true
	s.mu.Unlock()
	if !done && !s.noTrack {
		s.f.bulk.Add(-1)
	}
}

// Create starts file name (slash-separated, relative to the root) of size
// bytes. Missing parent directories are made.
func (s *Sink) Create(name string, size int64) (io.WriteCloser, error) {
	if size < 0 || size > maxFileSize {
		return nil, fmt.Errorf("fsnode: sink file %q: size %d out of range: %w", name, size, syscall.EFBIG)
	}
	dirPath, base := splitDir(name)
	if err := checkNewName(base); err != nil {
		return nil, fmt.Errorf("fsnode: sink file %q: %w", name, err)
	}
	parent, err := s.dir(dirPath)
	if err != nil {
		return nil, fmt.Errorf("fsnode: sink file %q: %w", name, err)
	}
	w := &sinkFile{s: s, name: name, parent: parent, base: base, size: size, perm: 0o644}
	if size <= int64(s.f.opt.InlineMax) {
		w.buf = make([]byte, 0, size)
	} else {
		df, off, err := s.f.data.reserve(size)
		if err != nil {
			return nil, fmt.Errorf("fsnode: sink file %q: %w", name, err)
		}
		w.df, w.off = df, off
		df.pending.Add(1)
	}
	return w, nil
}

// dir returns the directory at p, making it (and parents) if needed.
func (s *Sink) dir(p string) (Ino, error) {
	s.mu.Lock()
	ino, ok := s.dirs[p]
	s.mu.Unlock()
	if ok {
		return ino, nil
	}
	parentPath, base := splitDir(p)
	parent, err := s.dir(parentPath)
	if err != nil {
		return 0, err
	}
	if err := checkNewName(base); err != nil {
		return 0, err
	}
	f := s.f
	existed := false
	if d, err := f.rlockDir(parent); err == nil {
		existed = d.dir.entries[base] != nil
		f.tree.RUnlock()
	}
	ino, err = f.mkdirStep(s.ctx, parent, base, 0o755)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.dirs[p] = ino
	if !existed && s.tracking() {
		s.newDirs = append(s.newDirs, p)
	}
	s.mu.Unlock()
	return ino, nil
}

type sinkFile struct {
	s       *Sink
	name    string
	parent  Ino
	base    string
	size    int64
	written int64
	buf     []byte    // inline contents
	df      *dataFile // else: the reservation
	off     int64
	closed  bool
	perm    uint32 // permission bits
	mtime   int64  // Unix nanoseconds; 0: when Close links it
	// sums: the CRC32C of each complete run (maxRunLen bytes of the file
	// from offset 0); crc: that of the run being written.
	sums []uint32
	crc  uint32
}

func (w *sinkFile) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("fsnode: sink file %q: write after close", w.name)
	}
	if int64(len(p)) > w.size-w.written {
		return 0, fmt.Errorf("%w: %q announced %d bytes", ErrTooLong, w.name, w.size)
	}
	if w.df == nil {
		w.buf = append(w.buf, p...)
	} else {
		if _, err := w.df.f.WriteAt(p, w.off+w.written); err != nil {
			return 0, fmt.Errorf("fsnode: sink file %q: %w", w.name, err)
		}
		w.s.f.data.wrote(w.df)
		w.sum(p)
		// Start writeback every few MiB so that Finish's fsync finds
		// little left to write.
		if w.s.unhinted.Add(int64(len(p))) > writebackEvery {
			w.s.unhinted.Store(0)
			w.s.f.data.startWriteback(nil)
		}
	}
	w.written += int64(len(p))
	return len(p), nil
}

// sum adds p, just written at w.written, to the runs' checksums.
func (w *sinkFile) sum(p []byte) {
	for pos := w.written; len(p) > 0; {
		n := min(int64(len(p)), maxRunLen-pos%maxRunLen)
		w.crc = crc32.Update(w.crc, castagnoli, p[:n])
		pos += n
		p = p[n:]
		if pos%maxRunLen == 0 {
			w.sums = append(w.sums, w.crc)
			w.crc = 0
		}
	}
}

// Close links the complete file into its directory (replacing an existing
// file of that name) and queues it for commit.
func (w *sinkFile) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.df != nil {
		// Linked below (under the tree lock, which Compact's detach
		// takes too) or abandoned.
		defer w.df.pending.Add(-1)
	}
	if w.written != w.size {
		return fmt.Errorf("%w: %q has %d of %d bytes", ErrShortWrite, w.name, w.written, w.size)
	}
	s, f := w.s, w.s.f
	if err := f.c.admit(s.ctx); err != nil {
		return err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	dir, err := f.dirForUpdate(w.parent)
	if err != nil {
		return fmt.Errorf("fsnode: sink file %q: %w", w.name, err)
	}
	if e := dir.dir.entries[w.base]; e != nil {
		old, err := f.getInode(e.ino)
		if err != nil {
			return fmt.Errorf("fsnode: sink file %q: %w", w.name, err)
		}
		if old.isDir() {
			return fmt.Errorf("fsnode: sink file %q: %w", w.name, syscall.EISDIR)
		}
		f.dirRemove(dir, w.base)
		f.changeLinks(old, -1, false)
	}
	in := f.newInode(syscall.S_IFREG|w.perm, f.uid, f.gid, 0)
	in.mu.Lock()
	if w.mtime != 0 {
		in.d.Mtime = w.mtime
	}
	if w.df == nil {
		in.inline = w.buf
	} else {
		in.d.Flags &^= flagInline
		in.inline = nil
		if w.size > 0 {
			f.data.addLive(w.df.id, w.size)
			if w.size%maxRunLen != 0 {
				w.sums = append(w.sums, w.crc)
			}
			in.exts = make([]extent, 0, len(w.sums))
			for i, sum := range w.sums {
				off := int64(i) * maxRunLen
				n := min(w.size-off, maxRunLen)
				in.exts = append(in.exts, extent{Off: off, File: w.df.id, FileOff: w.off + off, Len: n, Run: n, Sum: sum})
			}
		}
		f.c.addBytes(uint64(w.size))
	}
	in.d.Size = uint64(w.size)
	f.markDirtyLocked(in)
	in.mu.Unlock()
	// The entry keeps its own copy of the name: w.base is a part of the
	// path the caller passed, which would otherwise stay alive with it
	// (at 250,000 files of a clone, 11 MB of paths for 4 MB of names).
	f.dirAdd(dir, strings.Clone(w.base), in)
	w.buf = nil
	s.track(w.name)
	return nil
}

// Finish waits until everything the sink made is committed and durable.
// On a cache made by CreateForIngest, the same commit deletes the
// unfinished-ingest mark.
func (s *Sink) Finish() error {
	c := &s.f.c
	c.mu.Lock()
	// Every file of the sink is queued (closed) by now: the next snapshot
	// holds them all, or they are committed already.
	c.finishing = true
	c.mu.Unlock()
	// Sync before leaving ingest mode, so that its batch is the durable one.
	err := s.f.Sync(s.ctx)
	s.end()
	return err
}

// Abort removes the files and directories this sink created; on a cache
// CreateForIngest made, it leaves everything to the cache's maker (the
// cache stays marked unfinished).
func (s *Sink) Abort() error {
	if s.fresh {
		s.end()
		return nil
	}
	s.mu.Lock()
	files, dirs := s.files, s.newDirs
	s.files, s.newDirs = nil, nil
	s.mu.Unlock()
	defer s.end()
	ctx := context.Background()
	var first error
	for i := len(files) - 1; i >= 0; i-- {
		if err := s.f.removePath(ctx, files[i], false); err != nil && !errors.Is(err, syscall.ENOENT) && first == nil {
			first = err
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		err := s.f.removePath(ctx, dirs[i], true)
		if err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTEMPTY) && first == nil {
			first = err
		}
	}
	if err := s.f.Sync(ctx); err != nil && first == nil {
		first = err
	}
	return first
}

// removePath unlinks (or with dir, rmdirs) the entry at p.
func (f *FS) removePath(ctx context.Context, p string, dir bool) error {
	dirPath, name := splitDir(p)
	f.tree.RLock()
	parent, err := f.resolve(dirPath)
	f.tree.RUnlock()
	if err != nil {
		return err
	}
	if dir {
		return f.Rmdir(ctx, parent, name)
	}
	return f.Unlink(ctx, parent, name)
}
