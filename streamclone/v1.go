package streamclone

// Stream clone v1, the body of the wire protocol command stream_out
// (mercurial/streamclone.py generatev1wireproto / consumev1):
//
//	status line   "0\n" ok, "1\n" forbidden, "2\n" remote locking failed
//	header line   "<filecount> <bytecount>\n"
//	per file      "<encodedir(store name)>\0<size>\n" then size bytes
//
// The stream carries no requirements (the client takes them from the
// "streamreqs" capability) and only revlogs: no phaseroots, obsstore or
// caches, so a v1 clone sees every changeset public unless the caller
// fetches phases separately (hg does, with listkeys).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// maxLineLen bounds the header and per-file lines of a v1 stream.
const maxLineLen = maxNameLen + 32

// readLine reads one "\n"-terminated line of at most maxLineLen bytes,
// without the newline.
func readLine(r *bufio.Reader, what string) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > maxLineLen {
			return "", corruptf("%s line too long (over %d bytes)", what, maxLineLen)
		}
		if err == nil {
			return string(b[:len(b)-1]), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return "", corruptf("stream ended unexpectedly reading %s line (got %q)", what, b)
		}
		return "", fmt.Errorf("reading %s line: %w", what, err)
	}
}

// bufferedReader returns r itself if it is a *bufio.Reader (so nothing is
// read past the stream's end into a buffer the caller cannot see), else
// a new buffer around it.
func bufferedReader(r io.Reader) *bufio.Reader {
	if br, ok := r.(*bufio.Reader); ok {
		return br
	}
	return bufio.NewReaderSize(r, 64<<10)
}

// parseCount parses a non-negative decimal count as Python's int() would
// accept it from hg (surrounding whitespace allowed).
func parseCount(s, what string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, corruptf("invalid %s %q", what, s)
	}
	return v, nil
}

// ApplyV1 applies a stream_out response body (status line included) into
// sink. opt.Requirements must hold the server's streamreqs capability.
// On success the sink is finished; on any error it is aborted.
//
// r is read through a buffer that may read past the end of the stream;
// when the connection carries more after it (ssh), pass the connection's
// own *bufio.Reader, which is used as is.
func ApplyV1(ctx context.Context, r io.Reader, sink Sink, opt Options) (*Result, error) {
	a := newApplier(ctx, sink, opt)
	return a.run(func() error {
		br := bufferedReader(r)
		status, err := readLine(br, "stream_out status")
		if err != nil {
			return err
		}
		switch strings.TrimSpace(status) {
		case "0":
		case "1":
			return fmt.Errorf("%w", ErrForbidden)
		case "2":
			return fmt.Errorf("%w", ErrRemoteLock)
		default:
			return &RemoteError{Kind: "stream_out", Message: fmt.Sprintf("the server sent an unknown error code (%q)", status)}
		}
		header, err := readLine(br, "stream_out header")
		if err != nil {
			return err
		}
		fc, bc, ok := strings.Cut(header, " ")
		if !ok {
			return corruptf("unexpected response from remote server: %q", header)
		}
		filecount, err := parseCount(fc, "file count")
		if err != nil {
			return err
		}
		bytecount, err := parseCount(bc, "byte count")
		if err != nil {
			return err
		}
		reqs := opt.Requirements
		if len(reqs) == 0 {
			reqs = []string{"revlogv1"}
		}
		if err := a.setRequirements(reqs); err != nil {
			return err
		}
		return a.v1Entries(br, filecount, bytecount)
	})
}

// v1Entries applies the file entries shared by stream_out and packed1.
func (a *applier) v1Entries(br *bufio.Reader, filecount, bytecount int64) error {
	a.expect(filecount, bytecount)
	var total int64
	for i := int64(0); i < filecount; i++ {
		if err := a.ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(br, fmt.Sprintf("file entry %d of %d", i+1, filecount))
		if err != nil {
			return err
		}
		name, sz, ok := strings.Cut(line, "\x00")
		if !ok {
			return corruptf("unexpected response from remote server: file entry %d %q has no NUL", i+1, line)
		}
		size, err := parseCount(sz, "size of "+strconv.Quote(name))
		if err != nil {
			return err
		}
		if size > bytecount-total {
			return corruptf("file %q (%d bytes) exceeds the declared total of %d bytes (%d left)", name, size, bytecount, bytecount-total)
		}
		// "for backwards compat, name was partially encoded"
		if err := a.storeFile(store.DecodeDir(name), size, br); err != nil {
			return err
		}
		total += size
	}
	if total != bytecount {
		return corruptf("stream declared %d bytes but its %d files hold %d", bytecount, filecount, total)
	}
	return nil
}
