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
