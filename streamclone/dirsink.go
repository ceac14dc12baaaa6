package streamclone

// DirSink writes a clone into a plain directory.
//
// Atomicity: files are staged under dest/.hg.partial and the directory is
// renamed to dest/.hg in Finish, after every file is closed (and synced,
// with Durable). Until then dest holds no .hg, so neither hg nor hgfs sees
// a repository there; an interrupted clone leaves .hg.partial behind only
// if the process dies before Abort runs, and the next clone into dest
// refuses it (dest not empty).
//
// Small files (at most 64 KiB: most of a store) are written by a pool of
// writer goroutines while the applier decodes the next ones (see
// dirwriters.go). Larger files are written by the applier as they stream
// in, and closed by it or, as Mercurial's vfs.backgroundfilecloser does
// ([worker] backgroundclose*), by a pool of closing goroutines: closing a
// file that was just written costs 1-10 ms on Windows (antivirus filters
// scan on close). Both pools are fed through bounded queues; a full queue
// blocks Create's caller (back-pressure, bounded memory and open files).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/internal/batchpool"
	"github.com/hgfs/hgfs/internal/sysio"
)

// stageName is the directory a DirSink writes into before Finish.
const stageName = ".hg.partial"

// DirOptions configure a DirSink. The zero value writes and closes every
// file on the applier's goroutine; DefaultDirOptions gives hgfs's defaults.
type DirOptions struct {
	// Writers is the number of goroutines writing small files ([hgfs]
	// clone-writers); 0 writes them on the applier's goroutine. At most
	// MaxWriters.
	Writers int
	// BackgroundClose closes files on background goroutines
	// ([worker] backgroundclose).
	BackgroundClose bool
	// MinFileCount: no background closing when the stream announces fewer
	// files ([worker] backgroundcloseminfilecount; hg's default 2048).
	MinFileCount int
	// MaxQueue bounds files waiting to be closed ([worker]
	// backgroundclosemaxqueue; hg's default 384, sized for Windows' limit
	// of 512 open files).
	MaxQueue int
	// ThreadCount is the number of closing goroutines ([worker]
	// backgroundclosethreadcount; hg's default 4).
	ThreadCount int
	// Durable fsyncs every file (on the closing goroutines) and every
	// directory before Finish makes the clone visible. hg does not sync
	// stream clones; neither does hgfs by default.
	Durable bool
}

// DefaultDirOptions returns hgfs's defaults: four writers, and background
// closing on Windows only, as hg has it (vfs.backgroundfilecloser:
// "Only Windows/NTFS has slow file closing"), with hg's figures (2048 /
// 384 / 4).
//
// Measured here (BenchmarkDirSink, see its comment for the figures): the
// writers halve the time of a store of small files, and four are no
// worse than two; four also match the closers where closing is slow,
// since on Windows the writers take the closes of the small files. On
// Linux a close costs microseconds, and the closer's hand-over cost more
// than it saved.
func DefaultDirOptions() DirOptions {
	return DirOptions{Writers: 4, BackgroundClose: BackgroundCloseDefault, MinFileCount: 2048, MaxQueue: 384, ThreadCount: 4}
}

// BackgroundCloseDefault is hg's default for [worker] backgroundclose.
const BackgroundCloseDefault = runtime.GOOS == "windows"

// CheckDest reports whether dest can receive a clone: it must not exist or
// be an empty directory (hg clone's "destination '%s' is not empty").
func CheckDest(dest string) error {
	f, err := os.Open(dest)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: destination %q is not a directory", ErrDestNotEmpty, dest)
	}
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("%w: destination %q is not empty", ErrDestNotEmpty, dest)
	}
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

// DirSink is a Sink writing into dest/.hg (see the file comment).
type DirSink struct {
	dest, stage string
	createdDest bool
	createdTop  string // outermost directory NewDirSink created for dest
	opt         DirOptions

	mu       sync.Mutex
	state    int // sinkOpen, sinkFinished, sinkAborted
	renamed  bool
	dirs     map[string]bool // directories created under stage
	expected int64           // announced file count, -1 unknown
	closer   *batchpool.Pool[sinkFile]
	writers  *writers
}

const (
	sinkOpen = iota
	sinkFinished
	sinkAborted
)

var _ Sink = (*DirSink)(nil)
var _ Expecter = (*DirSink)(nil)

// OutermostMissing returns the outermost of dir and its ancestors that
// does not exist, which creating dir makes first: what undoing that
// creation removes. It is "" if dir exists.
func OutermostMissing(dir string) string {
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		return ""
	}
	top := filepath.Clean(dir)
	for {
		parent := filepath.Dir(top)
		if _, err := os.Stat(parent); err == nil || parent == top {
			return top
		}
		top = parent
	}
}

// NewDirSink prepares dest (created if missing; must be empty).
func NewDirSink(dest string, opt DirOptions) (*DirSink, error) {
	if err := CheckDest(dest); err != nil {
		return nil, err
	}
	s := &DirSink{dest: dest, stage: filepath.Join(dest, stageName), opt: opt, expected: -1, dirs: map[string]bool{}}
	if top := OutermostMissing(dest); top != "" {
		// Remembered so that Abort removes every directory made here.
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return nil, err
		}
		s.createdDest, s.createdTop = true, top
	}
	if err := os.Mkdir(s.stage, 0o755); err != nil {
		if s.createdDest {
			os.RemoveAll(s.createdTop)
		}
		return nil, err
	}
	s.dirs[s.stage] = true
	return s, nil
}

// Expect implements Expecter: background closing starts only for streams
// of at least MinFileCount files (or of unknown size), as in hg.
func (s *DirSink) Expect(files, bytes int64) {
	s.mu.Lock()
	s.expected = files
	s.mu.Unlock()
}

// Create creates dest/<name> (staged). name must be a clean relative path
// under ".hg/".
func (s *DirSink) Create(name string, size int64) (io.WriteCloser, error) {
	if err := checkRelative(name); err != nil || path.Clean(name) != name || !strings.HasPrefix(name, ".hg/") {
		return nil, fmt.Errorf("%w: sink name %q is not a clean path under .hg/", ErrUnsafeName, name)
	}
	if size < 0 {
		return nil, fmt.Errorf("streamclone: negative size %d for %s", size, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sinkOpen {
		return nil, ErrSinkClosed
	}
	if err := s.failed(); err != nil {
		return nil, err
	}
	full := filepath.Join(s.stage, filepath.FromSlash(strings.TrimPrefix(name, ".hg/")))
	if err := s.mkdirs(filepath.Dir(full)); err != nil {
		return nil, err
	}
	if s.opt.Writers > 0 && size <= smallFileMax {
		if s.writers == nil {
			s.writers = newWriters(min(s.opt.Writers, MaxWriters), s.opt.Durable)
		}
		s.writers.reserve(size)
		return &bufFile{s: s, path: full, name: name, size: size, data: make([]byte, 0, size)}, nil
	}
	if s.closer == nil && s.opt.BackgroundClose && (s.expected < 0 || s.expected >= int64(s.opt.MinFileCount)) {
		s.closer = newCloser(s.opt)
	}
	f, err := createExcl(full)
	if err != nil {
		return nil, err
	}
	return &dirFile{f: f, s: s, name: name, size: size}, nil
}

// failed returns the first error of the pools.
func (s *DirSink) failed() error {
	if s.writers != nil {
		if err := s.writers.failed(); err != nil {
			return err
		}
	}
	if s.closer != nil {
		return s.closer.Failed()
	}
	return nil
}

// handOff gives a small file whose size bytes were reserved to the
// writers; nil releases the reservation of a file that will not be
// written.
func (s *DirSink) handOff(f *smallFile, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.writers
	if w == nil {
		return ErrSinkClosed // Finish or Abort came first; nothing is held
	}
	if f == nil || s.state != sinkOpen {
		w.release(size)
		if f == nil {
			return nil
		}
		return ErrSinkClosed
	}
	w.add(*f)
	return nil
}

// closeLarge closes a file the applier wrote, or hands it to the closer.
func (s *DirSink) closeLarge(f sinkFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sinkOpen {
		f.Close()
		return ErrSinkClosed
	}
	if s.closer == nil {
		return closeFile(f, s.opt.Durable)
	}
	if err := s.closer.Failed(); err != nil {
		f.Close()
		return err
	}
	s.closer.Add(f)
	return nil
}

// mkdirs creates dir and its parents under stage, remembering them.
func (s *DirSink) mkdirs(dir string) error {
	if s.dirs[dir] {
		return nil
	}
	if err := s.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	s.dirs[dir] = true
	return nil
}

// Finish waits for background closes, syncs (Durable) and renames the
// staged directory to dest/.hg.
func (s *DirSink) Finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sinkOpen {
		return ErrSinkClosed
	}
	if s.writers != nil {
		err := s.writers.finish()
		s.writers = nil
		if err != nil {
			return err
		}
	}
	if s.closer != nil {
		err := s.closer.Close()
		s.closer = nil
		if err != nil {
			return err
		}
	}
	if s.opt.Durable {
		for d := range s.dirs {
			if err := syncDir(d); err != nil {
				return err
			}
		}
	}
	if err := os.Rename(s.stage, filepath.Join(s.dest, ".hg")); err != nil {
		return err
	}
	s.renamed = true
	if s.opt.Durable {
		if err := syncDir(s.dest); err != nil {
			return err
		}
	}
	s.state = sinkFinished
	return nil
}

// Abort removes everything the sink created: the staged (or, after a
// failed Finish, renamed) .hg, and dest itself if the sink created it.
// An existing empty dest is left empty.
func (s *DirSink) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == sinkAborted {
		return nil
	}
	if s.state == sinkFinished {
		return ErrSinkClosed
	}
	s.state = sinkAborted
	if s.writers != nil {
		s.writers.abort()
		s.writers = nil
	}
	if s.closer != nil {
		s.closer.Close() // close every handle before removing; errors moot
		s.closer = nil
	}
	dir := s.stage
	if s.renamed {
		dir = filepath.Join(s.dest, ".hg")
	}
	err := os.RemoveAll(dir)
	if s.createdDest && err == nil {
		// Only directories NewDirSink made, now empty: Remove, not RemoveAll.
		for d := filepath.Clean(s.dest); err == nil; d = filepath.Dir(d) {
			err = os.Remove(d)
			if d == s.createdTop {
				break
			}
		}
	}
	return err
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for sync on Windows
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// sinkFile is what the directory sink writes through: a sysio.File
// (createExcl).
type sinkFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
	Name() string
}

// createExcl creates path exclusively for writing. On unix the file is a
// plain descriptor (sysio.File): os.OpenFile costs a clone four fcntl
// calls and a failed epoll_ctl per file (Go registers every file with
// its poller), ~100,000 extra system calls on a 20,000-file store, and a
// file that is only created, written once and closed needs none of that.
func createExcl(path string) (sinkFile, error) {
	f, err := sysio.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return f, nil
}

type dirFile struct {
	f       sinkFile
	s       *DirSink
	name    string
	size, n int64
	closed  bool
}

// Write goes straight to the OS file: no buffering beyond the caller's
// chunk, so memory stays flat whatever the file size.
func (d *dirFile) Write(p []byte) (int, error) {
	if d.n+int64(len(p)) > d.size {
		return 0, fmt.Errorf("streamclone: %s: write beyond its declared size %d", d.name, d.size)
	}
	n, err := d.f.Write(p)
	d.n += int64(n)
	return n, err
}

// Close hands the file to the background closer, or closes it.
func (d *dirFile) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	if d.n != d.size {
		d.f.Close()
		return fmt.Errorf("streamclone: %s: %d bytes written, %d declared", d.name, d.n, d.size)
	}
	return d.s.closeLarge(d.f)
}

func closeFile(f sinkFile, durable bool) error {
	var err error
	if durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("closing %s: %w", f.Name(), err)
	}
	return nil
}

// closeBatchSize is the number of files handed to the closer at once.
const closeBatchSize = 16

// newCloser starts the background closer: ThreadCount goroutines closing
// files handed over in batches. At most MaxQueue files wait in the queue
// (plus a batch on each goroutine and the one being filled), so the open
// descriptors stay bounded.
func newCloser(opt DirOptions) *batchpool.Pool[sinkFile] {
	threads, queue := opt.ThreadCount, opt.MaxQueue
	if threads <= 0 {
		threads = 4
	}
	if queue <= 0 {
		queue = 384
	}
	size := min(closeBatchSize, queue)
	return batchpool.New(threads, queue/size, size, func(f sinkFile) error {
		return closeFile(f, opt.Durable)
	})
}
