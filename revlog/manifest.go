package revlog

// Manifest text, version 1 (flat manifests), one line per file, sorted by
// path:
//
//	<path>\0<node, 40 hex>[<flag>]\n
//
// flag is "x" (executable), "l" (symlink), "t" (tree, in tree manifests)
// or absent. Keep in sync with mercurial/manifest.py (_lazymanifest).

import (
	"bytes"
	"encoding/hex"
	"fmt"
)

// ManifestEntry is one line of a manifest.
type ManifestEntry struct {
	Path  string
	Node  Node
	Flags string // "", "x", "l", "t"
}

// manifestError is ErrCorrupt at manifest line number line, or at a
// line whose number is not known (0).
func manifestError(line int, format string, args ...any) error {
	if line == 0 {
		return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: manifest line %d: %s", ErrCorrupt, line, fmt.Sprintf(format, args...))
}

// ParseManifest parses a flat manifest's raw text. Like hg it requires
// the text to end with a newline and paths to be in sorted order, each
// path once.
func ParseManifest(text []byte) ([]ManifestEntry, error) {
	if len(text) == 0 {
		return nil, nil
	}
	if text[len(text)-1] != '\n' {
		return nil, fmt.Errorf("%w: manifest did not end in a newline", ErrCorrupt)
	}
	entries := make([]ManifestEntry, 0, bytes.Count(text, []byte{'\n'}))
	var prev []byte
	for line := 1; len(text) > 0; line++ {
		nl := bytes.IndexByte(text, '\n')
		l := text[:nl]
		text = text[nl+1:]
		z := bytes.IndexByte(l, 0)
		if z < 0 {
			return nil, manifestError(line, "no NUL separator")
		}
		path := l[:z]
		// hg's C parser (manifest.c find_lines) refuses a path equal to
		// the one before it too; its pure Python one would take it.
		if line > 1 && bytes.Compare(path, prev) <= 0 {
			return nil, manifestError(line, "lines not in sorted order (%q after %q)", path, prev)
		}
		prev = path
		e, err := manifestLine(line, path, l[z+1:])
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// manifestLine is the entry of line number line (for errors), path and
// rest, what follows its NUL.
func manifestLine(line int, path, rest []byte) (ManifestEntry, error) {
	flags := ""
	if n := len(rest); n > 0 {
		switch rest[n-1] {
		case 'x', 'l', 't':
			flags = string(rest[n-1:])
			rest = rest[:n-1]
		}
	}
	if len(rest) != 2*NodeLen {
		return ManifestEntry{}, manifestError(line, "invalid manifest line: node of %d hex digits for %q", len(rest), path)
	}
	e := ManifestEntry{Path: string(path), Flags: flags}
	if _, err := hex.Decode(e.Node[:], rest); err != nil {
		return ManifestEntry{}, manifestError(line, "invalid node for %q: %v", path, err)
	}
	return e, nil
}

// FindManifestEntry finds path in a flat manifest's raw text by
// bisecting its sorted lines, as hg's manifest find does (manifest.py
// _msearch), without parsing the rest: finding .hgtags in every head's
// manifest for the tags parsed each whole (20 MB at 250,000 files).
// Only the lines it visits are checked; a malformed one is ErrCorrupt.
func FindManifestEntry(text []byte, path string) (ManifestEntry, bool, error) {
	if path == "" {
		return ManifestEntry{}, false, nil
	}
	// line is the line starting at start: its path and the rest, and
	// where the next one starts.
	line := func(start int) (name, rest []byte, next int, err error) {
		nl := bytes.IndexByte(text[start:], '\n')
		if nl < 0 {
			return nil, nil, 0, fmt.Errorf("%w: manifest did not end in a newline", ErrCorrupt)
		}
		l := text[start : start+nl]
		z := bytes.IndexByte(l, 0)
		if z < 0 {
			return nil, nil, 0, manifestError(0, "no NUL separator")
		}
		return l[:z], l[z+1:], start + nl + 1, nil
	}
	lo, hi := 0, len(text)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := bytes.LastIndexByte(text[:mid], '\n') + 1 // the line holding mid
		name, _, next, err := line(start)
		if err != nil {
			return ManifestEntry{}, false, err
		}
		if string(name) < path {
			lo = next
		} else {
			hi = start
		}
	}
	if lo >= len(text) {
		return ManifestEntry{}, false, nil
	}
	name, rest, _, err := line(lo)
	if err != nil || string(name) != path {
		return ManifestEntry{}, false, err
	}
	e, err := manifestLine(0, name, rest)
	if err != nil {
		return ManifestEntry{}, false, err
	}
	return e, true, nil
}
