package revlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// journalRecorder is a Journal that records its calls, enforces hg's
// rule that a file is added before it is replaced, and can fail on
// demand.
type journalRecorder struct {
	mu    sync.Mutex
	calls []string
	off   map[string]int64
	fail  error
}

func (j *journalRecorder) Add(name string, off int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	if j.off == nil {
		j.off = map[string]int64{}
	}
	if _, ok := j.off[name]; ok {
		return fmt.Errorf("%s added twice", name)
	}
	j.off[name] = off
	j.calls = append(j.calls, fmt.Sprintf("add %s %d", name, off))
	return nil
}

// FlushJournal records a flush when entries were added since the last
// one, as a buffering journal would write them.
func (j *journalRecorder) FlushJournal() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n := len(j.calls); n > 0 && strings.HasPrefix(j.calls[n-1], "add ") {
		j.calls = append(j.calls, "flush")
	}
	return nil
}

func (j *journalRecorder) Replace(name string, off int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.off[name]; !ok {
		return fmt.Errorf("replace of %s, never added", name)
	}
	j.off[name] = off
	j.calls = append(j.calls, fmt.Sprintf("replace %s %d", name, off))
	return nil
}

// rollback truncates every journaled file as hg's transaction abort does
// (new files removed).
func (j *journalRecorder) rollback(t *testing.T, store string) {
	t.Helper()
	for name, off := range j.off {
		p := filepath.Join(store, name)
		var err error
		if off == 0 {
			err = os.Remove(p)
		} else {
			err = os.Truncate(p, off)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// writerOptions mirrors the fixture variants' requirements.
func writerOptions(variant string) WriterOptions {
	switch variant {
	case "zstd":
		return WriterOptions{Compression: CompressionZstd, GeneralDelta: true, SparseRevlog: true}
	case "zlib":
		return WriterOptions{Compression: CompressionZlib, GeneralDelta: true, SparseRevlog: true}
	case "none":
		return WriterOptions{Compression: CompressionNone, GeneralDelta: true, SparseRevlog: true}
	default: // nogd
		return WriterOptions{Compression: CompressionZlib}
	}
}

// copyRepoMeta copies src/.hg without its revlogs (and caches).
func copyRepoMeta(t *testing.T, src, dst string) {
	t.Helper()
	root := filepath.Join(src, ".hg")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "cache" || rel == "wcache" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, ".hg", rel), 0o755)
		}
		if strings.HasPrefix(rel, "store"+string(filepath.Separator)) && (strings.HasSuffix(p, ".i") || strings.HasSuffix(p, ".d")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, ".hg", rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func storeRevlogs(t *testing.T, store string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".i") {
			rel, _ := filepath.Rel(store, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func revlogBytes(t *testing.T, store string) int64 {
	t.Helper()
	var n int64
	for _, name := range storeRevlogs(t, store) {
		for _, f := range []string{name, strings.TrimSuffix(name, ".i") + ".d"} {
			if st, err := os.Stat(filepath.Join(store, f)); err == nil {
				n += st.Size()
			}
		}
	}
	return n
}

// replaceDelta is a delta replacing a whole text of oldLen bytes.
func replaceDelta(oldLen int, text []byte) []byte {
	return append(replaceHeader(oldLen, len(text)), text...)
}

// rebuildRevlog copies src's revisions into a Writer the ways a
// changegroup and a commit deliver them, reopening the writer halfway.
func rebuildRevlog(t *testing.T, srcStore, dstStore, name string, opt WriterOptions) (journalCalls []string) {
	t.Helper()
	r, err := Open(os.DirFS(srcStore), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	j := &journalRecorder{}
	opt.Journal = j
	opt.Censorable = strings.HasPrefix(name, "data/")
	opt.Changelog = name == "00changelog.i"
	w, err := OpenWriter(dstStore, name, opt)
	if err != nil {
		t.Fatal(err)
	}
	text := func(rev int) []byte {
		b, err := r.RevisionUnchecked(rev)
		if err != nil {
			t.Fatalf("%s rev %d: %v", name, rev, err)
		}
		return b
	}
	censored := func(rev int) bool { return rev >= 0 && r.Entry(rev).Flags&FlagCensored != 0 }
	// deltaAgainst returns a delta from rev base's text to rev's.
	deltaAgainst := func(base, rev int) []byte {
		if censored(base) {
			return replaceDelta(len(text(base)), text(rev))
		}
		return Diff(text(base), text(rev))
	}
	for rev := range r.Len() {
		if rev == r.Len()/2 && rev > 0 {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			journalCalls = append(journalCalls, j.calls...)
			// A second session (transaction) appends to what is on disk.
			j = &journalRecorder{}
			opt.Journal = j
			if w, err = OpenWriter(dstStore, name, opt); err != nil {
				t.Fatal(err)
			}
			if w.Len() != rev {
				t.Fatalf("%s: reopened with %d revisions, want %d", name, w.Len(), rev)
			}
		}
		e := r.Entry(rev)
		p1, p2 := r.Node(e.P1), r.Node(e.P2)
		var got int
		var added bool
		switch {
		case censored(rev) || rev%4 == 0:
			// Changegroup style: the sender's stored delta.
			base, delta := NullRev, replaceDelta(0, text(rev))
			if dp := r.DeltaParent(rev); dp != NullRev {
				base = dp
				if delta, err = r.RawChunk(rev); err != nil {
					t.Fatal(err)
				}
				if censored(dp) {
					delta = replaceDelta(len(text(dp)), text(rev))
				}
			}
			got, added, err = w.AddDelta(e.Node, p1, p2, r.Node(base), delta, e.LinkRev, e.Flags)
		case rev%4 == 1 && e.P1 != NullRev:
			got, added, err = w.AddDelta(e.Node, p1, p2, p1, deltaAgainst(e.P1, rev), e.LinkRev, e.Flags)
		case rev%4 == 2:
			got, added, err = w.AddRevision(text(rev), p1, p2, e.LinkRev, e.Flags)
		default:
			// cg1 style: against the previous revision.
			got, added, err = w.AddDelta(e.Node, p1, p2, r.Node(rev-1), deltaAgainst(rev-1, rev), e.LinkRev, e.Flags)
		}
		if err != nil || !added || got != rev {
			t.Fatalf("%s rev %d: got rev %d added %v err %v", name, rev, got, added, err)
		}
		if rev%7 == 0 && !censored(rev) {
			b, err := w.Revision(rev)
			if err != nil || !bytes.Equal(b, text(rev)) {
				t.Fatalf("%s: Writer.Revision(%d): %v (text equal: %v)", name, rev, err, bytes.Equal(b, text(rev)))
			}
		}
		// Adding it again is a no-op.
		if censored(rev) {
			continue
		}
		if got, added, err := w.AddRevision(text(rev), p1, p2, e.LinkRev, 0); err != nil || added || got != rev {
			t.Fatalf("%s rev %d: duplicate AddRevision: rev %d added %v err %v", name, rev, got, added, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return append(journalCalls, j.calls...)
}

// TestWriterRebuildsRepository rewrites every revlog of each fixture
// variant with the Writer and checks the result with hg: verify, log
// --debug and every revision's raw data and index fields as hg reads
// them.
func TestWriterRebuildsRepository(t *testing.T) {
	python := hgPython(t)
	dirs := fixtures(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			src := dirs[v.name]
			dst := t.TempDir()
			copyRepoMeta(t, src, dst)
			srcStore, dstStore := filepath.Join(src, ".hg", "store"), filepath.Join(dst, ".hg", "store")
			opt := writerOptions(v.name)
			if v.name == "zlib" {
				opt.BufferSize = 4096 // many partial flushes, reads back from disk
			}
			sawSplit := false
			for _, name := range storeRevlogs(t, srcStore) {
				calls := rebuildRevlog(t, srcStore, dstStore, name, opt)
				if name == "data/big.bin.i" {
					sawSplit = slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "replace data/big.bin.i ") })
				}
			}
			if !sawSplit {
				t.Error("big.bin was not split by the writer")
			}
			// Deltas were chosen as well as hg's: the store is not
			// much larger than the one hg wrote.
			if a, b := revlogBytes(t, srcStore), revlogBytes(t, dstStore); b > a+a/4 {
				t.Errorf("rebuilt revlogs take %d bytes, hg's %d", b, a)
			} else {
				t.Logf("rebuilt revlogs take %d bytes, hg's %d", b, a)
			}
			// The fixture has a censored file revision, which hg verify
			// reports (reading its copy metadata) even with
			// censor.policy=ignore: the rebuilt repository must verify
			// exactly as the source does, and nothing else may fail.
			verify := func(dir string) string {
				out, errOut, err := testenv.HgResult(t, dir, "verify", "-q", "--config", "censor.policy=ignore")
				return fmt.Sprintf("%s%s%v", out, errOut, err)
			}
			if a, b := verify(src), verify(dst); a != b {
				t.Errorf("hg verify differs:\n%s", testenv.Diff("source", a, "rebuilt", b))
			} else if strings.Count(b, "\n") > 3 || strings.Contains(b, "error") && !strings.Contains(b, "1 integrity errors") {
				t.Errorf("hg verify: %s", b)
			}
			if a, b := testenv.Hg(t, src, "log", "--debug"), testenv.Hg(t, dst, "log", "--debug"); !bytes.Equal(a, b) {
				t.Errorf("hg log --debug differs:\n%s", testenv.Diff("source", string(a), "rebuilt", string(b)))
			}
			want := hgDump(t, v.name)
			got, err := runDump(python, dst)
			if err != nil {
				t.Fatal(err)
			}
			compareDumps(t, want, got)
		})
	}
}

func compareDumps(t *testing.T, want, got []dumpRevlog) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d revlogs, hg source has %d", len(got), len(want))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Path != g.Path || len(w.Revs) != len(g.Revs) || w.GeneralDelta != g.GeneralDelta {
			t.Fatalf("revlog %s (%d revs, gd %v), source %s (%d revs, gd %v)", g.Path, len(g.Revs), g.GeneralDelta, w.Path, len(w.Revs), w.GeneralDelta)
		}
		for rev := range w.Revs {
			a, b := w.Revs[rev], g.Revs[rev]
			if a.Node != b.Node || a.P1 != b.P1 || a.P2 != b.P2 || a.Link != b.Link || a.Flags != b.Flags || a.RawLen != b.RawLen ||
				(a.Data == nil) != (b.Data == nil) || a.Data != nil && *a.Data != *b.Data {
				t.Errorf("%s rev %d differs from the source", w.Path, rev)
			}
		}
	}
}

// TestWriterSplitJournal checks the journal offsets of a split done in a
// later transaction, by rolling back as hg would and reading the result.
func TestWriterSplitJournal(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	texts := make([][]byte, 4)
	for i := range texts {
		texts[i] = make([]byte, 60<<10)
		rng.Read(texts[i])
	}
	opt := WriterOptions{Compression: CompressionZstd, GeneralDelta: true, SparseRevlog: true}
	add := func(w *Writer, i int) {
		t.Helper()
		p1 := NullNode
		if i > 0 {
			p1 = w.Node(i - 1)
		}
		if _, _, err := w.AddRevision(texts[i], p1, NullNode, i, 0); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWriter(dir, "data/f.i", opt)
	if err != nil {
		t.Fatal(err)
	}
	add(w, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "data/f.i"))

	j := &journalRecorder{}
	opt.Journal = j
	if w, err = OpenWriter(dir, "data/f.i", opt); err != nil {
		t.Fatal(err)
	}
	add(w, 1)
	if !w.Inline() {
		t.Fatal("split too early")
	}
	add(w, 2) // 180 KiB of data: split
	if w.Inline() {
		t.Fatal("not split past 128 KiB")
	}
	add(w, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	start1 := int64(len(before)) - EntrySize // rev 1's data offset = rev 0's chunk length
	wantCalls := []string{
		fmt.Sprintf("add data/f.i %d", len(before)),
		"add data/f.d 0",
		"flush", // before the split writes anything
		fmt.Sprintf("replace data/f.d %d", start1),
		"replace data/f.i 64",
	}
	if !slices.Equal(j.calls, wantCalls) {
		t.Fatalf("journal calls %q, want %q", j.calls, wantCalls)
	}
	r, err := Open(os.DirFS(dir), "data/f.i")
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if b, err := r.Revision(i); err != nil || !bytes.Equal(b, texts[i]) {
			t.Fatalf("rev %d after split: %v", i, err)
		}
	}
	r.Close()

	// Roll back: a split revlog holding rev 0 only.
	j.rollback(t, dir)
	r, err = Open(os.DirFS(dir), "data/f.i")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Len() != 1 || r.Inline() {
		t.Fatalf("after rollback: %d revisions, inline %v", r.Len(), r.Inline())
	}
	if b, err := r.Revision(0); err != nil || !bytes.Equal(b, texts[0]) {
		t.Fatalf("rev 0 after rollback: %v", err)
	}
}

// writerWithHistory makes a small revlog and returns the open writer.
func writerWithHistory(t testing.TB, dir string, opt WriterOptions) (*Writer, [][]byte) {
	t.Helper()
	w, err := OpenWriter(dir, "data/x.i", opt)
	if err != nil {
		t.Fatal(err)
	}
	var texts [][]byte
	var lines strings.Builder
	for i := range 5 {
		fmt.Fprintf(&lines, "line %d of the history, long enough to compress well\n", i)
		texts = append(texts, []byte(lines.String()))
		p1 := NullNode
		if i > 0 {
			p1 = w.Node(i - 1)
		}
		if _, _, err := w.AddRevision(texts[i], p1, NullNode, i, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return w, texts
}

// TestWriterRejects feeds bad revisions and checks the documented errors
// and that nothing reaches the files.
func TestWriterRejects(t *testing.T) {
	for _, gd := range []bool{true, false} {
		t.Run(fmt.Sprintf("generaldelta=%v", gd), func(t *testing.T) {
			dir := t.TempDir()
			w, texts := writerWithHistory(t, dir, WriterOptions{Compression: CompressionZstd, GeneralDelta: gd})
			defer w.Close()
			snapshot := func() []byte {
				b, err := os.ReadFile(filepath.Join(dir, "data/x.i"))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			before := snapshot()
			tip := w.Node(4)
			newText := append(bytes.Clone(texts[4]), "one more line\n"...)
			good := HashRevision(newText, tip, NullNode)
			delta := Diff(texts[4], newText)
			unknown := Node{1, 2, 3}
			cases := []struct {
				name           string
				node, p1, base Node
				delta          []byte
				flags          uint16
				want           error
				wantMsg        string
			}{
				{"wrong node", Node{9}, tip, tip, delta, 0, ErrCorrupt, "integrity check failed"},
				{"missing base", good, tip, unknown, delta, 0, ErrUnknownBase, "unknown delta base " + unknown.String()},
				{"missing parent", good, unknown, tip, delta, 0, ErrUnknownBase, "unknown parent " + unknown.String()},
				{"truncated delta", good, tip, tip, delta[:len(delta)-3], 0, ErrBadDelta, "claims"},
				{"truncated header", good, tip, tip, delta[:5], 0, ErrCorrupt, "truncated hunk header"},
				{"hunk past base", good, tip, NullNode, delta, 0, ErrBadDelta, "past the end"},
				{"unknown flag", good, tip, tip, delta, 1, ErrUnsupported, "incompatible revision flag"},
				{"not censored", good, tip, tip, delta, FlagCensored, ErrCorrupt, "not censored"},
				// hg has no processor for these flags without the lfs or
				// narrow extension and refuses them, whatever the text.
				{"extstored", good, tip, tip, delta, FlagExtStored, ErrUnsupported, "missing processor for flag '0x2000'"},
				{"ellipsis", good, tip, tip, delta, FlagEllipsis, ErrUnsupported, "missing processor for flag '0x4000'"},
				{"extstored wrong node", Node{9}, tip, tip, delta, FlagExtStored, ErrUnsupported, "missing processor for flag '0x2000'"},
				{"ellipsis wrong node", Node{9}, tip, tip, delta, FlagEllipsis, ErrUnsupported, "missing processor for flag '0x4000'"},
				{"both", Node{9}, tip, tip, delta, FlagExtStored | FlagEllipsis, ErrUnsupported, "missing processor for flag '0x4000'"},
				{"null node", NullNode, tip, tip, delta, 0, nil, "null revision"},
			}
			for _, c := range cases {
				_, added, err := w.AddDelta(c.node, c.p1, NullNode, c.base, c.delta, 5, c.flags)
				if err == nil || added {
					t.Fatalf("%s: accepted", c.name)
				}
				if c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantMsg) {
					t.Errorf("%s: error %q, want %v containing %q", c.name, err, c.want, c.wantMsg)
				}
				if w.Len() != 5 {
					t.Fatalf("%s: Len %d after a rejected revision", c.name, w.Len())
				}
				if err := w.Flush(); err != nil {
					t.Fatalf("%s: Flush: %v", c.name, err)
				}
				if !bytes.Equal(snapshot(), before) {
					t.Fatalf("%s: the index changed", c.name)
				}
			}
			for _, f := range []uint16{FlagExtStored, FlagEllipsis} {
				var fe *FlagError
				if _, added, err := w.AddRevision(newText, tip, NullNode, 5, f); !errors.As(err, &fe) || added || fe.Flag != f || w.Len() != 5 {
					t.Errorf("AddRevision with flag %#x: added %v, %v", f, added, err)
				}
			}
			// The writer still works, and the revlog reads back.
			if rev, added, err := w.AddDelta(good, tip, NullNode, tip, delta, 5, 0); err != nil || !added || rev != 5 {
				t.Fatalf("good delta after rejections: rev %d added %v err %v", rev, added, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open(os.DirFS(dir), "data/x.i")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if b, err := r.Revision(5); err != nil || !bytes.Equal(b, newText) {
				t.Fatalf("rev 5: %v", err)
			}
			if r.GeneralDelta() != gd {
				t.Errorf("generaldelta %v", r.GeneralDelta())
			}
		})
	}
}

// TestWriterJournalFailure: a journal that refuses leaves nothing
// written and the writer usable.
func TestWriterJournalFailure(t *testing.T) {
	dir := t.TempDir()
	j := &journalRecorder{fail: errors.New("disk full")}
	w, err := OpenWriter(dir, "data/y.i", WriterOptions{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.AddRevision([]byte("x\n"), NullNode, NullNode, 0, 0); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("AddRevision with a failing journal: %v", err)
	}
	if w.Len() != 0 {
		t.Fatalf("Len %d", w.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data/y.i")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("index written: %v", err)
	}
}

// TestWriterRefusesInconsistentFiles: a data file longer than its index
// says (an interrupted transaction) is not appended to.
func TestWriterRefusesInconsistentFiles(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, "d.i", WriterOptions{Compression: CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 10000)
	if _, _, err := w.AddRevision(big, NullNode, NullNode, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "d.d"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err) // not split?
	}
	f.Write([]byte("garbage"))
	f.Close()
	if _, err := OpenWriter(dir, "d.i", WriterOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("OpenWriter over a long data file: %v", err)
	}
	if _, err := OpenWriter(dir, "../d.i", WriterOptions{}); err == nil {
		t.Fatal("accepted a name escaping the store")
	}
}

// FuzzAddDelta feeds arbitrary deltas, nodes and flags to a writer: no
// panic; an accepted revision reads back and hashes to its node.
func FuzzAddDelta(f *testing.F) {
	base := []byte("line 4 of the history, long enough to compress well\n")
	f.Add(Diff(base, []byte("other\n")), []byte{0}, uint16(0), uint8(4))
	f.Add(replaceDelta(0, []byte("new text\n")), []byte{1}, uint16(0), uint8(255))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 255, 255, 255, 255}, []byte{}, uint16(FlagCensored), uint8(2))
	f.Add(hunkBytes(0, 1<<30, nil), []byte{2}, uint16(0), uint8(0))
	// A censor tombstone replacing rev 4 whole.
	f.Add(replaceDelta(len(base)*5, []byte("\x01\ncensored:gone\n\x01\n")), []byte{}, uint16(FlagCensored), uint8(4))
	f.Add(hunkBytes(5, 3, []byte("x")), []byte{}, uint16(FlagExtStored), uint8(1))
	f.Fuzz(func(t *testing.T, delta, nodeBits []byte, flags uint16, baseSel uint8) {
		dir := t.TempDir()
		w, _ := writerWithHistory(t, dir, WriterOptions{Compression: CompressionZstd, GeneralDelta: true, SparseRevlog: true, Censorable: true})
		defer w.Close()
		baseNode := NullNode
		if int(baseSel) < w.Len() {
			baseNode = w.Node(int(baseSel))
		}
		// Mostly the right node for what the delta makes, so that
		// acceptance is reached; nodeBits perturb it.
		var node Node
		bt, _ := w.Revision(NullRev)
		if baseNode != NullNode {
			r, _ := w.Rev(baseNode)
			bt, _ = w.Revision(r)
		}
		if text, err := Patch(bt, delta); err == nil {
			node = HashRevision(text, w.Node(w.Len()-1), NullNode)
		}
		for i, b := range nodeBits {
			node[i%NodeLen] ^= b
		}
		rev, added, err := w.AddDelta(node, w.Node(w.Len()-1), NullNode, baseNode, delta, 5, flags)
		if err != nil {
			if added {
				t.Fatal("added with an error")
			}
			return
		}
		if !added {
			return
		}
		if flags&(FlagEllipsis|FlagExtStored) != 0 {
			t.Fatalf("added a revision with flags %#x", flags)
		}
		got, err := w.Revision(rev)
		if flags&FlagCensored != 0 {
			return
		}
		if err != nil {
			t.Fatalf("accepted rev unreadable: %v", err)
		}
		if HashRevision(got, w.Node(4), NullNode) != node {
			t.Fatal("accepted rev does not hash to its node")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := Open(os.DirFS(dir), "data/x.i")
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		defer r.Close()
		if _, err := r.RevisionUnchecked(rev); err != nil {
			t.Fatalf("reading back rev %d: %v", rev, err)
		}
	})
}

// BenchmarkWriterApply applies every revision of a generated repository
// (testenv.Large(2000), or the repository named by HGFS_BENCH_REPO) to
// fresh revlogs as a changegroup delivers them: the sender's stored
// delta, one writer per revlog, in store order. Run under `strace -f -c`
// to count write calls against `hg unbundle` of the same repository.
func BenchmarkWriterApply(b *testing.B) {
	src := os.Getenv("HGFS_BENCH_REPO")
	if src == "" {
		src = testenv.Generate(b, testenv.Large(2000))
	}
	srcStore := filepath.Join(src, ".hg", "store")
	var names []string
	filepath.WalkDir(srcStore, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".i") {
			rel, _ := filepath.Rel(srcStore, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	type rev struct {
		node, p1, p2, base Node
		link               int
		flags              uint16
		delta              []byte
	}
	groups := make(map[string][]rev, len(names))
	for _, name := range names {
		r, err := Open(os.DirFS(srcStore), name)
		if err != nil {
			b.Fatal(err)
		}
		for i := range r.Len() {
			e := r.Entry(i)
			rv := rev{node: e.Node, p1: r.Node(e.P1), p2: r.Node(e.P2), link: e.LinkRev, flags: e.Flags}
			if dp := r.DeltaParent(i); dp != NullRev {
				rv.base = r.Node(dp)
				c, err := r.RawChunk(i)
				if err != nil {
					b.Fatal(err)
				}
				rv.delta = bytes.Clone(c)
			} else {
				t, err := r.Revision(i)
				if err != nil {
					b.Fatal(err)
				}
				rv.delta = replaceDelta(0, t)
			}
			groups[name] = append(groups[name], rv)
		}
		r.Close()
	}
	opt := WriterOptions{Compression: CompressionZstd, GeneralDelta: true, SparseRevlog: true}
	b.ResetTimer()
	for range b.N {
		dst := b.TempDir()
		for _, name := range names {
			o := opt
			o.Changelog = name == "00changelog.i"
			w, err := OpenWriter(dst, name, o)
			if err != nil {
				b.Fatal(err)
			}
			for _, rv := range groups[name] {
				if _, _, err := w.AddDelta(rv.node, rv.p1, rv.p2, rv.base, rv.delta, rv.link, rv.flags); err != nil {
					b.Fatalf("%s: %v", name, err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestWriterAppendsToHgRevlogs appends to revlogs hg wrote (an inline
// filelog and a split one) and reads the new revisions back with
// `hg debugdata`.
func TestWriterAppendsToHgRevlogs(t *testing.T) {
	repo := testenv.CopyRepo(t, fixtures(t)["zstd"])
	store := filepath.Join(repo, ".hg", "store")
	for _, c := range []struct{ file, index string }{{"a.txt", "data/a.txt.i"}, {"big.bin", "data/big.bin.i"}} {
		w, err := OpenWriter(store, c.index, writerOptions("zstd"))
		if err != nil {
			t.Fatal(err)
		}
		n := w.Len()
		tip, err := w.Revision(n - 1)
		if err != nil {
			t.Fatal(err)
		}
		t1 := append(bytes.Clone(tip), "appended by hgfs\n"...)
		t2 := append([]byte("new first line\n"), t1...)
		r1, _, err := w.AddRevision(t1, w.Node(n-1), NullNode, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		node2 := HashRevision(t2, w.Node(r1), NullNode)
		if _, _, err := w.AddDelta(node2, w.Node(r1), NullNode, w.Node(r1), Diff(t1, t2), 0, 0); err != nil {
			t.Fatal(err)
		}
		if e := w.Entry(r1 + 1); e.BaseRev != r1 {
			t.Errorf("%s: small change stored against %d, not its parent", c.index, e.BaseRev)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for i, want := range [][]byte{t1, t2} {
			got := testenv.Hg(t, repo, "debugdata", c.file, fmt.Sprint(n+i))
			if !bytes.Equal(got, want) {
				t.Errorf("hg debugdata %s %d: %d bytes, want %d", c.file, n+i, len(got), len(want))
			}
		}
	}
}

// TestWriterEmptyTextAgainstNull adds what hg sends for an empty file: a
// zero-length delta against the null revision (and, after it, another
// empty revision as a zero-length delta against the first). Every real
// repository has empty files; the writer used to read revision -1.
func TestWriterEmptyTextAgainstNull(t *testing.T) {
	for _, variant := range []string{"zstd", "nogd"} {
		t.Run(variant, func(t *testing.T) {
			dir := t.TempDir()
			w, err := OpenWriter(dir, "data/empty.i", writerOptions(variant))
			if err != nil {
				t.Fatal(err)
			}
			n1 := HashRevision(nil, NullNode, NullNode)
			if _, added, err := w.AddDelta(n1, NullNode, NullNode, NullNode, nil, 0, 0); err != nil || !added {
				t.Fatalf("AddDelta(empty against null) = %v, %v", added, err)
			}
			n2 := HashRevision([]byte("x\n"), n1, NullNode)
			if _, _, err := w.AddDelta(n2, n1, NullNode, n1, replaceDelta(0, []byte("x\n")), 1, 0); err != nil {
				t.Fatal(err)
			}
			n3 := HashRevision(nil, n2, NullNode)
			if _, _, err := w.AddDelta(n3, n2, NullNode, NullNode, nil, 2, 0); err != nil {
				t.Fatalf("AddDelta(emptied file) = %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open(os.DirFS(dir), "data/empty.i")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for rev, want := range []string{"", "x\n", ""} {
				got, err := r.Revision(rev)
				if err != nil || string(got) != want {
					t.Errorf("rev %d = %q, %v; want %q", rev, got, err, want)
				}
			}
		})
	}
}

// TestWriterReadsLikeRevlog: a Writer rebuilds the texts it needs with
// the reader's code, so it refuses what a Revlog refuses. A revision on
// disk with an unknown flag was read by the writer's own reconstruction,
// which skipped that check, and could serve as a delta base.
func TestWriterReadsLikeRevlog(t *testing.T) {
	dir := t.TempDir()
	b := build(t, sampleRevs()[:3], true, true).withFlags(1, 1<<3)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "x.i"), b.index, 0o644); err != nil {
		t.Fatal(err)
	}
	r := b.open(t)
	_, want := r.Revision(1)
	if !errors.Is(want, ErrUnsupported) {
		t.Fatalf("Revlog.Revision(1) = %v, want ErrUnsupported", want)
	}
	w, err := OpenWriter(dir, "data/x.i", WriterOptions{GeneralDelta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Revision(1); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "incompatible revision flag '0x8'") {
		t.Errorf("Writer.Revision(1) = %v, want %v", err, want)
	}
	// Revision 2 is a delta against 1: both read it.
	for _, read := range []func(int) ([]byte, error){r.Revision, w.Revision} {
		if got, err := read(2); err != nil || !bytes.Equal(got, sampleRevs()[2].text) {
			t.Errorf("rev 2 = %q, %v", got, err)
		}
	}
	text := append(bytes.Clone(sampleRevs()[1].text), "and more\n"...)
	node := HashRevision(text, b.nodes[1], NullNode)
	_, _, err = w.AddDelta(node, b.nodes[1], NullNode, b.nodes[1], Diff(sampleRevs()[1].text, text), 3, 0)
	if !errors.Is(err, ErrUnsupported) || w.Len() != 3 {
		t.Errorf("AddDelta against the flagged revision: %v (%d revisions)", err, w.Len())
	}
}

// TestReaderWriterSameErrors: a Revlog and a Writer over the same
// corrupt revlog refuse it with the same words, at Open or when a text
// is rebuilt: both load the index and rebuild texts with one
// implementation (index.go loadIndex, inner.go). A Writer checks when it
// opens what a Revlog checks on first read (an inline chunk's position);
// it then fails with the words the Revlog gives at that read.
func TestReaderWriterSameErrors(t *testing.T) {
	// entry returns the position of rev's index entry.
	entry := func(index []byte, inline bool, rev int) int {
		if !inline {
			return rev * EntrySize
		}
		pos := 0
		for range rev {
			pos += EntrySize + int(int32(binary.BigEndian.Uint32(index[pos+8:])))
		}
		return pos
	}
	// chunk returns the bytes holding rev's stored chunk.
	chunk := func(index, data []byte, inline bool, rev int) []byte {
		e := entry(index, inline, rev)
		off := int(binary.BigEndian.Uint64(index[e:]) >> 16)
		if rev == 0 {
			off = 0
		}
		n := int(binary.BigEndian.Uint32(index[e+8:]))
		if inline {
			off += (rev + 1) * EntrySize
			return index[off : off+n]
		}
		return data[off : off+n]
	}
	type corruption struct {
		name   string
		split  bool // applies to a split revlog only
		inline bool // to an inline one only
		edit   func(index, data []byte, inline bool) ([]byte, []byte)
	}
	put32 := func(field, rev int, v uint32) func(index, data []byte, inline bool) ([]byte, []byte) {
		return func(index, data []byte, inline bool) ([]byte, []byte) {
			binary.BigEndian.PutUint32(index[entry(index, inline, rev)+field:], v)
			return index, data
		}
	}
	flags := func(rev int, f uint16) func(index, data []byte, inline bool) ([]byte, []byte) {
		return func(index, data []byte, inline bool) ([]byte, []byte) {
			binary.BigEndian.PutUint16(index[entry(index, inline, rev)+6:], f)
			return index, data
		}
	}
	cases := []corruption{
		{name: "parent out of range", edit: put32(24, 3, 5)},
		{name: "delta base out of range", edit: put32(16, 4, 6)},
		{name: "raw length", edit: put32(12, 0, 99)},
		{name: "unknown flag", edit: flags(1, 1<<3)},
		{name: "ellipsis flag", edit: flags(2, FlagEllipsis)},
		{name: "extstored flag", edit: flags(4, FlagExtStored)},
		{name: "censored flag, no tombstone", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			index, data = flags(1, FlagCensored)(index, data, inline)
			index[entry(index, inline, 1)+32] ^= 1
			return index, data
		}},
		{name: "node", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			index[entry(index, inline, 4)+32] ^= 1
			return index, data
		}},
		{name: "chunk byte", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			c := chunk(index, data, inline, 1)
			c[len(c)/2] ^= 0x55
			return index, data
		}},
		{name: "compression marker", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			chunk(index, data, inline, 0)[0] = 'Q'
			return index, data
		}},
		{name: "delta hunk", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			c := chunk(index, data, inline, 4) // 'u' + one hunk
			binary.BigEndian.PutUint32(c[1:], 1000)
			return index, data
		}},
		{name: "truncated index", edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			return index[:len(index)-5], data
		}},
		{name: "inline position", inline: true, edit: func(index, data []byte, inline bool) ([]byte, []byte) {
			e := entry(index, inline, 2)
			binary.BigEndian.PutUint64(index[e:], binary.BigEndian.Uint64(index[e:])+1<<16)
			return index, data
		}},
	}
	for _, inline := range []bool{false, true} {
		b := build(t, sampleRevs(), inline, true)
		for _, c := range cases {
			if c.split && inline || c.inline && !inline {
				continue
			}
			t.Run(fmt.Sprintf("%s/inline=%v", c.name, inline), func(t *testing.T) {
				index, data := c.edit(bytes.Clone(b.index), bytes.Clone(b.data), inline)
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "data", "x.i"), index, 0o644); err != nil {
					t.Fatal(err)
				}
				if !inline {
					if err := os.WriteFile(filepath.Join(dir, "data", "x.d"), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				r, rerr := Open(os.DirFS(dir), "data/x.i")
				w, werr := OpenWriter(dir, "data/x.i", WriterOptions{GeneralDelta: true, Censorable: true})
				if rerr != nil || werr != nil {
					if rerr != nil && werr != nil {
						if rerr.Error() != werr.Error() {
							t.Errorf("Open: %v\nOpenWriter: %v", rerr, werr)
						}
						return
					}
					if rerr != nil {
						t.Fatalf("Open: %v; OpenWriter accepted the revlog", rerr)
					}
				}
				defer r.Close()
				if w != nil {
					defer w.Discard()
				}
				failed := false
				for rev := range r.Len() {
					rt, rerr := r.Revision(rev)
					if werr != nil {
						// The writer refused at open what the reader
						// refuses at its first failing read.
						if rerr != nil {
							if rerr.Error() != werr.Error() {
								t.Errorf("Revision(%d): %v\nOpenWriter: %v", rev, rerr, werr)
							}
							return
						}
						continue
					}
					wt, werr := w.Revision(rev)
					switch {
					case (rerr == nil) != (werr == nil) || rerr != nil && rerr.Error() != werr.Error():
						t.Errorf("rev %d: Revlog: %v\nWriter: %v", rev, rerr, werr)
					case rerr == nil && !bytes.Equal(rt, wt):
						t.Errorf("rev %d: Revlog read %q, Writer %q", rev, rt, wt)
					case rerr != nil:
						failed = true
					}
				}
				if werr != nil {
					t.Errorf("OpenWriter: %v; Open and every read accepted the revlog", werr)
				}
				if !failed {
					t.Errorf("no read failed")
				}
			})
		}
	}
}
