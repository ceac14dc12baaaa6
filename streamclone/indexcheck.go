package streamclone

import (
	"encoding/binary"
	"fmt"
)

// indexCheck follows the changelog's or root manifest's index as its
// bytes stream by, and refuses what Mercurial refuses when it loads the
// two right after applying a stream (nodemap.post_stream_cleanup, every
// clone without persistent-nodemap): an unknown revlog version or flags,
// and an index its C parser (parse_index2) calls corrupt. A stream
// carries no checksum, so this is the only check hg makes of what it
// received; without it hgfs reported success for clones that hg then
// refused to open.
//
// The check is structural, exactly hg's: a version-1 index without
// inline data must be whole 64-byte entries; with inline data, entries
// and their chunks (each entry's 32-bit compressed length, bytes 8-12)
// must tile the file to its last byte. Version 0 indexes are parsed by
// hg's Python, which refuses nothing here; the experimental versions'
// files are dockets, checked where hg reads them.
type indexCheck struct {
	display string // "00changelog" or "00manifest", as hg names them
	n       int64  // bytes seen so far
	word    [4]byte
	inline  bool
	skip    bool // not a version-1 index: hg's other checks apply

	next int64   // inline: offset of the next entry
	lenb [4]byte // inline: the next entry's compressed length, gathering
	err  error
}

const (
	indexEntrySize     = 64
	revlogV0, revlogV1 = 0, 1
	revlogV2           = 0xDEAD        // experimental, behind exp-revlogv2.2
	changelogV2        = 0xD34D        // experimental, behind exp-changelog-v2
	revlogV1Flags      = 1<<16 | 1<<17 // inline data, generaldelta
)

// indexChecked names the store files indexCheck follows.
func indexChecked(name string) (display string, ok bool) {
	switch name {
	case "00changelog.i", "00manifest.i":
		return name[:len(name)-2], true
	}
	return "", false
}

// Write takes the next bytes of the file; it never fails (the result is
// for done).
func (c *indexCheck) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.err == nil && !c.skip {
		if c.n < 4 {
			k := copy(c.word[c.n:], p)
			c.n += int64(k)
			p = p[k:]
			if c.n == 4 {
				c.header()
			}
			continue
		}
		if !c.inline {
			c.n += int64(len(p))
			break
		}
		start := c.n
		c.n += int64(len(p))
		c.collect(p, start)
		p = nil
	}
	return n, nil
}

// collect takes the part of b (the file's bytes from offset start) that
// holds inline entries' compressed lengths, and moves next past each
// entry whose length is complete.
func (c *indexCheck) collect(b []byte, start int64) {
	end := start + int64(len(b))
	for {
		field := c.next + 8 // the compressed length: bytes 8-12 of the entry
		if field >= end {
			return
		}
		for i := int64(0); i < 4; i++ {
			if pos := field + i; pos >= start && pos < end {
				c.lenb[i] = b[pos-start]
			}
		}
		if field+4 > end {
			return // the rest comes with the next write
		}
		c.next += indexEntrySize + int64(binary.BigEndian.Uint32(c.lenb[:]))
	}
}

// header reads the version word as hg's revlog._loadindex does.
func (c *indexCheck) header() {
	word := binary.BigEndian.Uint32(c.word[:])
	version, flags := word&0xFFFF, word&^0xFFFF
	switch version {
	case revlogV0:
		if flags != 0 {
			c.err = corruptf("unknown flags (%s) in version %d revlog %s", hex04(flags>>16), version, c.display)
		}
		c.skip = true
	case revlogV1:
		if flags&^revlogV1Flags != 0 {
			c.err = corruptf("unknown flags (%s) in version %d revlog %s", hex04(flags>>16), version, c.display)
		}
		c.inline = flags&(1<<16) != 0
	case revlogV2, changelogV2:
		c.skip = true // a docket: the index proper is another file
	default:
		c.err = corruptf("unknown version (%d) in revlog %s", version, c.display)
	}
}

// done reports whether the whole file, size bytes, is an index hg loads.
func (c *indexCheck) done(size int64) error {
	switch {
	case c.err != nil:
		return c.err
	case c.skip || size == 0:
		return nil
	case c.n != size:
		return fmt.Errorf("streamclone: index check of %s saw %d of %d bytes", c.display, c.n, size)
	case !c.inline && size%indexEntrySize != 0,
		c.inline && c.next != size:
		return corruptf("index %s is corrupted", c.display)
	}
	return nil
}

// hex04 formats v as Python's "%#04x" (hg's message for unknown flags).
func hex04(v uint32) string {
	s := fmt.Sprintf("%#x", v)
	for len(s) < 4 {
		s = s[:2] + "0" + s[2:]
	}
	return s
}
