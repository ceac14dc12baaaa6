package fsnode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/testenv"
)

// DamageRuns is how many random-corruption runs TestRandomIndexDamage
// makes: FSNODE_DAMAGE_RUNS, default 30 (make stress runs hundreds).
func damageRuns() int {
	if n, err := strconv.Atoi(os.Getenv("FSNODE_DAMAGE_RUNS")); err == nil && n > 0 {
		return n
	}
	return 30
}

// BuildDamageCache makes a closed cache with a few hundred files (inline
// and multi-extent ones over several data files), directories, symlinks
// and hard links, for the corruption campaigns.
func buildDamageCache(t testing.TB, dir string) {
	t.Helper()
	f, err := Create(dir, Options{CommitInterval: time.Millisecond, DataFileMax: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(42))
	dirs := []Ino{RootIno}
	for i := range 30 {
		parent := dirs[rng.Intn(len(dirs))]
		a := must[Attr](t)(f.Mkdir(bg, parent, fmt.Sprintf("dir%02d", i), 0o755))
		dirs = append(dirs, a.Ino)
	}
	var files []Ino
	for i := range 300 {
		parent := dirs[rng.Intn(len(dirs))]
		name := fmt.Sprintf("file%03d", i)
		switch {
		case i%25 == 0: // large, written out of order: several extents
			a, h, err := f.Create(bg, parent, name, 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
			if err != nil {
				t.Fatal(err)
			}
			for j := range 8 {
				off := int64(rng.Intn(256 << 10))
				buf := make([]byte, 8<<10+rng.Intn(24<<10))
				rng.Read(buf)
				if _, err := f.Write(bg, h, off, buf); err != nil {
					t.Fatal(err)
				}
				_ = j
			}
			f.Release(h)
			f.Forget(a.Ino, 1)
			files = append(files, a.Ino)
		default:
			buf := make([]byte, rng.Intn(6000))
			rng.Read(buf)
			files = append(files, createFile(t, f, parent, name, buf).Ino)
		}
		if i%10 == 0 {
			must[Attr](t)(f.Symlink(bg, parent, name+".lnk", strings.Repeat("../", rng.Intn(3))+name))
		}
		if i%30 == 0 {
			must[Attr](t)(f.Link(bg, files[rng.Intn(len(files))], dirs[rng.Intn(len(dirs))], name+".hard"))
		}
	}
	if err := f.Unlink(bg, dirs[0], "file000"); err != nil && !errors.Is(err, syscall.ENOENT) {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// corruptIndex damages dir's index.db in one of several ways, chosen by
// rng, and says what it did.
func corruptIndex(t testing.TB, dir string, rng *rand.Rand) string {
	t.Helper()
	path := filepath.Join(dir, indexName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	// Pages past the high-water mark are only room to grow into.
	m0, m1 := parseBoltMeta(b), parseBoltMeta(b[ps:])
	pages := int(max(m0.hwm, m1.hwm))
	if pages < 3 || pages > len(b)/ps {
		pages = len(b) / ps
	}
	page := 2 + rng.Intn(pages-2)
	// Mostly a page in use (free pages are what a damaged file most
	// often loses harmlessly): the walk's list of reachable pages.
	if used := usedPages(b); len(used) > 0 && rng.Intn(5) > 0 {
		page = int(used[rng.Intn(len(used))])
	}
	var what string
	switch mode := rng.Intn(6); mode {
	case 0:
		n := 1 + rng.Intn(8)
		for range n {
			b[rng.Intn(pages*ps)] ^= byte(1 + rng.Intn(255))
		}
		what = fmt.Sprintf("%d random bytes flipped", n)
	case 1, 2:
		n := 1 + rng.Intn(16)
		for range n {
			b[page*ps+rng.Intn(ps)] ^= byte(1 + rng.Intn(255))
		}
		what = fmt.Sprintf("%d bytes of page %d flipped", n, page)
	case 3:
		rng.Read(b[page*ps : (page+1)*ps])
		what = fmt.Sprintf("page %d overwritten with random bytes", page)
	case 4:
		clear(b[page*ps : (page+1)*ps])
		what = fmt.Sprintf("page %d zeroed", page)
	case 5:
		src := 2 + rng.Intn(pages-2)
		copy(b[page*ps:(page+1)*ps], b[src*ps:(src+1)*ps])
		what = fmt.Sprintf("page %d overwritten with page %d", page, src)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return what
}

// markOpen leaves the closed cache in dir marked open, as a crash would.
func markOpen(t testing.TB, dir string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, indexName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaOpen, u64(1)) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// usedPages lists the pages of a bbolt file in use (not meta, not free).
func usedPages(b []byte) []uint64 {
	c := &boltChecker{f: bytesReaderAt(b), size: int64(len(b))}
	var used []uint64
	c.psize = 4096
	m := parseBoltMeta(b)
	m1 := parseBoltMeta(b[4096:])
	if m1.txid > m.txid {
		m = m1
	}
	c.hwm = m.hwm
	c.free = map[uint64]bool{}
	c.reached = map[uint64]bool{0: true, 1: true}
	c.checkFreelist(m.freelist)
	c.walk(m.root, nil, nil, 0, "", nil)
	for id := range c.reached {
		if id >= 2 && !c.free[id] {
			used = append(used, id)
		}
	}
	slices.Sort(used)
	return used
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// damageOutcome is what happened to one step of a run.
type damageOutcome int

const (
	stepOK damageOutcome = iota
	stepPanic
	stepHang
)

// damageStepTimeout bounds each step of a run: a step that takes longer
// counts as a hung request.
var damageStepTimeout = 20 * time.Second

// runStep runs fn in a goroutine of its own, recovering a panic that
// escapes it, and gives up after damageStepTimeout.
func runStep(fn func()) (damageOutcome, any) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		fn()
	}()
	select {
	case r := <-done:
		if r != nil {
			return stepPanic, r
		}
		return stepOK, nil
	case <-time.After(damageStepTimeout):
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		return stepHang, b.String()
	}
}

// walkAll reads everything reachable through the FS API: entries,
// attributes, file contents, link targets. It returns the errors seen.
func walkAll(f *FS) (errs int) {
	seen := map[Ino]bool{}
	var walk func(ino Ino, depth int)
	walk = func(ino Ino, depth int) {
		if seen[ino] || depth > 64 {
			return
		}
		seen[ino] = true
		var off uint64
		for {
			ents, err := f.ReadDirLimit(bg, ino, off, 64)
			if err != nil {
				errs++
				return
			}
			if len(ents) == 0 {
				return
			}
			for _, e := range ents {
				off = e.Off
				a, err := f.Lookup(bg, ino, e.Name)
				if err != nil {
					errs++
					continue
				}
				switch a.Mode & syscall.S_IFMT {
				case syscall.S_IFDIR:
					walk(a.Ino, depth+1)
				case syscall.S_IFLNK:
					if _, err := f.Readlink(bg, a.Ino); err != nil {
						errs++
					}
				case syscall.S_IFREG:
					h, err := f.Open(bg, a.Ino, syscall.O_RDONLY)
					if err != nil {
						errs++
						break
					}
					// Damage can make a size of up to a PiB (a sparse
					// file as far as anyone can tell): read at most the
					// first 4 MiB and the last 64 KiB.
					buf := make([]byte, 64<<10)
					for o := int64(0); o < int64(a.Size); o += int64(len(buf)) {
						if o >= 4<<20 && o < int64(a.Size)-int64(len(buf)) {
							o = int64(a.Size) - int64(len(buf))
						}
						if _, err := f.Read(bg, h, o, buf); err != nil {
							errs++
							break
						}
					}
					f.Release(h)
				}
				f.Forget(a.Ino, 1)
			}
		}
	}
	if _, err := f.GetAttr(bg, RootIno); err != nil {
		errs++
	}
	walk(RootIno, 0)
	return errs
}

// changeSome makes a few changes all over the tree and syncs them,
// ignoring errors.
func changeSome(f *FS, rng *rand.Rand) {
	ents, _ := f.ReadDir(bg, RootIno, 0)
	for i := range 20 {
		name := fmt.Sprintf("new%02d", i)
		if a, h, err := f.Create(bg, RootIno, name, 0o644, syscall.O_RDWR|syscall.O_CREAT); err == nil {
			buf := make([]byte, rng.Intn(20000))
			f.Write(bg, h, 0, buf)
			f.Release(h)
			f.Forget(a.Ino, 1)
		}
		if len(ents) > 0 {
			e := ents[rng.Intn(len(ents))]
			switch rng.Intn(3) {
			case 0:
				f.Rename(bg, RootIno, e.Name, RootIno, e.Name+".moved", 0)
			case 1:
				f.Unlink(bg, RootIno, e.Name)
			default:
				if a, err := f.Lookup(bg, RootIno, e.Name); err == nil {
					size := uint64(rng.Intn(10000))
					f.SetAttr(bg, a.Ino, SetAttr{Size: &size})
					f.Forget(a.Ino, 1)
				}
			}
		}
	}
	f.Sync(bg)
}

// damageStats are a campaign's figures.
type damageStats struct {
	runs, panics, hangs, poisoned        int
	openRefused, walkErrors, fsckDamaged int
	repairedClean, unrepairable          int
	notConverged, afterRepairErrors      int
}

func (s damageStats) String() string {
	return fmt.Sprintf("%d runs: %d panics, %d hangs; open refused %d, runs with walk errors %d, FS poisoned by a change %d, fsck found damage %d; "+
		"repair: %d clean after, %d reported unrepairable, %d not converged, %d with errors after repair",
		s.runs, s.panics, s.hangs, s.openRefused, s.walkErrors, s.poisoned, s.fsckDamaged,
		s.repairedClean, s.unrepairable, s.notConverged, s.afterRepairErrors)
}

// TestRandomIndexDamage is the random-corruption campaign over index.db:
// for each run, damage a copy of a cache, then Open (an error or a
// working FS, never a panic), walk everything, make and sync a few
// changes (write transactions on the damaged file), Close, fsck, fsck
// --repair and fsck again: clean, or the repair said what it could not
// repair; a repaired cache opens and reads without an error.
// No step may panic or hang.
func TestRandomIndexDamage(t *testing.T) {
	runs := damageRuns()
	if testing.Short() {
		runs = min(runs, 10)
	}
	tmpl := t.TempDir()
	buildDamageCache(t, tmpl)
	// The same cache as a crash leaves it (still marked open): Open then
	// checks the whole index before serving.
	crashed := t.TempDir()
	testenv.CopyFiles(t, tmpl, crashed)
	markOpen(t, crashed)
	var st damageStats
	first := 0
	if s, err := strconv.Atoi(os.Getenv("FSNODE_DAMAGE_SEED")); err == nil {
		first, runs = s-1000, 1 // one run, to look at a failure again
	}
	for run := first; run < first+runs; run++ {
		seed := int64(1000 + run)
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		from := tmpl
		if run%2 == 1 {
			from = crashed
		}
		testenv.CopyFiles(t, from, dir)
		what := corruptIndex(t, dir, rng)
		if from == crashed {
			what += ", not closed cleanly"
		}
		st.runs++
		fail := func(step string, fn func()) bool {
			o, r := runStep(fn)
			switch o {
			case stepPanic:
				st.panics++
				t.Errorf("seed %d (%s): %s panicked: %v", seed, what, step, r)
				return true
			case stepHang:
				st.hangs++
				if keep := os.Getenv("FSNODE_DAMAGE_KEEP"); keep != "" {
					// The cache as damaged, to look at the hang again.
					kept := filepath.Join(keep, fmt.Sprint(seed))
					if err := os.MkdirAll(kept, 0o755); err == nil {
						testenv.CopyFiles(t, from, kept)
						corruptIndex(t, kept, rand.New(rand.NewSource(seed)))
					}
				}
				t.Errorf("seed %d (%s): %s hung; goroutines:\n%s", seed, what, step, r)
				return true
			}
			return false
		}
		var f *FS
		var openErr error
		if fail("open", func() { f, openErr = Open(dir, Options{}) }) {
			continue
		}
		if openErr != nil {
			st.openRefused++
			if !errors.Is(openErr, ErrCorrupt) && !errors.Is(openErr, ErrNotCache) {
				t.Logf("seed %d (%s): open: %v", seed, what, openErr)
			}
		} else {
			var errs int
			if fail("walk", func() { errs = walkAll(f) }) {
				continue
			}
			if errs > 0 {
				st.walkErrors++
			}
			// Changes commit through write transactions on the damaged
			// file: a panic there must poison the FS, not hang it.
			if fail("changes", func() { changeSome(f, rng) }) {
				continue
			}
			if f.poisoned.Load() != nil {
				st.poisoned++
			}
			if fail("close", func() { _ = f.Close() }) {
				continue
			}
		}
		var rep *FsckReport
		var err error
		if fail("fsck", func() { rep, err = Fsck(dir, false) }) {
			continue
		}
		if err != nil {
			t.Errorf("seed %d (%s): fsck: %v", seed, what, err)
			continue
		}
		if !rep.OK() {
			st.fsckDamaged++
		}
		if fail("fsck --repair", func() { rep, err = Fsck(dir, true) }) {
			continue
		}
		if err != nil {
			t.Errorf("seed %d (%s): fsck --repair: %v", seed, what, err)
			continue
		}
		unrepaired := 0
		for _, p := range rep.Problems {
			if !p.Repaired {
				unrepaired++
			}
		}
		var again *FsckReport
		if fail("fsck after repair", func() { again, err = Fsck(dir, false) }) {
			continue
		}
		switch {
		case err != nil:
			t.Errorf("seed %d (%s): fsck after repair: %v", seed, what, err)
		case again.OK():
			st.repairedClean++
			if unrepaired > 0 {
				t.Errorf("seed %d (%s): repair reported %d problems unrepaired, the next fsck is clean", seed, what, unrepaired)
			}
		case unrepaired > 0:
			st.unrepairable++
		default:
			st.notConverged++
			t.Errorf("seed %d (%s): repair said all was repaired, the next fsck found:\n%s", seed, what, again)
			continue
		}
		if !again.OK() {
			continue
		}
		// A repaired cache opens and reads without an error.
		if fail("open after repair", func() { f, openErr = Open(dir, Options{}) }) {
			continue
		}
		if openErr != nil {
			st.afterRepairErrors++
			t.Errorf("seed %d (%s): open after repair: %v", seed, what, openErr)
			continue
		}
		var errs int
		if fail("walk after repair", func() { errs = walkAll(f) }) {
			continue
		}
		if errs > 0 {
			st.afterRepairErrors++
			t.Errorf("seed %d (%s): %d errors reading the repaired cache", seed, what, errs)
		}
		if fail("close after repair", func() { _ = f.Close() }) {
			continue
		}
	}
	t.Logf("index damage campaign: %s", st)
	if st.panics+st.hangs+st.notConverged > 0 {
		t.Errorf("%d panics, %d hangs, %d repairs that did not converge", st.panics, st.hangs, st.notConverged)
	}
}

// TestGuardedView: a panic in a read transaction answers that call with
// an EIO error; bbolt's locks are free again and the FS keeps serving.
func TestGuardedView(t *testing.T) {
	f := newTestFS(t, Options{})
	createFile(t, f, RootIno, "a", []byte("hello"))
	err := f.view("test", func(*bolt.Tx) error { panic("boom") })
	if ToErrno(err) != syscall.EIO || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("view after a panic: %v, want EIO and ErrCorrupt", err)
	}
	if f.poisoned.Load() != nil {
		t.Fatal("a read panic poisoned the FS")
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadFile(bg, "a"); err != nil || string(got) != "hello" {
		t.Fatalf("read after the panic: %q, %v", got, err)
	}
}

// TestGuardedUpdate: a panic in a write transaction poisons the FS: index
// reads and every change answer EIO at once, and Close returns even when
// bbolt's writer lock stays held (here by a transaction left open, as a
// rollback that panicked leaves it).
func TestGuardedUpdate(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	createFile(t, f, RootIno, "a", []byte("hello"))
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	err = f.update("test", func(*bolt.Tx) error { panic("boom") })
	if ToErrno(err) != syscall.EIO {
		t.Fatalf("update after a panic: %v, want EIO", err)
	}
	if f.poisoned.Load() == nil {
		t.Fatal("a write panic did not poison the FS")
	}
	if _, err := f.db.Begin(true); err != nil { // holds the writer lock for good
		t.Fatal(err)
	}
	start := time.Now()
	if err := f.view("test", func(*bolt.Tx) error { return nil }); ToErrno(err) != syscall.EIO {
		t.Errorf("index read on a poisoned FS: %v, want EIO", err)
	}
	if _, err := f.Mkdir(bg, RootIno, "d", 0o755); ToErrno(err) != syscall.EIO {
		t.Errorf("mkdir on a poisoned FS: %v, want EIO", err)
	}
	if err := f.Close(); err == nil {
		t.Error("Close of a poisoned FS reported no error")
	}
	if d := time.Since(start); d > 3*probeTimeout {
		t.Errorf("the poisoned FS took %v to answer and close", d)
	}
}

// TestOpenDamagedAfterCrash: a cache not closed cleanly whose index is
// damaged is refused by Open with a message naming the cache and fsck
// --repair; fsck reports the damage, --repair rebuilds the index (keeping
// the old file) and the next fsck is clean. The damaged page is one from
// the middle of the file, or the root bucket's, on the way to the meta
// bucket whose version Open reads before it checks the whole file.
func TestOpenDamagedAfterCrash(t *testing.T) {
	t.Run("middle", func(t *testing.T) { testOpenDamagedAfterCrash(t, false) })
	t.Run("root", func(t *testing.T) { testOpenDamagedAfterCrash(t, true) })
}

func testOpenDamagedAfterCrash(t *testing.T, root bool) {
	dir := t.TempDir()
	buildDamageCache(t, dir)
	markOpen(t, dir)
	path := filepath.Join(dir, indexName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	used := usedPages(b)
	page := used[len(used)/2]
	for _, id := range used[len(used)/2:] {
		if binary.LittleEndian.Uint64(b[id*4096:]) == id { // a page's start, not an overflow page
			page = id
			break
		}
	}
	if root {
		m, m1 := parseBoltMeta(b), parseBoltMeta(b[4096:])
		if m1.txid > m.txid {
			m = m1
		}
		page = m.root
	}
	clear(b[page*4096 : (page+1)*4096])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "hgfs fsck --repair") {
		t.Fatalf("Open of a damaged index: %v", err)
	}
	r, err := Fsck(dir, false)
	if err != nil || r.OK() {
		t.Fatalf("fsck of a damaged index: %v, %v", r, err)
	}
	r, err = Fsck(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		if !p.Repaired {
			t.Errorf("not repaired: %s", p)
		}
	}
	if _, err := os.Stat(path + ".damaged"); err != nil {
		t.Errorf("the damaged index was not kept: %v", err)
	}
	checkFsck(t, dir)
	f, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if errs := walkAll(f); errs != 0 {
		t.Errorf("%d errors reading the repaired cache", errs)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
