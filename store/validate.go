package store

import (
	"fmt"
	"strings"
)

// ValidateName checks an untrusted store path, as a stream names a
// file (unencoded, or EncodeDir'd on a v1 stream), before anything is
// created from it. It must be relative and slash separated, with no
// empty, "." or ".." component, no NUL, '\n', '\r' or backslash, and not
// start with a Windows drive ("c:"). The error wraps ErrBadStoreName and
// quotes the name.
//
// Mercurial's encodings escape every other byte a filesystem could
// misread (':' becomes "~3a" in store layouts), but the basic layout
// writes EncodeDir names straight under .hg: use ValidateStreamName to
// also restrict names to the files a stream may carry.
func ValidateName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrBadStoreName, name, why)
	}
	switch {
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w %q...: %d bytes, more than Mercurial can store (%d)", ErrBadStoreName, name[:64], len(name), MaxNameLen)
	case name == "":
		return bad("empty")
	case name[0] == '/':
		return bad("absolute path")
	case len(name) >= 2 && name[1] == ':' && isASCIILetter(name[0]):
		return bad("Windows drive path")
	}
	if i := strings.IndexAny(name, "\x00\n\r\\"); i >= 0 {
		return bad(fmt.Sprintf("forbidden byte %#02x at offset %d", name[i], i))
	}
	for c := range strings.SplitSeq(name, "/") {
		switch c {
		case "":
			return bad("empty path component")
		case ".", "..":
			return bad(fmt.Sprintf("%q path component", c))
		}
	}
	return nil
}

// MaxNameLen is the longest store name Mercurial can use: its C fncache
// encoder (cext/pathencode.c hashencode, which hg 6.3 uses when its C
// extensions are built, as Debian's are) raises "string too long" above
// it, whatever the bytes, so hg cannot open, verify or clone a store
// holding a longer name. Without fncache the operating system's path
// limit (4096 bytes on Linux) stops such names sooner. Measured with
// hg 6.3's parsers.pathencode: 5465 bytes pass, 5466 fail.
const MaxNameLen = 5465

func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// ValidateStreamName is ValidateName plus the shape of what hg's
// stream generators send for the store: a revlog file (store.py
// revlog_type) under data/ or meta/ or at the top of the store, or
// "phaseroots" or "obsstore". It keeps a hostile stream from writing
// .hg/hgrc, requires or fncache through a store rooted at .hg.
func ValidateStreamName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if name == "phaseroots" || name == "obsstore" {
		return nil
	}
	if !IsRevlogFile(name) {
		return fmt.Errorf("%w %q: not a revlog, phaseroots or obsstore file", ErrBadStoreName, name)
	}
	if strings.Contains(name, "/") && !InFncache(name) {
		return fmt.Errorf("%w %q: revlog outside data/ and meta/", ErrBadStoreName, name)
	}
	return nil
}

// ValidateCacheName checks an untrusted .hg/cache file name from a v2
// stream: a valid store name of one component. It does not insist on
// CacheFileNames, because newer Mercurial servers send other caches.
func ValidateCacheName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("%w %q: cache file in a subdirectory", ErrBadStoreName, name)
	}
	return nil
}
