package streamclone

// Stream clone v2: the payload of the bundle2 part "stream2"
// (mercurial/streamclone.py generatev2 / consumev2). Mandatory part
// parameters: requirements (URL-quoted, comma-separated), filecount,
// bytecount. Payload, per file:
//
//	source    1 byte: 's' store (.hg/store, name unencoded) or 'c' cache
//	          (.hg/cache)
//	namelen   uvarint (LEB128)
//	datalen   uvarint
//	name      namelen bytes
//	data      datalen bytes

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"slices"

	"github.com/hgfs/hgfs/bundle2"
)

// applyStream2 applies a stream2 part.
func (a *applier) applyStream2(p *bundle2.Part) error {
	get := func(k string) (string, error) {
		v, ok := p.Param(k)
		if !ok {
			return "", corruptf("stream2 part lacks the %q parameter", k)
		}
		return v, nil
	}
	rq, err := get("requirements")
	if err != nil {
		return err
	}
	fcs, err := get("filecount")
	if err != nil {
		return err
	}
	bcs, err := get("bytecount")
	if err != nil {
		return err
	}
	filecount, err := parseCount(fcs, "stream2 filecount")
	if err != nil {
		return err
	}
	bytecount, err := parseCount(bcs, "stream2 bytecount")
	if err != nil {
		return err
	}
	if err := a.setRequirements(splitRequirements(bundle2.Unquote(rq))); err != nil {
		return err
	}
	a.expect(filecount, bytecount)
	br := bufio.NewReaderSize(p, 64<<10)
	var total int64
	var name []byte // reused: storeFile and cacheFile keep what they need
	for i := int64(0); i < filecount; i++ {
		if err := a.ctx.Err(); err != nil {
			return err
		}
		src, err := br.ReadByte()
		if err != nil {
			return v2EOF(err, i, filecount)
		}
		namelen, err := binary.ReadUvarint(br)
		if err != nil {
			return v2EOF(err, i, filecount)
		}
		datalen, err := binary.ReadUvarint(br)
		if err != nil {
			return v2EOF(err, i, filecount)
		}
		if namelen > maxNameLen {
			return corruptf("stream2 file %d: name length %d exceeds %d", i+1, namelen, maxNameLen)
		}
		if datalen > uint64(bytecount-total) {
			return corruptf("stream2 file %d: size %d exceeds the declared total of %d bytes (%d left)", i+1, datalen, bytecount, bytecount-total)
		}
		name = slices.Grow(name[:0], int(namelen))[:namelen]
		if _, err := io.ReadFull(br, name); err != nil {
			return v2EOF(err, i, filecount)
		}
		size := int64(datalen)
		switch src {
		case srcStore:
			err = a.storeFile(string(name), size, br)
		case srcCache:
			err = a.cacheFile(string(name), size, br)
		default:
			err = corruptf("stream2 file %d (%q): unknown source %q", i+1, name, src)
		}
		if err != nil {
			return err
		}
		total += size
	}
	if total != bytecount {
		return corruptf("stream2 declared %d bytes but its %d files hold %d", bytecount, filecount, total)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return err
		}
		return corruptf("stream2 part has data after its %d declared files", filecount)
	}
	return nil
}

func v2EOF(err error, i, n int64) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corruptf("stream ended unexpectedly in stream2 file entry %d of %d", i+1, n)
	}
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrRemote) || errors.Is(err, ErrUnsupportedPart) ||
		errors.Is(err, bundle2.ErrMalformed) || errors.Is(err, bundle2.ErrRemote) || errors.Is(err, bundle2.ErrUnsupported) {
		return err // bundle2Error classifies the bundle2 layer's
	}
	return corruptf("stream2 file entry %d of %d: %v", i+1, n, err)
}
