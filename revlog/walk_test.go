package revlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// eachMatchesRevision checks that EachRevision gives every revision of
// the revlog at name in fsys as Revision does on a revlog opened
// afresh: the same text, or the same error. It returns how many texts
// it compared and how many errors.
func eachMatchesRevision(t *testing.T, open func() (*Revlog, error), name string) (texts, errs int) {
	t.Helper()
	walked, err := open()
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer walked.Close()
	direct, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	next := 0
	err = walked.EachRevision(func(rev int, text []byte, err error) error {
		if rev != next {
			return fmt.Errorf("revision %d after %d", rev, next-1)
		}
		next++
		want, wantErr := direct.Revision(rev)
		switch {
		case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
			t.Errorf("%s rev %d: error %v, Revision's %v", name, rev, err, wantErr)
		case err != nil:
			errs++
		case !bytes.Equal(text, want):
			t.Errorf("%s rev %d: %d bytes differ from Revision's %d", name, rev, len(text), len(want))
		default:
			texts++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if next != walked.Len() {
		t.Errorf("%s: walked %d of %d revisions", name, next, walked.Len())
	}
	return texts, errs
}

// TestEachRevisionMatchesRevision walks every revlog of every fixture
// variant (inline and split, zlib, zstd and none, generaldelta or not,
// long chains, censored revisions).
func TestEachRevisionMatchesRevision(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			st, err := storeFS(fixtures(t)[v.name])
			if err != nil {
				t.Fatal(err)
			}
			fsys := os.DirFS(st)
			total := 0
			for _, d := range hgDump(t, v.name) {
				n, _ := eachMatchesRevision(t, func() (*Revlog, error) { return Open(fsys, d.Path) }, d.Path)
				total += n
			}
			if total == 0 {
				t.Fatal("no revision compared")
			}
		})
	}
}

// TestEachRevisionCorrupt: a flipped byte in a data file fails the
// revisions whose chains cover it, in the walk as in Revision, and the
// walk goes on past them; a walk stopped by fn returns fn's error; a
// closed revlog's walk its closing error.
func TestEachRevisionCorrupt(t *testing.T) {
	st := copyStore(t, "zstd")
	dpath := filepath.Join(st, "data", "big.bin.d")
	d, err := os.ReadFile(dpath)
	if err != nil {
		t.Fatal(err)
	}
	d[len(d)-8] ^= 0x01 // in the last chunk
	if err := os.WriteFile(dpath, d, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(st)
	open := func() (*Revlog, error) { return Open(fsys, "data/big.bin.i") }
	texts, errs := eachMatchesRevision(t, open, "data/big.bin.i")
	if errs == 0 || texts == 0 {
		t.Errorf("%d texts and %d errors: want both", texts, errs)
	}

	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	if err := r.EachRevision(func(int, []byte, error) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("stopped walk: %v after %d calls", err, calls)
	}
	r.Close()
	if err := r.EachRevision(func(int, []byte, error) error { return nil }); err == nil {
		t.Error("walk of a closed revlog succeeded")
	}
}

// TestEachRevisionUntrustedLength: an index entry claiming a text of
// 2 GiB (untrusted) must not size the walk's buffer: the walk fails the
// revision as Revision does, allocating about what Revision allocates.
func TestEachRevisionUntrustedLength(t *testing.T) {
	b := build(t, sampleRevs(), false, true)
	idx := append([]byte(nil), b.index...)
	binary.BigEndian.PutUint32(idx[1*EntrySize+12:], 0x7fffffff) // rev 1's raw length
	open := func() (*Revlog, error) { return FromBytes("huge.i", idx, b.data) }
	allocated := func(f func()) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	var errs int
	got := allocated(func() { _, errs = eachMatchesRevision(t, open, "huge.i") })
	if errs == 0 {
		t.Fatal("the revision with the wrong length did not fail")
	}
	if got > 16<<20 {
		t.Errorf("walking a revlog of %d bytes allocated %d MB", len(idx)+len(b.data), got>>20)
	}
}
