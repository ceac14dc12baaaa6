package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// streamEntry is one file of a stream as real hg wrote it.
type streamEntry struct {
	src  byte // 's' store, 'c' cache (v2); 's' for v1
	name string
	size int64
}

func (e streamEntry) String() string { return fmt.Sprintf("%c %q %d", e.src, e.name, e.size) }

// readPacked1 parses an uncompressed packed1 bundle ("HGS1" "UN"),
// streamclone.py readbundle1header and the v1 entries.
func readPacked1(t *testing.T, data []byte) (entries []streamEntry, reqs string) {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(data))
	head := make([]byte, 6+16+2)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:6]) != "HGS1UN" {
		t.Fatalf("packed1 header %q: %v", head, err)
	}
	count := binary.BigEndian.Uint64(head[6:])
	total := binary.BigEndian.Uint64(head[14:])
	rl := binary.BigEndian.Uint16(head[22:])
	rb := make([]byte, rl)
	if _, err := io.ReadFull(r, rb); err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for i := uint64(0); i < count; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		name, sz, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\x00")
		n, err := strconv.ParseInt(sz, 10, 64)
		if !ok || err != nil {
			t.Fatalf("entry line %q", line)
		}
		if _, err := r.Discard(int(n)); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, streamEntry{'s', name, n})
		sum += uint64(n)
	}
	if sum != total {
		t.Fatalf("packed1 sizes add to %d, header says %d", sum, total)
	}
	return entries, strings.TrimSuffix(string(rb), "\x00")
}

// readStream2Bundle parses an uncompressed HG20 bundle and returns the
// entries of its stream2 part (hg help internals.bundle2; streamclone.py
// _emit2).
func readStream2Bundle(t *testing.T, data []byte) []streamEntry {
	t.Helper()
	r := bytes.NewReader(data)
	u32 := func() uint32 {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			t.Fatal(err)
		}
		return binary.BigEndian.Uint32(b[:])
	}
	magic := make([]byte, 4)
	io.ReadFull(r, magic)
	if string(magic) != "HG20" {
		t.Fatalf("bundle magic %q", magic)
	}
	r.Seek(int64(u32()), io.SeekCurrent) // stream parameters
	for {
		hsize := u32()
		if hsize == 0 {
			t.Fatal("no stream2 part in bundle")
		}
		header := make([]byte, hsize)
		io.ReadFull(r, header)
		ptype := strings.ToLower(string(header[1 : 1+header[0]]))
		var payload []byte
		for {
			n := int32(u32())
			if n == 0 {
				break
			}
			if n < 0 {
				t.Fatalf("unexpected bundle2 interrupt %d", n)
			}
			chunk := make([]byte, n)
			io.ReadFull(r, chunk)
			payload = append(payload, chunk...)
		}
		if ptype != "stream2" {
			continue
		}
		var entries []streamEntry
		pr := bytes.NewReader(payload)
		for pr.Len() > 0 {
			src, _ := pr.ReadByte()
			nl, err1 := binary.ReadUvarint(pr)
			dl, err2 := binary.ReadUvarint(pr)
			if err1 != nil || err2 != nil {
				t.Fatal("bad stream2 entry header")
			}
			name := make([]byte, nl)
			io.ReadFull(pr, name)
			pr.Seek(int64(dl), io.SeekCurrent)
			entries = append(entries, streamEntry{src, string(name), int64(dl)})
		}
		return entries
	}
}

func compareEntries(t *testing.T, what string, got, want []streamEntry) {
	t.Helper()
	if len(got) == len(want) {
		same := true
		for i := range got {
			if got[i] != want[i] {
				same = false
			}
		}
		if same {
			return
		}
	}
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		fmt.Fprintf(&b, "%s%-70s | %s\n", mark, g, w)
	}
	t.Errorf("%s differs from hg (ours | hg):\n%s", what, b.String())
}

// addOddFiles puts files into a copy of a store that only the walk looks
// at: revlog-like names of every kind (volatile, secondary, empty) at the
// top and under data/, a non-revlog, and a fncache entry whose file is
// missing.
func addOddFiles(t *testing.T, st *Store) {
	t.Helper()
	write := func(rel string, size int) {
		p := filepath.Join(st.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range []string{"00changelog.n", "00manifest.n", "00changelog-0123abcd.nd", "zz.idx", "aa.dat", "mm.sda",
		"undo.backup.00manifest.i", "foo.i.tmpcensored", "notarevlog", "00changelog.i.a"} {
		write(n, 10+i)
	}
	write("empty.d", 0)
	if st.Layout == LayoutBasic || st.Layout == LayoutEncoded {
		write("data/zzz.n", 7)
		write("data/sub/q.sda", 8)
		write("data/sub/empty.i", 0)
		write("meta/dir/00manifest.i", 9)
		write("data/README", 5)
	} else {
		write("data/not-in-fncache.i", 5)
		f, err := os.OpenFile(filepath.Join(st.Dir, "fncache"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("data/missing.i\n")
		f.Close()
	}
}

// TestWalkMatchesStreamBundles compares Walk (and the v2 extras) with the
// files, sizes and order of the stream bundles real hg writes, in every
// layout.
func TestWalkMatchesStreamBundles(t *testing.T) {
	t.Parallel()
	for _, l := range []Layout{LayoutBasic, LayoutEncoded, LayoutFncache, LayoutDotencode} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, layoutRepo(t, l))
			st, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			addOddFiles(t, st)
			if l == LayoutEncoded {
				// hg decodes EncodeDir twice when walking an encoded store,
				// so it names this file "data/x.hg/y.i" and then cannot
				// open it: stream generation aborts. Check that we mirror
				// the name, then take the file away so hg can run.
				files, err := st.Walk()
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, f := range files {
					if f.Path == "data/x.hg.hg.hg/y.i" {
						found = true
						if f.Name != "data/x.hg/y.i" {
							t.Errorf("Walk names %q %q, hg names it data/x.hg/y.i", f.Path, f.Name)
						}
					}
				}
				if !found {
					t.Error("Walk does not list data/x.hg.hg.hg/y.i")
				}
				if err := os.Remove(filepath.Join(st.Dir, "data/x.hg.hg.hg/y.i")); err != nil {
					t.Fatal(err)
				}
			}
			// A non-publishing repository with caches, so that v2 carries
			// phaseroots and cache files.
			if err := os.WriteFile(filepath.Join(root, ".hg", "hgrc"), []byte("[phases]\npublish = false\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Hg(t, root, "tags")

			files, err := st.Walk()
			if err != nil {
				t.Fatal(err)
			}
			var ours []streamEntry
			for _, f := range files {
				ours = append(ours, streamEntry{'s', EncodeDir(f.Name), f.Size})
				if st.Encode(f.Name) != f.Path && l != LayoutEncoded {
					t.Errorf("%q: Path %q, Encode %q", f.Name, f.Path, st.Encode(f.Name))
				}
				if fi, err := os.Stat(filepath.Join(st.Dir, filepath.FromSlash(f.Path))); err != nil || fi.Size() != f.Size {
					t.Errorf("%q: stat %q: %v", f.Name, f.Path, err)
				}
			}
			out := filepath.Join(t.TempDir(), "packed1.hg")
			testenv.Hg(t, root, "debugcreatestreamclonebundle", out)
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			theirs, _ := readPacked1(t, data)
			compareEntries(t, "Walk vs packed1", ours, theirs)

			out2 := filepath.Join(t.TempDir(), "v2.hg")
			testenv.Hg(t, root, "bundle", "-q", "-a", "--type", "none-v2;stream=v2", out2)
			data, err = os.ReadFile(out2)
			if err != nil {
				t.Fatal(err)
			}
			theirs = readStream2Bundle(t, data)
			ours = ours[:0]
			for _, f := range files {
				ours = append(ours, streamEntry{'s', f.Name, f.Size})
			}
			snap, err := st.SnapshotFiles(false, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap) != 1 || snap[0].Name != "phaseroots" {
				t.Errorf("SnapshotFiles = %v, want phaseroots", snap)
			}
			for _, f := range snap {
				ours = append(ours, streamEntry{'s', f.Name, f.Size})
			}
			caches, err := st.CacheFiles()
			if err != nil {
				t.Fatal(err)
			}
			if len(caches) < 3 {
				t.Errorf("only %d cache files: %v", len(caches), caches)
			}
			for _, f := range caches {
				ours = append(ours, streamEntry{'c', f.Name, f.Size})
			}
			compareEntries(t, "Walk+SnapshotFiles+CacheFiles vs stream2", ours, theirs)
		})
	}
}

// TestCacheFileNames checks that every cache file each Mercurial copies
// in a clone (cacheutil.cachetocopy) is in CacheFileNames.
func TestCacheFileNames(t *testing.T) {
	const list = "from mercurial import cacheutil; print(' '.join(n.decode() for n in cacheutil.cachetocopy(None)))"
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			var out []byte
			if hg.Major() < 7 {
				// hg 6.3's debugshell has no -c.
				cmd := testenv.HgPython(t, list)
				var err error
				if out, err = cmd.Output(); err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
			} else {
				dir := t.TempDir()
				hg.Run(t, "", "init", dir)
				out = hg.Run(t, dir, "debugshell", "-c", list)
			}
			theirs := strings.Fields(string(out))
			if len(theirs) < 10 {
				t.Fatalf("%s lists %q", hg.Name, out)
			}
			for _, n := range theirs {
				if !slices.Contains(CacheFileNames(), n) {
					t.Errorf("%s copies %s, not in CacheFileNames", hg.Name, n)
				}
			}
		})
	}
}

func TestRevlogType(t *testing.T) {
	for name, want := range map[string]int{
		"data/a.i":          typeRevlogMain,
		"x.i.tmpcensored":   typeRevlogMain,
		"data/a.d":          typeFilelog | typeRevlogOther,
		"00changelog.n":     typeFilelog | typeRevlogOther | typeVolatile,
		"00changelog-1.nd":  typeFilelog | typeRevlogOther | typeVolatile,
		"a.sda":             typeFilelog | typeRevlogOther,
		"phaseroots":        0,
		"data/a.i.orig":     0,
		"x.d.tmpcensored":   typeFilelog | typeRevlogOther,
		"00changelog.i.a":   0,
		"undo.backupfiles":  0,
		"requires":          0,
		"00changelog.idx":   typeFilelog | typeRevlogOther,
		"00changelog-a.dat": typeFilelog | typeRevlogOther,
	} {
		if got := revlogType(name); got != want {
			t.Errorf("revlogType(%q) = %#x, want %#x", name, got, want)
		}
	}
}

// panicWalker is a storeFS whose sizes panics when told to; it counts
// its closes (forked walkers close on goroutines of their own).
type panicWalker struct {
	panics bool
	closed *atomic.Int64
	twin   *panicWalker // what fork returns
}

func (w *panicWalker) isDir(string) bool                                  { return true }
func (w *panicWalker) list(string, func(string) bool) ([]dirEntry, error) { return nil, nil }
func (w *panicWalker) fork() storeFS                                      { return w.twin }
func (w *panicWalker) close()                                             { w.closed.Add(1) }
func (w *panicWalker) sizes(rels []string, sizes []int64, errs []error, data [][]byte) {
	if w.panics {
		panic("walker broke")
	}
	time.Sleep(2 * time.Millisecond) // so that the other walker gets chunks too
	for i := range rels {
		sizes[i] = 1
	}
}

// TestWalkForkedPanics: a panic on either walker reaches the caller once
// both have stopped, and the forked walker is closed.
func TestWalkForkedPanics(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the walk forks only with two Ps
	entries := make([]string, 8*statChunk)
	for i := range entries {
		entries[i] = fmt.Sprintf("data/f%d.i", i)
	}
	for _, which := range []string{"main", "forked"} {
		var closed atomic.Int64
		second := &panicWalker{panics: which == "forked", closed: &closed}
		main := &panicWalker{panics: which == "main", closed: &closed, twin: second}
		got := func() (r any) {
			defer func() { r = recover() }()
			(&Store{}).fncacheFiles(main, entries, entries)
			return nil
		}()
		if got != "walker broke" {
			t.Errorf("%s walker's panic: caller got %v", which, got)
		}
		if n := closed.Load(); n != 1 {
			t.Errorf("%s walker's panic: forked walker closed %d times", which, n)
		}
	}
}

// TestWalkersFork: the fncache walk forks Walkers-1 walkers (one by
// default, none for HGFS_TUNE=-walkfork), closes each, and sizes every
// entry whichever walker took it.
func TestWalkersFork(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 3)))
	entries := make([]string, 8*statChunk)
	for i := range entries {
		entries[i] = fmt.Sprintf("data/f%d.i", i)
	}
	for walkers, forks := range map[int]int{0: DefaultWalkers - 1, 1: 0, 2: 1, 3: 2} {
		var closed atomic.Int64
		main := &panicWalker{closed: &closed, twin: &panicWalker{closed: &closed}}
		got, err := (&Store{Walkers: walkers}).fncacheFiles(main, entries, entries)
		if err != nil {
			t.Fatalf("walkers=%d: %v", walkers, err)
		}
		if n := closed.Load(); n != int64(forks) {
			t.Errorf("walkers=%d: %d forked walkers closed, want %d", walkers, n, forks)
		}
		if len(got) != len(entries) {
			t.Errorf("walkers=%d: %d entries, want %d", walkers, len(got), len(entries))
		}
		for i, e := range got {
			if e.name != entries[i] || e.size != 1 {
				t.Fatalf("walkers=%d: entry %d is %+v", walkers, i, e)
			}
		}
	}
}
