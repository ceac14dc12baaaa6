package worktree

// A checkout into a sink: the working copy of a new mounted clone goes
// straight into the hgfs cache that the stream filled (fsnode.Sink),
// never through FUSE, with the attributes the mount will report, and
// the dirstate recording them.

import (
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"time"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// Sink is where CheckoutSink writes: files by slash-separated name
// relative to the working copy's root (".hg/..." for the repository's
// own), missing parent directories made by the sink, an existing file of
// the name replaced. fsnode.Sink is one. Calls come from several
// goroutines at once.
type Sink interface {
	// CreateAttr starts a file of size bytes with permission bits perm
	// and modification time mtime; Close makes it visible.
	CreateAttr(name string, size int64, perm uint32, mtime time.Time) (io.WriteCloser, error)
	// Symlink makes name a symbolic link to target, modified at mtime.
	Symlink(name, target string, mtime time.Time) error
}

// VirtualSink is a Sink that can also check a file out as a reference
// to its revision, without its bytes: a virtual file of the mount's
// cache (fsnode's virtual.go), whose contents are read from the store
// when read and copied into the cache when first written. Its size,
// mode and mtime are the file's as the mount reports them.
type VirtualSink interface {
	Sink
	// CreateVirtuals makes each of files virtual, in order; files is
	// the caller's again when it returns.
	CreateVirtuals(files []NewVirtual) error
}

// DeferSink is a VirtualSink that can take a whole working copy's
// virtual files at once and make each directory's when it is first
// looked in (fsnode.Sink.DeferVirtuals): the checkout then hands it
// every file in one call instead of batches.
type DeferSink interface {
	VirtualSink
	// DeferVirtuals makes files virtual, and returns how many of them
	// it deferred.
	DeferVirtuals(files VirtualList) (int, error)
}

// VirtualList is the files a checkout makes virtual, Len of them, the
// i'th built by At from the checkout's own records: a list of them all
// would cost 80 bytes a file (20 MB at 250,000 files) at the clone's
// peak, for a call that reads each file two or three times.
type VirtualList interface {
	Len() int
	At(i int) NewVirtual
}

// virtualList is the regular files of a checkout's manifest m, by their
// index in it (idx), with the sizes and modes written records.
type virtualList struct {
	m       []revlog.ManifestEntry
	written []Written
	idx     []int32
	mtime   time.Time
}

func (l *virtualList) Len() int { return len(l.idx) }

func (l *virtualList) At(i int) NewVirtual {
	j := l.idx[i]
	e, w := &l.m[j], &l.written[j]
	return NewVirtual{Name: e.Path, Size: w.Size, Perm: w.Mode & 0o7777, Mtime: l.mtime, Node: e.Node}
}

// NewVirtual is a file CreateVirtuals makes: its name, the size, mode
// and mtime the mount reports, and its file revision.
type NewVirtual struct {
	Name  string
	Size  int64
	Perm  uint32
	Mtime time.Time
	Node  revlog.Node
}

// virtualBatch is how many files one CreateVirtuals call makes: one
// lock of the cache's tree each (fsnode.Sink.CreateVirtuals).
const virtualBatch = 512

// CheckoutSink checks out changeset rev of r, a repository without a
// working copy (a new clone's, whose store the sink holds), into dst:
// the files of its manifest with hg's flags, then .hg/branch, the
// dirstate (v1, or v2 when r requires it) and the .hg/wcache entries,
// as Update writes them into a directory. Nobody else sees the sink
// until it is finished, so no wlock is taken and no updatestate written:
// the caller finishes the sink, or discards it, as one.
//
// Every file gets the same modification time: the start of the second
// before the checkout began. The dirstate then records each file's
// mtime (hg's rule, merge.update's: only an mtime strictly before the
// second the dirstate is written is recorded), so that hg status
// through the mount compares attributes and reads no file back. Files
// written in the second the dirstate is written would all be recorded
// without one, and the first hg status would read every file.
func CheckoutSink(ctx context.Context, r *repo.Repo, rev int, dst Sink, opt Options) (*Result, error) {
	start := time.Now()
	mtime := time.Unix(start.Unix()-1, 0)
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	var to []revlog.ManifestEntry
	if rev != revlog.NullRev {
		if to, err = r.ReadManifest(cs.Manifest); err != nil {
			return nil, err
		}
		// The parse holds its own copy; nothing reads this manifest's
		// text again.
		if ml, err := r.Manifestlog(); err == nil {
			ml.Forget()
		}
	}
	if err := Check(to); err != nil {
		return nil, err
	}
	written, deferred, err := writeSink(ctx, r, to, dst, mtime, opt)
	if err != nil {
		return nil, err
	}
	// The cache stamps what it creates with the system clock: "now" for
	// the sink is that clock now, as dirstate.Now is for a directory.
	now := dirstate.TimestampOf(time.Now().UnixNano())
	parents := [2]revlog.Node{r.Node(rev)}
	files, err := dirstate.EncodeList(parents, &cleanList{m: to, written: written, now: now}, r.Store.Requirements.Has("dirstate-v2"))
	if err != nil {
		return nil, err
	}
	umask := getUmask()
	files = append([]dirstate.File{{Name: "branch", Data: dirstate.BranchFile(cs.Branch())}}, files...)
	for _, f := range files {
		if err := sinkWrite(dst, ".hg/"+f.Name, f.Data, 0o666&^umask, time.Time{}); err != nil {
			return nil, err
		}
	}
	if err := wcacheSink(dst, umask); err != nil {
		return nil, err
	}
	return &Result{Updated: len(to), Branch: cs.Branch(), Deferred: deferred}, nil
}

// cleanList is a new checkout's dirstate entries, each built as the
// encoder reads it: m's files, clean as written records them, with
// their mtime unless it is ambiguous against now.
type cleanList struct {
	m       []revlog.ManifestEntry
	written []Written
	now     dirstate.Timestamp
}

func (l *cleanList) Len() int { return len(l.m) }

func (l *cleanList) At(i int) dirstate.Entry {
	w := &l.written[i]
	var mt *dirstate.Timestamp
	if !dirstate.Ambiguous(w.Mtime, l.now) {
		mt = &w.Mtime
	}
	return dirstate.Clean(l.m[i].Path, w.Mode, w.Size, mt)
}

// writeSink has the writers reconstruct every file of m and write it
// into dst with modification time mtime; results are by index of m,
// with how many files dst deferred.
func writeSink(ctx context.Context, r *repo.Repo, m []revlog.ManifestEntry, dst Sink, mtime time.Time, opt Options) ([]Written, int, error) {
	out := make([]Written, len(m))
	if len(m) == 0 {
		return out, 0, nil
	}
	if opt.Total != nil {
		opt.Total(len(m))
	}
	umask := getUmask()
	stamp := dirstate.TimestampOf(mtime.UnixNano())
	vdst, virtual := dst.(VirtualSink)
	virtual = virtual && opt.Virtual
	// Virtual files are sized by the writers and made afterwards in
	// batches, in manifest order (every regular file: their Written
	// says so): made one at a time, each of the 20,000 files of the
	// bench's checkout took the cache's tree lock against the writers
	// reading filelogs through the same tree.
	err := eachFile(ctx, opt, len(m), func(i int) (int64, error) {
		e := m[i]
		if virtual && (e.Flags != "l" || !fsSymlinks) {
			if n, ok := opt.Sizes.Size(e.Node); ok {
				out[i] = Written{Size: n, Mtime: stamp, Mode: dirstate.ModeRegular | FilePerm(e.Flags, umask)}
				return n, nil
			}
		}
		// A buffer of its own: a Sink may keep what it is given.
		fl, err := openFilelog(r, e.Path, &buffer{})
		if err != nil {
			return 0, err
		}
		data, err := repo.FileContent(fl, e)
		fl.Close()
		if err != nil {
			return 0, err
		}
		w := Written{Size: int64(len(data)), Mtime: stamp}
		if e.Flags == "l" && fsSymlinks {
			if err := dst.Symlink(e.Path, string(data), mtime); err != nil {
				return 0, err
			}
			w.Mode = dirstate.ModeSymlink | 0o777
		} else if virtual {
			w.Mode = dirstate.ModeRegular | FilePerm(e.Flags, umask)
		} else {
			perm := FilePerm(e.Flags, umask)
			if err := sinkWrite(dst, e.Path, data, perm, mtime); err != nil {
				return 0, err
			}
			w.Mode = dirstate.ModeRegular | perm
		}
		out[i] = w
		return w.Size, nil
	})
	if err != nil || !virtual {
		return out, 0, err
	}
	opt.Sizes.release()
	if len(m) > math.MaxInt32 {
		return out, 0, fmt.Errorf("checkout of %d files: too many", len(m))
	}
	list := &virtualList{m: m, written: out, mtime: mtime, idx: make([]int32, 0, len(m))}
	for i := range m {
		if out[i].Mode&^0o7777 == dirstate.ModeRegular { // not a symlink, made by its writer
			list.idx = append(list.idx, int32(i))
		}
	}
	if ddst, ok := dst.(DeferSink); ok {
		n, err := ddst.DeferVirtuals(list)
		return out, n, err
	}
	batch := make([]NewVirtual, 0, virtualBatch)
	for i := 0; i < list.Len(); {
		if err := ctx.Err(); err != nil {
			return out, 0, err
		}
		batch = batch[:0]
		for ; i < list.Len() && len(batch) < virtualBatch; i++ {
			batch = append(batch, list.At(i))
		}
		if err := vdst.CreateVirtuals(batch); err != nil {
			return out, 0, err
		}
	}
	return out, 0, nil
}

// FilePerm is the permission bits hg gives a new file of manifest
// flags: 0666 less the umask, and with "x" the exec bits where the read
// bits are, less the umask (util.setflags).
func FilePerm(flags string, umask uint32) uint32 {
	perm := 0o666 &^ umask
	if flags == "x" && fsExec {
		perm |= (perm & 0o444) >> 2 &^ umask
	}
	return perm
}

// sinkWrite writes one whole file into dst.
func sinkWrite(dst Sink, name string, data []byte, perm uint32, mtime time.Time) error {
	w, err := dst.CreateAttr(name, int64(len(data)), perm, mtime)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return w.Close()
}

// wcacheSink writes the .hg/wcache entries writeWCache leaves in a
// directory: checkisexec with exec bits, the checklink symlink and its
// target.
func wcacheSink(dst Sink, umask uint32) error {
	dir := ".hg/wcache"
	if err := sinkWrite(dst, path.Join(dir, "checkisexec"), nil, 0o711, time.Time{}); err != nil {
		return err
	}
	if err := sinkWrite(dst, path.Join(dir, "checklink-target"), nil, 0o666&^umask, time.Time{}); err != nil {
		return err
	}
	return dst.Symlink(path.Join(dir, "checklink"), "checklink-target", time.Time{})
}
