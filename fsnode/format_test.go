package fsnode

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

func TestInodeRoundTrip(t *testing.T) {
	d := diskInode{Mode: syscall.S_IFREG | 0o644, Nlink: 3, Uid: 1000, Gid: 100, Size: 12345,
		Atime: 1, Mtime: -2, Ctime: 3 << 40, Parent: 0, Flags: flagInline}
	b := encodeInode(&d)
	got, err := decodeInode(b)
	if err != nil || got != d {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, b[:10], append(bytes.Clone(b), 0)} {
		if _, err := decodeInode(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeInode(%d bytes) = %v, want ErrCorrupt", len(bad), err)
		}
	}
	bad := bytes.Clone(b)
	bad[1] = 0x20 // unknown mode bits
	if _, err := decodeInode(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad mode accepted")
	}
}

func TestExtentsValidation(t *testing.T) {
	good := []extent{{0, 1, 0, 10}, {10, 2, 5, 5}, {100, 1, 10, 1}}
	got, err := decodeExtents(encodeExtents(good))
	if err != nil || len(got) != 3 || got[2] != good[2] {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for name, exts := range map[string][]extent{
		"overlap":    {{0, 1, 0, 10}, {5, 1, 20, 10}},
		"zero len":   {{0, 1, 0, 0}},
		"file 0":     {{0, 0, 0, 1}},
		"huge":       {{maxFileSize, 1, 0, 1}},
		"neg offset": {{0, 1, -1, 1}},
	} {
		if _, err := decodeExtents(encodeExtents(exts)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// A count claiming 2^32-1 extents in a short record must not allocate.
	if _, err := decodeExtents([]byte{0xff, 0xff, 0xff, 0xff, 1}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("lying count: %v", err)
	}
}

func TestPutExtent(t *testing.T) {
	var exts []extent
	exts = putExtent(exts, extent{0, 1, 0, 10})
	exts = putExtent(exts, extent{10, 1, 10, 5}) // contiguous: merged
	if len(exts) != 1 || exts[0].Len != 15 {
		t.Fatalf("merge: %v", exts)
	}
	exts = putExtent(exts, extent{5, 2, 100, 3}) // splits
	want := []extent{{0, 1, 0, 5}, {5, 2, 100, 3}, {8, 1, 8, 7}}
	if len(exts) != 3 || exts[0] != want[0] || exts[1] != want[1] || exts[2] != want[2] {
		t.Fatalf("split: %v", exts)
	}
	exts = putExtent(exts, extent{0, 3, 0, 20}) // covers all
	if len(exts) != 1 || exts[0] != (extent{0, 3, 0, 20}) {
		t.Fatalf("cover: %v", exts)
	}
	if got := cutExtents([]extent{{0, 1, 0, 10}, {20, 1, 50, 10}}, 25); len(got) != 2 || got[1].Len != 5 {
		t.Fatalf("cut: %v", got)
	}
}

func FuzzDecodeInode(f *testing.F) {
	f.Add(encodeInode(&diskInode{Mode: syscall.S_IFDIR | 0o755, Nlink: 2, Parent: 1}))
	f.Add(encodeInode(&diskInode{Mode: syscall.S_IFREG | 0o600, Nlink: 1, Size: 4096, Flags: flagInline}))
	f.Add(encodeInode(&diskInode{Mode: syscall.S_IFLNK | 0o777, Nlink: 1, Size: 11}))
	f.Add([]byte{})
	f.Add(make([]byte, inodeRecordLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeInode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(encodeInode(&d), b) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzDecodeExtents(f *testing.F) {
	f.Add(encodeExtents(nil))
	f.Add(encodeExtents([]extent{{0, 1, 0, 10}, {4096, 2, 7, 1 << 20}}))
	f.Add([]byte{0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		exts, err := decodeExtents(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(encodeExtents(exts), b) {
			t.Fatalf("re-encoding differs")
		}
		var prev int64
		for _, e := range exts {
			if e.Off < prev || e.Len <= 0 || e.end() > maxFileSize {
				t.Fatalf("invalid extent accepted: %+v", e)
			}
			prev = e.end()
		}
	})
}

func FuzzDecodeDirent(f *testing.F) {
	f.Add(direntKey(1, "00changelog.i"), encodeDirent(diskDirent{Child: 2, Seq: 3, Type: syscall.S_IFREG}))
	f.Add(direntKey(7, "data"), encodeDirent(diskDirent{Child: 9, Seq: 99, Type: syscall.S_IFDIR}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, '.', '.'}, []byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 'a', '/', 'b'}, make([]byte, direntValueLen))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		parent, name, err := decodeDirentKey(k)
		if err == nil {
			if !bytes.Equal(direntKey(parent, name), k) {
				t.Fatalf("key re-encoding differs")
			}
			if checkName(name) != nil || name == "." || name == ".." {
				t.Fatalf("invalid name %q accepted", name)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("key error %v is not ErrCorrupt", err)
		}
		d, err := decodeDirent(v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(encodeDirent(d), v) {
			t.Fatalf("value re-encoding differs")
		}
	})
}
