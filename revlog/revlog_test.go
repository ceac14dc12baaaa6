package revlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func TestRevisionSample(t *testing.T) {
	for _, inline := range []bool{true, false} {
		r := build(t, sampleRevs(), inline, true).open(t)
		// Twice: cold, then from cache / partial chains.
		for range 2 {
			for rev, s := range sampleRevs() {
				got, err := r.Revision(rev)
				if err != nil || !bytes.Equal(got, s.text) {
					t.Fatalf("inline %v rev %d: %q, %v", inline, rev, got, err)
				}
			}
		}
		if got, err := r.Revision(NullRev); err != nil || len(got) != 0 {
			t.Errorf("NullRev: %q %v", got, err)
		}
		if _, err := r.Revision(len(sampleRevs())); !errors.Is(err, ErrNotFound) {
			t.Errorf("out of range: %v", err)
		}
		chunk, err := r.RawChunk(0)
		if err != nil || string(chunk) != "hello world\n" {
			t.Errorf("RawChunk(0) = %q, %v", chunk, err)
		}
		chunk, err = r.RawChunk(1)
		if err != nil || !bytes.Equal(chunk, simpleDelta(sampleRevs()[0].text, sampleRevs()[1].text)) {
			t.Errorf("RawChunk(1) = %q, %v", chunk, err)
		}
		if h := r.Heads(); len(h) != 2 || h[0] != 6 || h[1] != 7 {
			t.Errorf("Heads %v", h)
		}
	}
}

func TestRevisionOpenFS(t *testing.T) {
	b := build(t, sampleRevs(), false, true)
	// fstest.MapFS files do not implement io.ReaderAt: read whole.
	fsys := fstest.MapFS{"data/x.i": {Data: b.index}, "data/x.d": {Data: b.data}}
	r, err := Open(fsys, "data/x.i")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Revision(5); err != nil || !bytes.Equal(got, sampleRevs()[5].text) {
		t.Fatalf("rev 5: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Revision(4); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := r.RawChunk(4); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("RawChunk after Close: %v", err)
	}
	if r.Len() != len(sampleRevs()) || r.Node(2) != b.nodes[2] {
		t.Error("index accessors after Close")
	}
	// A missing .d is an error naming it, not a panic.
	r, err = Open(fstest.MapFS{"data/x.i": {Data: b.index}}, "data/x.i")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Revision(1); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "data/x.d") {
		t.Errorf("missing .d: %v", err)
	}
	if _, err := Open(fsys, "nope.i"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing .i: %v", err)
	}
}

func TestRevisionFlags(t *testing.T) {
	revs := sampleRevs()[:3]
	b := build(t, revs, true, true)
	setFlags := builtRevlog.withFlags
	breakNode := func(b builtRevlog, rev int) builtRevlog {
		pos := 0
		for i := 0; i < rev; i++ {
			pos += EntrySize + int(binary.BigEndian.Uint32(b.index[pos+8:]))
		}
		b.index[pos+32] ^= 0xFF
		return b
	}
	// Wrong node: integrity check fails.
	bad := breakNode(setFlags(b, 1, 0), 1)
	if _, err := bad.open(t).Revision(1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "integrity check failed") {
		t.Errorf("wrong node: %v", err)
	}
	if got, err := bad.open(t).RevisionUnchecked(1); err != nil || string(got) != string(revs[1].text) {
		t.Errorf("RevisionUnchecked: %q %v", got, err)
	}
	// hg has no processor for the ellipsis and extstored flags without
	// the narrow and lfs extensions: it refuses such a revision, with a
	// wrong node or a right one (a flag never skips the hash check). The
	// first flag in hg's order is named. Revisions whose chains pass
	// through the flagged one read as in hg; RevisionUnchecked shows it.
	for _, c := range []struct {
		flags, named uint16
		wrongNode    bool
	}{
		{FlagExtStored, FlagExtStored, false}, {FlagExtStored, FlagExtStored, true},
		{FlagEllipsis, FlagEllipsis, false}, {FlagEllipsis, FlagEllipsis, true},
		{FlagExtStored | FlagEllipsis, FlagEllipsis, true},
		{FlagExtStored | FlagCensored, FlagExtStored, true},
	} {
		f := setFlags(b, 1, c.flags)
		if c.wrongNode {
			f = breakNode(f, 1)
		}
		r := f.open(t)
		var fe *FlagError
		if got, err := r.Revision(1); !errors.As(err, &fe) || fe.Flag != c.named || fe.Rev != 1 || !errors.Is(err, ErrUnsupported) ||
			err.Error() != fmt.Sprintf("missing processor for flag '%#x'", c.named) {
			t.Errorf("flags %#x (wrong node %v): %q %v", c.flags, c.wrongNode, got, err)
		}
		// (A wrong node for rev 1 would change rev 2's hash too.)
		if got, err := r.Revision(2); !c.wrongNode && (err != nil || string(got) != string(revs[2].text)) {
			t.Errorf("flags %#x: rev 2: %q %v", c.flags, got, err)
		}
		if got, err := r.RevisionUnchecked(1); err != nil || string(got) != string(revs[1].text) {
			t.Errorf("flags %#x: RevisionUnchecked: %q %v", c.flags, got, err)
		}
	}
	// HASCOPIESINFO is still checked.
	c := breakNode(setFlags(b, 1, FlagHasCopiesInfo), 1)
	if _, err := c.open(t).Revision(1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("hascopiesinfo with wrong node: %v", err)
	}
	// Unknown revision flags are refused.
	c = setFlags(b, 2, 1<<3)
	if _, err := c.open(t).Revision(2); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "0x8") {
		t.Errorf("unknown flag: %v", err)
	}
	// A censored revision: tombstone text with censor metadata.
	tomb := []byte("\x01\ncensored: gone\n\x01\n")
	cens := build(t, []buildRev{
		{text: []byte("a"), p1: -1, p2: -1, base: -2, comp: 'u'},
		{text: tomb, p1: 0, p2: -1, base: -2, comp: 'u', flags: FlagCensored},
	}, true, true)
	cens = breakNode(cens, 1) // the node is of the original content
	if _, err := cens.open(t).Revision(1); !errors.Is(err, ErrCensored) || errors.Is(err, ErrCorrupt) {
		t.Errorf("censored: %v", err)
	}
}

func TestRevisionCorruptChunks(t *testing.T) {
	revs := sampleRevs()
	b := build(t, revs, false, true)
	// Rev 1's chunk is zlib: flip a byte in its middle.
	r := b.open(t)
	e := r.Entry(1)
	d := bytes.Clone(b.data)
	d[e.Offset+e.CompressedLen/2] ^= 0x55
	r2, _ := FromBytes("x.i", b.index, d)
	_, err := r2.Revision(1)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Rev != 1 {
		t.Errorf("flipped zlib byte: %v", err)
	}
	// Truncated .d: chunk runs past the end.
	r3, _ := FromBytes("x.i", b.index, b.data[:len(b.data)-3])
	if _, err := r3.Revision(len(revs) - 1); !errors.As(err, &ce) || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("truncated .d: %v", err)
	}
	// Unknown compression marker.
	d = bytes.Clone(b.data)
	d[r.Entry(0).Offset] = 'Q'
	r4, _ := FromBytes("x.i", b.index, d)
	if _, err := r4.Revision(0); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "x.i rev 0") {
		t.Errorf("unknown marker: %v", err)
	}
	// A delta hunk past its base.
	bad := build(t, []buildRev{{text: []byte("abc"), p1: -1, p2: -1, base: -2, comp: 'u'}}, true, true)
	delta := append([]byte{'u'}, hunkBytes(2, 9, []byte("x"))...)
	e1 := make([]byte, EntrySize)
	binary.BigEndian.PutUint64(e1, uint64(4)<<16) // after chunk 0 ("uabc")
	binary.BigEndian.PutUint32(e1[8:], uint32(len(delta)))
	binary.BigEndian.PutUint32(e1[12:], 3)
	binary.BigEndian.PutUint32(e1[16:], 0) // delta against rev 0
	binary.BigEndian.PutUint32(e1[24:], 0)
	binary.BigEndian.PutUint32(e1[28:], 0xFFFFFFFF)
	idx := append(append(bytes.Clone(bad.index), e1...), delta...)
	r5, err := FromBytes("d.i", idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r5.Revision(1); !errors.Is(err, ErrBadDelta) || !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad delta: %v", err)
	}
	// Raw length disagreeing with the text.
	b2 := build(t, revs[:2], true, true)
	binary.BigEndian.PutUint32(b2.index[12:], 99)
	if _, err := b2.open(t).Revision(0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong rawlen: %v", err)
	}
}

// TestRevisionConcurrent reads every revision of a long chain from many
// goroutines at once (run with -race).
func TestRevisionConcurrent(t *testing.T) {
	var revs []buildRev
	text := []byte("base\n")
	for i := range 200 {
		next := append(bytes.Clone(text), []byte(strings.Repeat("x", i%7)+"\n")...)
		base := i - 1
		if i == 0 {
			base = -2
		}
		revs = append(revs, buildRev{text: next, p1: i - 1, p2: -1, base: base, comp: "ux("[i%3]})
		text = next
	}
	r := build(t, revs, false, true).open(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range revs {
				rev := (i*7 + g*13) % len(revs)
				got, err := r.Revision(rev)
				if err != nil || !bytes.Equal(got, revs[rev].text) {
					t.Errorf("rev %d: %v", rev, err)
					return
				}
				if n, ok := r.Rev(r.Node(rev)); !ok || n != rev {
					t.Errorf("Rev(node %d) = %d", rev, n)
				}
			}
		}()
	}
	wg.Wait()
}

// copyStore copies a fixture's store to a scratch directory for breaking.
func copyStore(t *testing.T, variant string) string {
	src, err := storeFS(fixtures(t)[variant])
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCorruptRealRevlogs breaks revlogs written by hg: a flipped byte in
// a .d file, a truncated .i, a wrong node. Each must be an error naming
// the file, never a panic.
func TestCorruptRealRevlogs(t *testing.T) {
	st := copyStore(t, "zstd")
	fsys := os.DirFS(st)
	// Flip a byte in the middle of big.bin.d (split, zstd): every chunk
	// covering it must fail (decompression or hash).
	dpath := filepath.Join(st, "data", "big.bin.d")
	d, err := os.ReadFile(dpath)
	if err != nil {
		t.Fatal(err)
	}
	mid := int64(len(d) / 3)
	d[mid] ^= 0x01
	if err := os.WriteFile(dpath, d, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fsys, "data/big.bin.i")
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for rev := range r.Len() {
		_, err := r.Revision(rev)
		covers := false
		for _, c := range r.DeltaChain(rev) {
			ce := r.Entry(c)
			covers = covers || (ce.Offset <= mid && mid < ce.Offset+ce.CompressedLen)
		}
		if covers {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("rev %d covers the flipped byte: %v", rev, err)
			}
			failed++
		} else if err != nil {
			t.Errorf("rev %d: %v", rev, err)
		}
	}
	if failed == 0 {
		t.Error("no revision covered the flipped byte")
	}
	r.Close()

	// Truncated .i files, at every kind of cut point.
	for _, name := range []string{"00changelog.i", "data/mf.i", "data/big.bin.i"} {
		b, err := os.ReadFile(filepath.Join(st, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{len(b) - 1, len(b) - EntrySize/2, len(b)/2 + 1, 5} {
			_, err := FromBytes(name, b[:n], nil)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s cut at %d: %v", name, n, err)
			}
		}
	}

	// A wrong node in the changelog.
	cpath := filepath.Join(st, "00changelog.i")
	b, _ := os.ReadFile(cpath)
	r, err = FromBytes("00changelog.i", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	pos := entryOffset(r.inlinePos, 5)
	b[pos+40] ^= 0x80
	r, _ = FromBytes("00changelog.i", b, nil)
	if _, err := r.Revision(5); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "integrity check failed on 00changelog.i:5") {
		t.Errorf("wrong node: %v", err)
	}
}

// FuzzIndex parses arbitrary index (and data) bytes and reads every
// revision: errors are fine, panics and hangs are not.
func FuzzIndex(f *testing.F) {
	for _, inline := range []bool{true, false} {
		b := build(f, sampleRevs(), inline, true)
		f.Add(b.index, b.data)
	}
	legacy := build(f, []buildRev{
		{text: []byte("a\n"), p1: -1, p2: -1, base: -2, comp: 'x'},
		{text: []byte("a\nb\n"), p1: 0, p2: -1, base: 0, comp: 'u'},
	}, false, false)
	f.Add(legacy.index, legacy.data)
	f.Add([]byte{0, 1, 0, 1}, []byte(nil))
	f.Add([]byte{0, 0, 0xDE, 0xAD}, []byte(nil))
	f.Fuzz(func(t *testing.T, index, data []byte) {
		r, err := FromBytes("fuzz.i", index, data)
		if err != nil {
			return
		}
		for rev := 0; rev < r.Len() && rev < 64; rev++ {
			e := r.Entry(rev)
			if e.P1 >= rev || e.P2 >= rev || e.BaseRev > rev {
				t.Fatalf("rev %d: unchecked entry %+v", rev, e)
			}
			text, textErr := r.Revision(rev)
			r.RawChunk(rev)
			r.DeltaChain(rev)
			// A snapshot's size, when given, is its checked text's.
			if n, ok, err := r.SnapshotFileSize(rev); ok && err == nil && textErr == nil {
				if _, body, err := ParseFileMeta(text); err == nil && n != int64(len(body)) {
					t.Fatalf("rev %d: SnapshotFileSize %d, content %d bytes", rev, n, len(body))
				}
			}
		}
		r.Heads()
		r.LookupPrefix("ab")
		// The walk gives what Revision gives, on a revlog opened afresh.
		direct, err := FromBytes("fuzz.i", index, data)
		if err != nil {
			t.Fatal(err)
		}
		r.EachRevision(func(rev int, text []byte, err error) error {
			if rev >= 64 {
				return errors.New("enough")
			}
			want, wantErr := direct.Revision(rev)
			if (err == nil) != (wantErr == nil) || err == nil && !bytes.Equal(text, want) {
				t.Fatalf("rev %d: walk %q, %v; Revision %q, %v", rev, text, err, want, wantErr)
			}
			return nil
		})
	})
}

// countingFS serves one split revlog whose .d counts ReadAt calls and
// bytes, to check how much a read costs without timing anything.
type countingFS struct {
	index, data []byte
	calls       *int
	bytes       *int64
}

type countingFile struct {
	fs.File
	c countingFS
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	*f.c.calls++
	*f.c.bytes += int64(len(p))
	return bytes.NewReader(f.c.data).ReadAt(p, off)
}

func (c countingFS) Open(name string) (fs.File, error) {
	m := fstest.MapFS{"t.i": {Data: c.index}, "t.d": {Data: c.data}}
	f, err := m.Open(name)
	if err != nil || name != "t.d" {
		return f, err
	}
	return countingFile{f, c}, nil
}

// TestReadCost checks that a cold read of a chain's tip reads its chunks
// in one ReadAt, and that walking revisions in order then reads only each
// revision's own chunk (the text cache serves the delta parent).
func TestReadCost(t *testing.T) {
	b := longChain(t, 300, 4<<10)
	var calls int
	var n int64
	r, err := Open(countingFS{b.index, b.data, &calls, &n}, "t.i")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Revision(299); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || n != int64(len(b.data)) {
		t.Errorf("cold chain read: %d ReadAt calls, %d bytes (data is %d)", calls, n, len(b.data))
	}
	r, _ = Open(countingFS{b.index, b.data, &calls, &n}, "t.i")
	calls, n = 0, 0
	for rev := range r.Len() {
		if _, err := r.Revision(rev); err != nil {
			t.Fatal(err)
		}
	}
	if calls != r.Len() || n != int64(len(b.data)) {
		t.Errorf("in-order walk: %d ReadAt calls, %d bytes; want %d calls, %d bytes", calls, n, r.Len(), len(b.data))
	}
}
