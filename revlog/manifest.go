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

func manifestError(line int, format string, args ...any) error {
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
		path, rest := l[:z], l[z+1:]
		// hg's C parser (manifest.c find_lines) refuses a path equal to
		// the one before it too; its pure Python one would take it.
		if line > 1 && bytes.Compare(path, prev) <= 0 {
			return nil, manifestError(line, "lines not in sorted order (%q after %q)", path, prev)
		}
		prev = path
		flags := ""
		if n := len(rest); n > 0 {
			switch rest[n-1] {
			case 'x', 'l', 't':
				flags = string(rest[n-1:])
				rest = rest[:n-1]
			}
		}
		if len(rest) != 2*NodeLen {
			return nil, manifestError(line, "invalid manifest line: node of %d hex digits for %q", len(rest), path)
		}
		e := ManifestEntry{Path: string(path), Flags: flags}
		if _, err := hex.Decode(e.Node[:], rest); err != nil {
			return nil, manifestError(line, "invalid node for %q: %v", path, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}
