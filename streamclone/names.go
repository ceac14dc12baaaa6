package streamclone

// File names in a stream are untrusted. A stream names store files in
// Mercurial's internal, unencoded form ("data/Foo.txt.i"; v1 additionally
// applies encodedir) and cache files by their name under .hg/cache. The
// applier validates each name, encodes it for the destination layout and
// prefixes it, so a Sink only ever sees names under ".hg/store/" or
// ".hg/cache/" (plus the few files the applier writes itself).

import (
	"fmt"
	"path"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// maxNameLen bounds a name read from a stream (its allocation); real
// store names are a few hundred bytes at most.
const maxNameLen = 64 << 10

// layout is the destination store's filename encoding.
type layout struct {
	fncache, dotencode bool
	// noStore: the store is .hg itself (a repository without the "store"
	// requirement, which only a local clone of one makes): names are
	// encoded as basicstore encodes them (directories only).
	noStore bool
}

func (l layout) encode(name string) string {
	if l.noStore {
		return store.EncodeDir(name)
	}
	if l.fncache {
		return store.HybridEncode(name, l.dotencode)
	}
	return store.EncodeFilename(name)
}

// checkRelative is the applier's own check of a slash-separated relative
// path, independent of the store package's: non-empty, not absolute, no
// empty, "." or ".." components, no NUL, CR, LF or backslash.
func checkRelative(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrUnsafeName)
	}
	if strings.ContainsAny(name, "\x00\r\n\\") {
		return fmt.Errorf("%w: %q contains NUL, CR, LF or backslash", ErrUnsafeName, name)
	}
	if strings.HasPrefix(name, "/") || len(name) >= 2 && name[1] == ':' {
		return fmt.Errorf("%w: %q is absolute", ErrUnsafeName, name)
	}
	// Component by component without splitting: this runs twice for
	// every file of a clone.
	for rest := name; ; {
		c, after, more := strings.Cut(rest, "/")
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%w: %q has an empty, \".\" or \"..\" component", ErrUnsafeName, name)
		}
		if !more {
			return nil
		}
		rest = after
	}
}

// reservedStoreName reports top-level store files the applier writes
// itself or that would make the clone look locked or mid-transaction.
func reservedStoreName(name string) bool {
	if strings.Contains(name, "/") {
		return false
	}
	switch name {
	case "requires", "fncache", "lock":
		return true
	}
	return strings.HasPrefix(name, "undo") || strings.HasPrefix(name, "journal")
}

// storeSinkName maps an unencoded store name from a stream to the sink
// name of its file in the destination.
func (l layout) storeSinkName(name string) (string, error) {
	if err := checkRelative(name); err != nil {
		return "", fmt.Errorf("%w: store file: %w", ErrCorrupt, err)
	}
	// Only the files hg's generators send: revlogs under data/, meta/ or
	// at the top, phaseroots, obsstore.
	if err := store.ValidateStreamName(name); err != nil {
		return "", fmt.Errorf("%w: store file: %w: %w", ErrCorrupt, ErrUnsafeName, err)
	}
	if reservedStoreName(name) {
		return "", fmt.Errorf("%w: %w: store file %q is reserved", ErrCorrupt, ErrUnsafeName, name)
	}
	enc := l.encode(name)
	if err := checkRelative(enc); err != nil || path.Clean(enc) != enc {
		return "", fmt.Errorf("%w: %w: store file %q encodes to %q", ErrCorrupt, ErrUnsafeName, name, enc)
	}
	return l.storeDir() + enc, nil
}

// storeDir is the sink directory of store files.
func (l layout) storeDir() string {
	if l.noStore {
		return ".hg/"
	}
	return ".hg/store/"
}

// cacheSinkName maps a cache file name from a v2 stream.
func cacheSinkName(name string) (string, error) {
	if err := checkRelative(name); err != nil {
		return "", fmt.Errorf("%w: cache file: %w", ErrCorrupt, err)
	}
	if err := store.ValidateCacheName(name); err != nil {
		return "", fmt.Errorf("%w: cache file: %w: %w", ErrCorrupt, ErrUnsafeName, err)
	}
	return ".hg/cache/" + name, nil
}

// isNodemapFile reports the persistent-nodemap files of the changelog and
// manifest (docket "00changelog.n", data "00changelog-<uid>.nd"), which hg
// deletes after a stream clone when the clone lacks persistent-nodemap
// (revlogutils/nodemap.py post_stream_cleanup).
func isNodemapFile(name string) bool {
	for _, rl := range []string{"00changelog", "00manifest"} {
		if name == rl+".n" || strings.HasPrefix(name, rl+"-") && strings.HasSuffix(name, ".nd") && !strings.Contains(name, "/") {
			return true
		}
	}
	return false
}
