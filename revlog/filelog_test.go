package revlog

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestParseFileMeta(t *testing.T) {
	meta, body, err := ParseFileMeta([]byte("\x01\ncopy: a.txt\ncopyrev: 0123456789abcdef0123456789abcdef01234567\n\x01\ncontent"))
	if err != nil || meta["copy"] != "a.txt" || meta["copyrev"] != "0123456789abcdef0123456789abcdef01234567" || string(body) != "content" {
		t.Errorf("copy meta: %q %q %v", meta, body, err)
	}
	// Empty header protecting content that starts with \x01\n.
	meta, body, err = ParseFileMeta([]byte("\x01\n\x01\n\x01\nreal"))
	if err != nil || len(meta) != 0 || meta == nil || string(body) != "\x01\nreal" {
		t.Errorf("escaped content: %q %q %v", meta, body, err)
	}
	meta, body, err = ParseFileMeta([]byte("plain"))
	if err != nil || meta != nil || string(body) != "plain" {
		t.Errorf("plain: %q %q %v", meta, body, err)
	}
	// \r\n and \r end lines too (Python splitlines); values may hold ": ".
	meta, _, err = ParseFileMeta([]byte("\x01\na: b: c\r\nd: e\rf: g\n\x01\n"))
	if err != nil || meta["a"] != "b: c" || meta["d"] != "e" || meta["f"] != "g" {
		t.Errorf("line endings: %q %v", meta, err)
	}
	for _, bad := range []string{"\x01\nno end", "\x01\nnocolon\n\x01\n", "\x01\na: b\n\n\x01\n"} {
		if _, _, err := ParseFileMeta([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestFileMetaFromRevlog reads file revisions with and without a copy
// header and splits them as repo.FileContent does.
func TestFileMetaFromRevlog(t *testing.T) {
	revs := []buildRev{
		{text: []byte("orig\n"), p1: -1, p2: -1, base: -2, comp: 'u'},
		{text: []byte("\x01\ncopy: old\ncopyrev: 0123456789abcdef0123456789abcdef01234567\n\x01\nnew\n"), p1: -1, p2: -1, base: -2, comp: 'x'},
	}
	fl := build(t, revs, true, true).open(t)
	read := func(rev int) (map[string]string, []byte, error) {
		text, err := fl.Revision(rev)
		if err != nil {
			return nil, nil, err
		}
		return ParseFileMeta(text)
	}
	meta, body, err := read(0)
	if err != nil || string(body) != "orig\n" || meta["copy"] != "" || meta != nil {
		t.Errorf("rev 0: %q %q %v", meta, body, err)
	}
	meta, body, err = read(1)
	if err != nil || string(body) != "new\n" || meta["copy"] != "old" || meta["copyrev"] != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("rev 1: %q %q %v", meta, body, err)
	}
	if len(body) != 4 {
		t.Errorf("rev 1: %d bytes of content", len(body))
	}
}

func FuzzFileMeta(f *testing.F) {
	f.Add([]byte("\x01\ncopy: a\ncopyrev: 0123456789abcdef0123456789abcdef01234567\n\x01\nbody"))
	f.Add([]byte("\x01\n\x01\n"))
	f.Add([]byte("\x01\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		meta, body, err := ParseFileMeta(text)
		if err != nil {
			return
		}
		if meta == nil && string(body) != string(text) {
			t.Fatal("body changed without metadata")
		}
		if len(body) > len(text) {
			t.Fatal("body longer than text")
		}
	})
}

// TestSnapshotFileSize: a snapshot's content length, less its metadata
// header (copy metadata, or the escape of content starting with the
// marker), in each compression; deltas and flagged revisions are not
// sized; a snapshot whose length disagrees with the index is not
// either.
func TestSnapshotFileSize(t *testing.T) {
	plain := []byte("plain content\n")
	copied := []byte("\x01\ncopy: a\ncopyrev: 0123456789012345678901234567890123456789\n\x01\nbody\n")
	escaped := []byte("\x01\n\x01\n\x01\nstarts with the marker\n")
	for _, comp := range []byte{'u', 'x', '('} {
		b := build(t, []buildRev{
			{text: plain, p1: -1, p2: -1, base: -2, comp: comp},
			{text: copied, p1: -1, p2: -1, base: -2, comp: comp},
			{text: escaped, p1: -1, p2: -1, base: -2, comp: comp},
			{text: append(plain, "more\n"...), p1: 0, p2: -1, base: 0, comp: comp},
			{text: plain, p1: -1, p2: -1, base: -2, comp: comp, flags: FlagExtStored},
			{text: []byte{}, p1: -1, p2: -1, base: -2, comp: comp},
		}, true, true)
		r, err := FromBytes("data/f.i", b.index, nil)
		if err != nil {
			t.Fatal(err)
		}
		for rev, want := range []struct {
			size int64
			ok   bool
		}{{14, true}, {5, true}, {25, true}, {0, false}, {0, false}, {0, true}} {
			n, ok, err := r.SnapshotFileSize(rev)
			if err != nil || n != want.size || ok != want.ok {
				t.Errorf("%q rev %d: %d, %v, %v; want %d, %v", comp, rev, n, ok, err, want.size, want.ok)
			}
		}
	}
	// The index's raw length one more than the chunk's text.
	b := build(t, []buildRev{{text: plain, p1: -1, p2: -1, base: -2, comp: 'u'}}, true, true)
	binary.BigEndian.PutUint32(b.index[12:16], uint32(len(plain)+1))
	r, err := FromBytes("data/f.i", b.index, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok, err := r.SnapshotFileSize(0); ok || err != nil {
		t.Errorf("length disagreeing with the index: %d, %v, %v", n, ok, err)
	}
}
