package revlog

import (
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

func TestFilelogRead(t *testing.T) {
	revs := []buildRev{
		{text: []byte("orig\n"), p1: -1, p2: -1, base: -2, comp: 'u'},
		{text: []byte("\x01\ncopy: old\ncopyrev: 0123456789abcdef0123456789abcdef01234567\n\x01\nnew\n"), p1: -1, p2: -1, base: -2, comp: 'x'},
		{text: []byte("\x01\ncopy: old\ncopyrev: zz\n\x01\nnew\n"), p1: 1, p2: -1, base: 1, comp: 'u'},
	}
	fl := &Filelog{build(t, revs, true, true).open(t)}
	fr, err := fl.Read(0)
	if err != nil || string(fr.Data) != "orig\n" || fr.CopyFrom != "" || fr.Meta != nil {
		t.Errorf("rev 0: %+v %v", fr, err)
	}
	fr, err = fl.Read(1)
	if err != nil || string(fr.Data) != "new\n" || fr.CopyFrom != "old" || fr.CopyRev.String() != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("rev 1: %+v %v", fr, err)
	}
	if n, err := fl.Size(1); err != nil || n != 4 {
		t.Errorf("Size(1) = %d %v", n, err)
	}
	if _, err := fl.Read(2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad copyrev: %v", err)
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
