package streamclone

// Packed1 stream clone bundle, as `hg debugcreatestreamclonebundle` writes
// it (mercurial/streamclone.py generatebundlev1 / readbundle1header):
//
//	magic        "HGS1"
//	compression  "UN" (the only one defined)
//	filecount    uint64 big-endian
//	bytecount    uint64 big-endian
//	reqlen       uint16 big-endian, length of the next field
//	requirements comma-separated, NUL-terminated
//	entries      the v1 file entries ("name\0size\n" + bytes)

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hgfs/hgfs/store"
)

const packed1Magic = "HGS1"

// Packed1Header is the header of a packed1 bundle.
type Packed1Header struct {
	Files, Bytes int64
	Requirements []string
}

// readPacked1Header reads the header after the magic.
func readPacked1Header(br io.Reader) (*Packed1Header, error) {
	var h [2 + 16 + 2]byte
	if err := readFull(br, h[:], "packed1 header", 4); err != nil {
		return nil, err
	}
	if c := string(h[:2]); c != "UN" {
		return nil, fmt.Errorf("%w: only uncompressed stream clone bundles are supported; got %q", ErrUnsupportedPart, c)
	}
	fc := binary.BigEndian.Uint64(h[2:])
	bc := binary.BigEndian.Uint64(h[10:])
	if fc > math.MaxInt64 || bc > math.MaxInt64 {
		return nil, corruptf("packed1 counts out of range: %d files, %d bytes", fc, bc)
	}
	rl := binary.BigEndian.Uint16(h[18:])
	req := make([]byte, rl) // at most 64 KiB
	if err := readFull(br, req, "packed1 requirements", 24); err != nil {
		return nil, err
	}
	if len(req) == 0 || req[len(req)-1] != 0 {
		return nil, corruptf("malformed stream clone bundle: requirements not properly encoded")
	}
	return &Packed1Header{Files: int64(fc), Bytes: int64(bc),
		Requirements: splitRequirements(strings.TrimRight(string(req), "\x00"))}, nil
}

// readFull is io.ReadFull with an unexpected EOF turned into ErrCorrupt;
// off is the offset of buf in the bundle, for the message.
func readFull(r io.Reader, buf []byte, what string, off int64) error {
	_, err := io.ReadFull(r, buf)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return corruptf("stream ended unexpectedly reading %s at offset %d", what, off)
	}
	return fmt.Errorf("reading %s at offset %d: %w", what, off, err)
}

func (a *applier) applyPacked1(br *bufio.Reader) error {
	var magic [4]byte
	if err := readFull(br, magic[:], "packed1 magic", 0); err != nil {
		return err
	}
	if string(magic[:]) != packed1Magic {
		return corruptf("not a packed1 bundle: magic %q", magic[:])
	}
	h, err := readPacked1Header(br)
	if err != nil {
		return err
	}
	if err := a.setRequirements(h.Requirements); err != nil {
		return err
	}
	if err := a.v1Entries(br, h.Files, h.Bytes); err != nil {
		return err
	}
	// A bundle is a whole file: anything after the declared entries means
	// the counts lie.
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return fmt.Errorf("reading after the last file: %w", err)
		}
		return corruptf("data after the %d declared files of the packed1 bundle", h.Files)
	}
	return nil
}

// WritePacked1 writes a packed1 bundle of the store (what
// `hg debugcreatestreamclonebundle` writes).
func WritePacked1(ctx context.Context, st *store.Store, w io.Writer) error {
	entries, total, err := v1Snapshot(st)
	if err != nil {
		return err
	}
	reqs := strings.Join(streamedRequirements(st), ",")
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(packed1Magic + "UN")
	var h [18]byte
	binary.BigEndian.PutUint64(h[0:], uint64(len(entries)))
	binary.BigEndian.PutUint64(h[8:], uint64(total))
	binary.BigEndian.PutUint16(h[16:], uint16(len(reqs)+1))
	bw.Write(h[:])
	bw.WriteString(reqs + "\x00")
	if err := writeV1Entries(ctx, entries, bw); err != nil {
		return err
	}
	return bw.Flush()
}
