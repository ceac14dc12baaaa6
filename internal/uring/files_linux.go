package uring

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// FileReader reads batches of small files whole through one ring: a
// batch's opens go to the kernel in one io_uring_enter, then its reads,
// each hard-linked to its file's close, in a second one. Two system
// calls a batch instead of three or four a file. Used by stream clone
// serving (streamclone/generate_uring_linux.go) and by the revision
// views' prefetch (hgview/batch_linux.go). Not safe for concurrent use.
type FileReader struct {
	ring  *Ring
	buf   []byte   // Buffer memory the reads land in
	names [][]byte // NUL-terminated names of the batch, read by the kernel
	fds   []int32  // each file's descriptor, or -errno of its open
	res   []int32  // what Read returns
	cls   []int32  // each close's result

	// OpenFlags are added to O_RDONLY|O_CLOEXEC (O_NONBLOCK, so that a
	// FIFO where a file was expected cannot hold the batch).
	OpenFlags int
}

// closeTag marks a close's completion (user_data).
const closeTag = 1 << 32

// FileReq is one file of a batch: openat(Dir, Name, O_RDONLY|O_CLOEXEC
// and the reader's OpenFlags),
// then up to Len bytes from offset 0 read into Bytes()[Off:Off+Len].
type FileReq struct {
	Dir      int
	Name     string
	Off, Len int
}

// NewFileReader sets up a ring for batches of up to files files and
// bytes bytes in all. The error wraps ErrUnavailable where the kernel
// gives no ring; the caller then makes the system calls.
func NewFileReader(files, bytes int) (*FileReader, error) {
	ring, err := New(2 * files) // a read and a close per file
	if err != nil {
		return nil, err
	}
	buf, err := ring.Buffer(bytes)
	if err != nil {
		ring.Close()
		return nil, err
	}
	return &FileReader{ring: ring, buf: buf, names: make([][]byte, files)}, nil
}

// Files is the most files a batch holds.
func (f *FileReader) Files() int { return len(f.names) }

// Bytes is the buffer the reads land in, valid until the next Read or
// Close. It is not Go heap memory: copy out what is kept.
func (f *FileReader) Bytes() []byte { return f.buf }

// Read opens, reads and closes each file of reqs. res[i] is the byte
// count read for reqs[i], or -errno of its open, read or close (a file
// whose close failed counts as failed). ok false means the ring failed:
// nothing in res is valid, and the FileReader must be closed (its buffer
// stays mapped, see the package doc). Read panics on a batch larger than
// NewFileReader's bounds or a request outside the buffer: a caller's bug.
func (f *FileReader) Read(reqs []FileReq) (res []int32, ok bool) {
	if len(reqs) > len(f.names) {
		panic("uring: FileReader batch larger than its ring")
	}
	f.fds, f.res, f.cls = f.fds[:0], f.res[:0], f.cls[:0]
	for i, q := range reqs {
		if q.Off < 0 || q.Len < 0 || q.Off+q.Len > len(f.buf) {
			panic("uring: FileReader request outside its buffer")
		}
		f.names[i] = append(append(f.names[i][:0], q.Name...), 0)
		f.fds = append(f.fds, -int32(unix.EBADF))
		f.res = append(f.res, -int32(unix.EBADF))
		f.cls = append(f.cls, 0)
		f.ring.Push(Openat(q.Dir, f.names[i], unix.O_RDONLY|unix.O_CLOEXEC|f.OpenFlags, uint64(i)))
	}
	err := f.ring.Run(func(c CQE) { f.fds[c.UserData] = c.Res })
	runtime.KeepAlive(f.names)
	if err != nil {
		return nil, false
	}
	for i, q := range reqs {
		fd := f.fds[i]
		if fd < 0 {
			f.res[i] = fd
			continue
		}
		read := Read(int(fd), f.buf[q.Off:q.Off+q.Len], 0, uint64(i))
		read.Flags |= SQEHardlink // the close runs even if the read fails
		f.ring.Push(read)
		f.ring.Push(Close(int(fd), closeTag|uint64(i)))
	}
	err = f.ring.Run(func(c CQE) {
		if i := int(c.UserData &^ closeTag); c.UserData&closeTag != 0 {
			f.cls[i] = c.Res
		} else {
			f.res[i] = c.Res
		}
	})
	if err != nil {
		return nil, false
	}
	for i, c := range f.cls {
		if c < 0 && f.fds[i] >= 0 {
			f.res[i] = c
		}
	}
	return f.res, true
}

// Close releases the ring (see Ring.Close).
func (f *FileReader) Close() { f.ring.Close() }
