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
	"io/fs"
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
	for _, l := range splitLines(text[2:end]) {
		k, v, ok := bytes.Cut(l, []byte(": "))
		if !ok {
			return nil, nil, fmt.Errorf("%w: file metadata line %q has no \": \"", ErrCorrupt, l)
		}
		meta[string(k)] = string(v)
	}
	return meta, text[end+2:], nil
}

// splitLines is Python's bytes.splitlines: \n, \r and \r\n end lines, and
// a final line ending does not start an empty line.
func splitLines(b []byte) [][]byte {
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

// FileRevision is a file revision's content and copy information.
type FileRevision struct {
	Meta     map[string]string // nil without a metadata header
	Data     []byte            // the file content; shares memory with the revlog's cache: do not modify
	CopyFrom string            // meta["copy"]: the path this revision was copied from, "" if none
	CopyRev  Node              // meta["copyrev"]
}

// Filelog is a file's revlog (data/<path>.i), a thin typed wrapper.
type Filelog struct{ *Revlog }

// OpenFilelog opens a filelog by its on-disk (encoded) index name.
func OpenFilelog(fsys fs.FS, name string) (*Filelog, error) {
	r, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	return &Filelog{r}, nil
}

// Read returns rev's content and metadata, hash checked.
func (f *Filelog) Read(rev int) (*FileRevision, error) {
	text, err := f.Revision(rev)
	if err != nil {
		return nil, err
	}
	meta, body, err := ParseFileMeta(text)
	if err != nil {
		return nil, fmt.Errorf("%s rev %d: %w", f.Name(), rev, err)
	}
	fr := &FileRevision{Meta: meta, Data: body, CopyFrom: meta["copy"]}
	if fr.CopyFrom != "" {
		if fr.CopyRev, err = ParseNode(meta["copyrev"]); err != nil {
			return nil, fmt.Errorf("%w: %s rev %d: copyrev: %v", ErrCorrupt, f.Name(), rev, err)
		}
	}
	return fr, nil
}

// Size returns the length of rev's content (without metadata), as hg's
// filelog.size does.
func (f *Filelog) Size(rev int) (int, error) {
	fr, err := f.Read(rev)
	if err != nil {
		return 0, err
	}
	return len(fr.Data), nil
}
