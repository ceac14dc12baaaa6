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

// ext is a whole-run extent with CRC sum.
func ext(off int64, file uint32, foff, n int64, sum uint32) extent {
	return extent{Off: off, File: file, FileOff: foff, Len: n, Run: n, Sum: sum}
}

func TestExtentsValidation(t *testing.T) {
	piece := extent{Off: 100, File: 1, FileOff: 10, Len: 1, Head: 5, Run: 20, Sum: 7}
	good := []extent{ext(0, 1, 0, 10, 1), ext(10, 2, 5, 5, 2), piece}
	got, err := decodeExtents(encodeExtents(good))
	if err != nil || len(got) != 3 || got[2] != good[2] || got[0] != good[0] {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for name, exts := range map[string][]extent{
		"overlap":       {ext(0, 1, 0, 10, 0), ext(5, 1, 20, 10, 0)},
		"zero len":      {ext(0, 1, 0, 0, 0)},
		"file 0":        {ext(0, 0, 0, 1, 0)},
		"huge":          {ext(maxFileSize, 1, 0, 1, 0)},
		"neg offset":    {ext(0, 1, -1, 1, 0)},
		"run too long":  {ext(0, 1, 0, maxRunLen+1, 0)},
		"past run":      {{Off: 0, File: 1, FileOff: 10, Len: 10, Head: 5, Run: 10}},
		"run before 0":  {{Off: 0, File: 1, FileOff: 2, Len: 1, Head: 5, Run: 10}},
		"no run at all": {{Off: 0, File: 1, FileOff: 0, Len: 1}},
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
	data := []byte("0123456789abcdefghijklmnopqrst")
	sum := func(p []byte) uint32 { return checksum(p) }
	var exts []extent
	exts = putExtent(exts, ext(0, 1, 0, 10, sum(data[:10])))
	exts = putExtent(exts, ext(10, 1, 10, 5, sum(data[10:15]))) // contiguous: merged
	if len(exts) != 1 || exts[0] != ext(0, 1, 0, 15, sum(data[:15])) {
		t.Fatalf("merge: %+v", exts)
	}
	exts = putExtent(exts, ext(5, 2, 100, 3, 9)) // splits; the pieces keep the run
	want := []extent{
		{Off: 0, File: 1, FileOff: 0, Len: 5, Head: 0, Run: 15, Sum: sum(data[:15])},
		ext(5, 2, 100, 3, 9),
		{Off: 8, File: 1, FileOff: 8, Len: 7, Head: 8, Run: 15, Sum: sum(data[:15])},
	}
	if len(exts) != 3 || exts[0] != want[0] || exts[1] != want[1] || exts[2] != want[2] {
		t.Fatalf("split: %+v", exts)
	}
	// A piece is not whole: no merge with what follows it on disk.
	exts = putExtent(exts, ext(15, 1, 15, 5, sum(data[15:20])))
	if len(exts) != 4 {
		t.Fatalf("merge with a piece: %+v", exts)
	}
	exts = putExtent(exts, ext(0, 3, 0, 20, 5)) // covers all
	if len(exts) != 1 || exts[0] != ext(0, 3, 0, 20, 5) {
		t.Fatalf("cover: %+v", exts)
	}
	// No merge past maxRunLen.
	exts = putExtent(nil, ext(0, 1, 0, maxRunLen-1, 1))
	if exts = putExtent(exts, ext(maxRunLen-1, 1, maxRunLen-1, 2, 2)); len(exts) != 2 {
		t.Fatalf("merged past maxRunLen: %+v", exts)
	}
	got := cutExtents([]extent{ext(0, 1, 0, 10, 1), ext(20, 1, 50, 10, 2)}, 25)
	if len(got) != 2 || got[1].Len != 5 || got[1].Run != 10 || got[1].Head != 0 || got[1].Sum != 2 {
		t.Fatalf("cut: %+v", got)
	}
}

func TestCRC32Combine(t *testing.T) {
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	for _, cut := range []int{0, 1, 7, 4096, 65537, 1 << 20, len(data) - 1, len(data)} {
		a, b := data[:cut], data[cut:]
		if got, want := crc32Combine(checksum(a), checksum(b), int64(len(b))), checksum(data); got != want {
			t.Errorf("cut at %d: combine %08x, want %08x", cut, got, want)
		}
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
	f.Add(encodeExtents([]extent{ext(0, 1, 0, 10, 1), ext(4096, 2, 7, maxRunLen, 2)}))
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
			if e.Off < prev || e.Len <= 0 || e.end() > maxFileSize || e.Run > maxRunLen || e.Head+e.Len > e.Run {
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
