package store

// The fncache file (.hg/store/fncache) lists every data/ and meta/ revlog
// file of a fncache store, because hashed names cannot be decoded back.
// Format (store.py fncache): unencoded store paths, each followed by
// "\n", the whole file passed through EncodeDir. Plain text, not
// compressed; hg writes entries in set order (unordered) and appends new
// ones at the end, so duplicates are tolerated on reading.

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// readFncacheFS reads and parses the fncache file name in fsys; a
// missing file has no entries. label names the file in errors.
func readFncacheFS(fsys fs.FS, name, label string) ([]string, error) {
	data, err := fs.ReadFile(fsys, name)
	return parseFncacheFile(data, err, label)
}

func parseFncacheFile(data []byte, err error, path string) ([]string, error) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := ParseFncache(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// ParseFncache parses fncache contents into sorted, unique, unencoded
// store paths. Like hg it fails when the file does not end with a newline
// ("use 'hg debugrebuildfncache' to rebuild the fncache") or has an empty
// line. Lines are split as Python's bytes.splitlines does.
func ParseFncache(data []byte) ([]string, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%w: fncache does not ends with a newline", ErrCorruptFncache)
	}
	lines := splitLines(DecodeDir(string(data)))
	for i, l := range lines {
		if l == "" {
			// hg numbers the line as it reads it from the file, where
			// only "\n" ends a line; with "\r" the count is ours.
			return nil, fmt.Errorf("%w: invalid entry in fncache, line %d", ErrCorruptFncache, i+1)
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// FormatFncache is the fncache content hg would write for entries:
// EncodeDir of the entries joined by "\n" with a final "\n" (empty for no
// entries). Entries are written sorted, so the output is deterministic.
func FormatFncache(entries []string) []byte {
	if len(entries) == 0 {
		return nil
	}
	e := slices.Clone(entries)
	slices.Sort(e)
	e = slices.Compact(e)
	return []byte(EncodeDir(strings.Join(e, "\n") + "\n"))
}

// InFncache reports whether an unencoded store path belongs in the
// fncache: hg adds every file opened for writing under data/ or meta/.
func InFncache(name string) bool {
	return strings.HasPrefix(name, "data/") || strings.HasPrefix(name, "meta/")
}
