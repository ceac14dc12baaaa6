package worktree

import (
	"sync"
	"sync/atomic"
)

// The buffers filelog indexes and working files are read into, recycled
// between files: a checkout read every file's filelog index (its whole
// .i, which holds the revisions of a small file) into a buffer of its
// own, one allocation per file written. A buffer is taken for one file
// and put back when nothing read from it is used any more: the revlog
// opened on an index keeps it, and a text stored uncompressed aliases
// it. SetPooling (HGFS_TUNE's bufpool) turns the recycling off.

// buffer is one read buffer.
type buffer struct{ b []byte }

// maxPooledBuffer is the largest buffer put back: a file larger than
// that is read into a buffer of its own, so that memory stays bounded by
// the writers' count times this.
const maxPooledBuffer = 1 << 20

var (
	buffers = sync.Pool{New: func() any { return new(buffer) }}
	noPools atomic.Bool
)

// SetPooling switches the recycling of read buffers on or off for the
// process (HGFS_TUNE's bufpool; revlog.SetPooling is its other half).
func SetPooling(on bool) { noPools.Store(!on) }

func getBuffer() *buffer {
	if noPools.Load() {
		return &buffer{}
	}
	return buffers.Get().(*buffer)
}

func putBuffer(b *buffer) {
	if noPools.Load() || cap(b.b) > maxPooledBuffer {
		return
	}
	buffers.Put(b)
}

// read reads the file at p into b (readWhole), keeping the array for the
// next file.
func (b *buffer) read(p string) ([]byte, error) {
	data, err := readWhole(p, b.b[:0])
	if err == nil {
		b.b = data[:0]
	}
	return data, err
}
