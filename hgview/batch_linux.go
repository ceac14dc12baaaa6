package hgview

// Reading a prefetched level's filelog indexes through io_uring. A first
// walk of a changeset's tree opens one filelog per file, and for the
// small files of a source tree its index is the whole filelog (inline):
// open, fstat, read and close, four system calls that cost more than the
// reconstruction on the 2-core bench VM, where a first grep -r of 20,000
// files spent a sixth of the daemon's CPU in them. The prefetcher reads
// a chunk of indexes at once instead (internal/uring's FileReader: two
// io_uring_enter calls a chunk), each into a fixed slot; an index that
// fills its slot, or any that fails, is read again the ordinary way, and
// so is any whose reconstruction from the batched bytes fails, so the
// ring changes no result and no error, only time.

import (
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/internal/uring"
)

// indexReader is the prefetch goroutine's ring; not safe for concurrent
// use.
type indexReader struct {
	fr      *uring.FileReader
	storefd int
	reqs    []uring.FileReq
	out     [][]byte
}

// newIndexReader returns a reader of indexes in the store directory
// storeDir, or nil where there is none (no directory on disk, no
// io_uring): the prefetcher then reads each index itself.
func newIndexReader(storeDir string) *indexReader {
	if storeDir == "" {
		return nil
	}
	fd, err := sysio.OpenDir(storeDir)
	if err != nil {
		return nil
	}
	fr, err := uring.NewFileReader(indexChunk, indexChunk*indexSlot)
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return &indexReader{fr: fr, storefd: fd}
}

// chunk is how many indexes read takes at once.
func (r *indexReader) chunk() int { return r.fr.Files() }

// read reads the indexes named (store-relative, slash separated, at most
// chunk) and returns their contents, nil for one not read whole. After a
// ring failure it returns all nil, and the reader reads nothing more.
func (r *indexReader) read(names []string) [][]byte {
	r.out = append(r.out[:0], make([][]byte, len(names))...)
	if r.fr == nil {
		return r.out
	}
	r.reqs = r.reqs[:0]
	slots := make([]int, 0, len(names))
	for i, name := range names {
		if !fs.ValidPath(name) || name == "." {
			continue // sysio.DirFS refuses it, with its error
		}
		r.reqs = append(r.reqs, uring.FileReq{Dir: r.storefd, Name: name, Off: len(r.reqs) * indexSlot, Len: indexSlot})
		slots = append(slots, i)
	}
	res, ok := r.fr.Read(r.reqs)
	if !ok {
		r.fr.Close()
		r.fr = nil
		return r.out
	}
	data := r.fr.Bytes()
	for k, i := range slots {
		if n := int(res[k]); n >= 0 && n < indexSlot {
			q := r.reqs[k]
			r.out[i] = append([]byte(nil), data[q.Off:q.Off+n]...) // out of ring memory
		}
	}
	return r.out
}

func (r *indexReader) close() {
	if r.fr != nil {
		r.fr.Close()
	}
	unix.Close(r.storefd)
}
