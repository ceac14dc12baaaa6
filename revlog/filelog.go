package revlog

// File revision metadata. A file revision whose text starts with "\x01\n"
// carries a header of "key: value" lines ended by another "\x01\n":
//
//	\x01\n
//	copy: <source path>\n
//	copyrev: <source file node, 40 hex>\n
//	\x01\n
//	<file content>
//
// Content that itself starts with "\x01\n" is stored behind an empty
// header. Censored revisions carry a "censored" key. Keep in sync with
// mercurial/utils/storageutil.py parsemeta and mercurial/filelog.py.

import (
	"bytes"
	"fmt"
)

var metaMarker = []byte("\x01\n")

// ParseFileMeta splits a file revision's raw text into its metadata and
// content. Without a header meta is nil and body is text.
func ParseFileMeta(text []byte) (meta map[string]string, body []byte, err error) {
	if !bytes.HasPrefix(text, metaMarker) {
		return nil, text, nil
	}
	end := bytes.Index(text[2:], metaMarker)
	if end < 0 {
		return nil, nil, fmt.Errorf("%w: file metadata header is not terminated", ErrCorrupt)
	}
	end += 2
	meta = map[string]string{}
	for _, l := range SplitLines(text[2:end]) {
		k, v, ok := bytes.Cut(l, []byte(": "))
		if !ok {
			return nil, nil, fmt.Errorf("%w: file metadata line %q has no \": \"", ErrCorrupt, l)
		}
		meta[string(k)] = string(v)
	}
	return meta, text[end+2:], nil
}

// SplitLines is Python's bytes.splitlines: \n, \r and \r\n end lines, and
// a final line ending does not start an empty line.
func SplitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return lines
}

// SnapshotFileSize is the length of filelog revision rev's content (its
// text less any metadata header, as ParseFileMeta splits it) when rev is
// stored as a full snapshot without flags: its chunk decompressed,
// without the hash check Revision makes (a reader of the content checks
// it then). ok is false for any other revision (a delta, a flagged or
// censored revision, a snapshot whose length disagrees with the index),
// whose size only its rebuilt text gives (hg's filelog.size rebuilds
// those with copy metadata). It is the least work that sizes a file
// exactly (make bench's checkout floor): the index's raw length is the
// content's only without a header, and a snapshot's first bytes say
// whether it has one.
func (r *Revlog) SnapshotFileSize(rev int) (size int64, ok bool, err error) {
	if err := r.checkRev(rev); err != nil {
		return 0, false, err
	}
	e := &r.entries[rev]
	if int(e.base) != rev || uint16(e.offsetFlags) != 0 || e.rawLen < 0 {
		return 0, false, nil
	}
	text, err := r.rawChunk(rev)
	if err != nil {
		return 0, false, err
	}
	if int64(len(text)) != int64(e.rawLen) {
		return 0, false, nil
	}
	_, body, err := ParseFileMeta(text)
	if err != nil {
		return 0, false, err
	}
	return int64(len(body)), true, nil
}
