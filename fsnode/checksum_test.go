package fsnode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/testenv"
)

// pattern returns n bytes that differ from offset to offset.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>11) ^ seed
	}
	return b
}

// flipByte flips one bit of data file id at off.
func flipByte(t testing.TB, dir string, id uint32, off int64) {
	t.Helper()
	testenv.FlipBit(t, filepath.Join(dir, dataFileName(id)), off)
}

// extentsOf returns ino's extents as the index has them.
func extentsOf(t testing.TB, f *FS, ino Ino) []extent {
	t.Helper()
	var exts []extent
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		exts, err = decodeExtents(tx.Bucket(bucketExtents).Get(inoKey(ino)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return exts
}

// damagedProblems returns fsck's damaged-content problems.
func damagedProblems(t testing.TB, dir string, repair bool) []Problem {
	t.Helper()
	r, err := Fsck(dir, repair)
	if err != nil {
		t.Fatal(err)
	}
	var out []Problem
	for _, p := range r.Problems {
		if p.Damaged {
			out = append(out, p)
		} else if !p.Repaired {
			t.Errorf("unexpected problem: %s", p)
		}
	}
	return out
}

// TestDamagedByteIsEIO: one flipped byte in a data file makes reads of
// its run fail with EIO (and ErrDamaged), leaves the other runs readable,
// and fsck names the file and the extent; repair leaves it as it is.
func TestDamagedByteIsEIO(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{}))
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	data := pattern(3*maxRunLen+1000, 1)
	a := createFile(t, f, d.Ino, "big", data)
	createFile(t, f, RootIno, "other", pattern(100000, 2))
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	exts := extentsOf(t, f, a.Ino)
	if len(exts) != 4 || exts[1].Off != maxRunLen || exts[1].Run != maxRunLen {
		t.Fatalf("a %d-byte write is stored as %+v, want runs of %d", len(data), exts, maxRunLen)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	flipByte(t, dir, exts[1].File, exts[1].FileOff+12345)

	f = must[*FS](t)(Open(dir, Options{}))
	h := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDONLY))
	buf := make([]byte, 128<<10)
	// Before the damaged run, and after it: fine.
	for _, off := range []int64{0, maxRunLen - 128<<10, 2 * maxRunLen, 3 * maxRunLen} {
		n, err := f.Read(bg, h, off, buf)
		if err != nil || !bytes.Equal(buf[:n], data[off:off+int64(n)]) {
			t.Fatalf("read at %d: %d, %v", off, n, err)
		}
	}
	// Any read touching it, even far from the flipped byte: EIO.
	for _, off := range []int64{2*maxRunLen - 1000, maxRunLen - 10, maxRunLen + 12000} {
		_, err := f.Read(bg, h, off, buf)
		wantErrno(t, err, syscall.EIO)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), fmt.Sprintf("inode %d", a.Ino)) {
			t.Fatalf("read at %d: %v, want ErrDamaged naming inode %d", off, err, a.Ino)
		}
	}
	if _, err := f.ReadFile(bg, "d/big"); ToErrno(err) != syscall.EIO {
		t.Fatalf("ReadFile: %v, want EIO", err)
	}
	f.Release(h)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, repair := range []bool{false, true, false} {
		probs := damagedProblems(t, dir, repair)
		want := fmt.Sprintf("/d/big: data damaged (extent at offset %d, data-0001", maxRunLen)
		if len(probs) != 1 || !strings.HasPrefix(probs[0].String(), want) || probs[0].Repaired {
			t.Fatalf("repair %v: fsck reports %v, want one unrepaired %q", repair, probs, want)
		}
		if repair && !strings.Contains(probs[0].String(), "cannot be repaired") {
			t.Errorf("repair does not say it cannot repair: %s", probs[0])
		}
	}
	// Repair kept the file and its size.
	f = must[*FS](t)(Open(dir, Options{}))
	defer f.Close()
	if got := must[Attr](t)(f.LookupPath(bg, "d/big")); got.Size != uint64(len(data)) {
		t.Fatalf("size after repair %d", got.Size)
	}
}

// TestChecksumsSurviveCuts: overwrites and truncates that cut extents,
// appends, a sink ingest and compaction keep every run's CRC right (fsck
// verifies all of them at cleanup and after reopening), and the contents
// read back equal a model, in small and large reads.
func TestChecksumsSurviveCuts(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{InlineMax: 64, DataFileMax: 4 << 20}))
	model := pattern(2*maxRunLen+333, 3)
	a := createFile(t, f, RootIno, "f", model)
	h := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDWR))
	write := func(off int, p []byte) {
		t.Helper()
		if _, err := f.Write(bg, h, int64(off), p); err != nil {
			t.Fatal(err)
		}
		if end := off + len(p); end > len(model) {
			model = append(model, make([]byte, end-len(model))...)
		}
		copy(model[off:], p)
	}
	truncate := func(n int) {
		t.Helper()
		sz := uint64(n)
		must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Size: &sz}))
		if n < len(model) {
			model = model[:n]
		} else {
			model = append(model, make([]byte, n-len(model))...)
		}
	}
	write(4096, pattern(8192, 4))         // cuts the first run in three
	write(maxRunLen-100, pattern(300, 5)) // straddles two runs
	truncate(maxRunLen + maxRunLen/2 + 7) // cuts the second run
	for i := range 50 {                   // small appends: one run grows
		write(len(model), pattern(1000+i, byte(i)))
	}
	truncate(len(model) + 5000) // a hole
	write(len(model)-100, pattern(3*maxRunLen, 6))
	check := func(what string) {
		t.Helper()
		for _, step := range []int{4096, 128 << 10, 3 * maxRunLen} {
			buf := make([]byte, step)
			for off := 0; off < len(model); off += step {
				n, err := f.Read(bg, h, int64(off), buf)
				if err != nil || !bytes.Equal(buf[:n], model[off:min(len(model), off+step)]) {
					t.Fatalf("%s: read %d at %d: %d, %v", what, step, off, n, err)
				}
			}
		}
	}
	check("written")
	for _, e := range f.inodes[a.Ino].exts {
		if e.Run > maxRunLen || e.Head+e.Len > e.Run {
			t.Fatalf("extent %+v outside its run", e)
		}
	}
	// A sink file of several runs, and compaction of it all.
	s := f.NewSink(bg)
	sd := pattern(2*maxRunLen+77, 7)
	w := must[io.WriteCloser](t)(s.Create("s/big", int64(len(sd))))
	for p := sd; len(p) > 0; p = p[min(len(p), 40000):] {
		if _, err := w.Write(p[:min(len(p), 40000)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Release(h)
	f = closeAndReopen(t, f, dir)
	h = must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDWR))
	check("reopened")
	write(0, pattern(5*maxRunLen, 8)) // everything before is dead
	if _, err := f.Compact(bg); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	if got, err := f.ReadFile(bg, "s/big"); err != nil || !bytes.Equal(got, sd) {
		t.Fatalf("sink file: %v", err)
	}
	f.Release(h)
	f = closeAndReopen(t, f, dir)
	h = must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDONLY))
	check("compacted and reopened")
	f.Release(h)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// TestCompactKeepsDamage: compaction copies a damaged run whole, with its
// old CRC: the copy still fails to read and fsck still names the file.
func TestCompactKeepsDamage(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{InlineMax: 16, DataFileMax: 1 << 20}))
	keep := pattern(300000, 9)
	a := createFile(t, f, RootIno, "keep", keep)
	createFile(t, f, RootIno, "gone", pattern(700000, 10))
	createFile(t, f, RootIno, "later", pattern(2000000, 11)) // starts data-0002
	if err := f.Unlink(bg, RootIno, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	e := extentsOf(t, f, a.Ino)[0]
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	flipByte(t, dir, e.File, e.FileOff+7)
	f = must[*FS](t)(Open(dir, Options{InlineMax: 16, DataFileMax: 1 << 20}))
	st, err := f.Compact(bg)
	if err != nil || st.FilesRemoved == 0 {
		t.Fatalf("compact: %+v, %v", st, err)
	}
	if moved := extentsOf(t, f, a.Ino)[0]; moved.File == e.File || moved.Sum != e.Sum {
		t.Fatalf("damaged extent %+v became %+v", e, moved)
	}
	if _, err := f.ReadFile(bg, "keep"); ToErrno(err) != syscall.EIO {
		t.Fatalf("read after compaction: %v, want EIO", err)
	}
	if got, err := f.ReadFile(bg, "later"); err != nil || !bytes.Equal(got, pattern(2000000, 11)) {
		t.Fatalf("later: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if probs := damagedProblems(t, dir, false); len(probs) != 1 || probs[0].Path != "/keep" {
		t.Fatalf("fsck after compaction: %v", probs)
	}
}

// toV1 rewrites a closed version 2 cache as version 1 wrote it: extent
// records of 28 bytes without checksums, each file's runs merged back
// into one extent where contiguous, and version 1.
func toV1(t testing.TB, dir string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, indexName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExtents)
		type rec struct{ k, v []byte }
		var recs []rec
		b.ForEach(func(k, v []byte) error {
			recs = append(recs, rec{bytes.Clone(k), bytes.Clone(v)})
			return nil
		})
		for _, r := range recs {
			exts, err := decodeExtents(r.v)
			if err != nil {
				return err
			}
			var v1 []extent
			for _, e := range exts {
				if n := len(v1); n > 0 && v1[n-1].end() == e.Off && v1[n-1].File == e.File && v1[n-1].FileOff+v1[n-1].Len == e.FileOff {
					v1[n-1].Len += e.Len
					continue
				}
				v1 = append(v1, e)
			}
			out := make([]byte, 4, 4+extentRecordLenV1*len(v1))
			binary.BigEndian.PutUint32(out, uint32(len(v1)))
			for _, e := range v1 {
				out = binary.BigEndian.AppendUint64(out, uint64(e.Off))
				out = binary.BigEndian.AppendUint32(out, e.File)
				out = binary.BigEndian.AppendUint64(out, uint64(e.FileOff))
				out = binary.BigEndian.AppendUint64(out, uint64(e.Len))
			}
			if err := b.Put(r.k, out); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaVersion, []byte{0, 0, 0, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cacheVersion(t testing.TB, dir string) uint32 {
	t.Helper()
	ver, _, err := checkVersion(filepath.Join(dir, indexName), time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	return ver
}

// TestMigrateV1: a version 1 cache (extents without checksums, one of
// them longer than a run) is checked as it is by a plain fsck, upgraded
// by Open in one transaction (a failed upgrade leaves version 1), and
// then reads the same, with a CRC per run that fsck verifies.
func TestMigrateV1(t *testing.T) {
	dir := t.TempDir()
	f := must[*FS](t)(Create(dir, Options{InlineMax: 100}))
	files := map[string][]byte{
		"big":     pattern(2*maxRunLen+4321, 12),
		"d/small": []byte("inline"),
		"d/mid":   pattern(5000, 13),
	}
	if _, err := f.MkdirAll(bg, "d", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := f.WriteFile(bg, name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := must[Attr](t)(f.LookupPath(bg, "big"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	toV1(t, dir)
	if v := cacheVersion(t, dir); v != 1 {
		t.Fatalf("fixture has version %d", v)
	}
	checkFsck(t, dir) // the old layout, read-only
	if v := cacheVersion(t, dir); v != 1 {
		t.Fatalf("a plain fsck upgraded the cache to %d", v)
	}

	// A migration that fails (a data file that cannot be read) changes
	// nothing.
	data1 := filepath.Join(dir, dataFileName(1))
	if err := os.Rename(data1, data1+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data1, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("Open upgraded a cache whose data file is a directory")
	}
	if v := cacheVersion(t, dir); v != 1 {
		t.Fatalf("a failed upgrade left version %d", v)
	}
	os.Remove(data1)
	if err := os.Rename(data1+".away", data1); err != nil {
		t.Fatal(err)
	}

	f = must[*FS](t)(Open(dir, Options{}))
	f.db.View(func(tx *bolt.Tx) error {
		if v, err := readVersion(tx.Bucket(bucketMeta)); v != formatVersion {
			t.Fatalf("version %d (%v) after Open", v, err)
		}
		return nil
	})
	for name, data := range files {
		if got, err := f.ReadFile(bg, name); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s after upgrade: %v", name, err)
		}
	}
	exts := extentsOf(t, f, a.Ino)
	big := files["big"]
	if len(exts) != 3 {
		t.Fatalf("big upgraded to %+v, want 3 runs", exts)
	}
	for _, e := range exts {
		if !e.whole() || e.Sum != checksum(big[e.Off:e.end()]) {
			t.Errorf("extent %+v: CRC %08x, want %08x of its bytes", e, e.Sum, checksum(big[e.Off:e.end()]))
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)

	// fsck --repair upgrades too.
	dir2 := t.TempDir()
	f = must[*FS](t)(Create(dir2, Options{}))
	if err := f.WriteFile(bg, "x", pattern(10000, 14), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Close()
	toV1(t, dir2)
	if r, err := Fsck(dir2, true); err != nil || !r.OK() {
		t.Fatalf("fsck --repair of version 1: %v %v", r, err)
	}
	if v := cacheVersion(t, dir2); v != formatVersion {
		t.Fatalf("version %d after fsck --repair", v)
	}
	checkFsck(t, dir2)
}

// TestUnfinishedIngestRefused: a cache made by CreateForIngest whose sink
// never finished is refused by Open and Fsck with ErrUnfinished, before
// and after files came, and after its sink's Abort (which leaves the
// files to the cache's maker); Finish clears the mark in its commit.
func TestUnfinishedIngestRefused(t *testing.T) {
	for _, stage := range []string{"empty", "files", "aborted", "finished"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			f := must[*FS](t)(CreateForIngest(dir, Options{InlineMax: 8}))
			if stage != "empty" {
				s := f.NewSink(bg)
				for _, name := range []string{".hg/requires", ".hg/store/data/a.i"} {
					w := must[io.WriteCloser](t)(s.Create(name, 100))
					w.Write(pattern(100, 1))
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				}
				switch stage {
				case "finished":
					if err := s.Finish(); err != nil {
						t.Fatal(err)
					}
				case "aborted":
					if err := s.Abort(); err != nil {
						t.Fatal(err)
					}
					if _, err := f.LookupPath(bg, ".hg/store/data/a.i"); err != nil {
						t.Errorf("Abort of a fresh cache's sink removed a file: %v", err)
					}
				}
			}
			// Abandoned (as by a killed clone): Close commits what there is.
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			g, oerr := Open(dir, Options{})
			if g != nil {
				g.Close()
			}
			_, ferr := Fsck(dir, true)
			if stage == "finished" {
				if oerr != nil || ferr != nil {
					t.Fatalf("finished ingest: Open %v, Fsck %v", oerr, ferr)
				}
				checkFsck(t, dir)
				return
			}
			for _, err := range []error{oerr, ferr} {
				if !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), dir) {
					t.Errorf("got %v, want ErrUnfinished naming %s", err, dir)
				}
			}
			if cacheVersion(t, dir) != formatVersion {
				t.Error("version changed")
			}
		})
	}
}

const killedIngestEnv = "FSNODE_KILLED_INGEST_DIR"

// TestKilledIngestRefused: a process filling a cache made by
// CreateForIngest is killed (SIGKILL) mid-ingest, after some of its
// batches committed; the cache it leaves is refused with ErrUnfinished.
func TestKilledIngestRefused(t *testing.T) {
	if os.Getenv(killedIngestEnv) != "" {
		t.Skip("in the child")
	}
	dir := filepath.Join(t.TempDir(), "cache")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledIngestChild$")
	cmd.Env = append(os.Environ(), killedIngestEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if line != "COMMITTED\n" {
		t.Fatalf("child said %q", line)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrUnfinished) {
		t.Fatalf("Open of a killed ingest: %v, want ErrUnfinished", err)
	}
	if _, err := Fsck(dir, false); !errors.Is(err, ErrUnfinished) {
		t.Fatalf("Fsck of a killed ingest: %v, want ErrUnfinished", err)
	}
}

// TestKilledIngestChild ingests files until killed; it runs only under
// TestKilledIngestRefused.
func TestKilledIngestChild(t *testing.T) {
	dir := os.Getenv(killedIngestEnv)
	if dir == "" {
		t.Skip("only run by TestKilledIngestRefused")
	}
	f, err := CreateForIngest(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.NewSink(bg)
	for i := 0; ; i++ {
		data := pattern(5000+i, byte(i))
		w, err := s.Create(fmt.Sprintf("d%d/f%d", i%10, i), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if i == 100 {
			if err := f.Sync(bg); err != nil { // files committed, ingest going on
				t.Fatal(err)
			}
			fmt.Println("COMMITTED")
		}
	}
}

// TestRandomDataDamage is the data files' corruption campaign: in each
// run one bit of a random live byte of a random file's data is flipped
// on disk. The file must read EIO where the damage is (the rest of the
// cache as before), fsck must name exactly that file, and --repair must
// keep it and report it unrepaired, with no other problem before or
// after. FSNODE_DAMAGE_RUNS sets the runs (30; make stress 500).
func TestRandomDataDamage(t *testing.T) {
	runs := damageRuns()
	if testing.Short() {
		runs = min(runs, 10)
	}
	tmpl := t.TempDir()
	f := must[*FS](t)(Create(tmpl, Options{CommitInterval: time.Millisecond, DataFileMax: 1 << 20}))
	rng := rand.New(rand.NewSource(7))
	type file struct {
		name string
		ino  Ino
		data []byte
	}
	var files []file
	for i := range 24 {
		// Sizes from just over inline to several runs, over several data files.
		data := pattern(5000+rng.Intn(3*maxRunLen), byte(i))
		name := fmt.Sprintf("f%02d", i)
		a := createFile(t, f, RootIno, name, data)
		files = append(files, file{name, a.Ino, data})
	}
	// Overwrites cut some extents, so damage also meets pieces of runs.
	for _, fl := range files[:8] {
		h := must[Handle](t)(f.Open(bg, fl.ino, syscall.O_RDWR))
		off := rng.Intn(len(fl.data))
		patch := pattern(min(len(fl.data)-off, 3000), 0xee)
		if _, err := f.Write(bg, h, int64(off), patch); err != nil {
			t.Fatal(err)
		}
		copy(fl.data[off:], patch)
		f.Release(h)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	exts := map[Ino][]extent{}
	for _, fl := range files {
		exts[fl.ino] = extentsOf(t, f, fl.ino)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for run := range runs {
		dir := t.TempDir()
		testenv.CopyFiles(t, tmpl, dir)
		victim := files[rng.Intn(len(files))]
		ve := exts[victim.ino]
		e := ve[rng.Intn(len(ve))]
		at := rng.Int63n(e.Len)
		flipByte(t, dir, e.File, e.FileOff+at)

		f := must[*FS](t)(Open(dir, Options{}))
		for _, fl := range files {
			got, err := f.ReadFile(bg, fl.name)
			switch {
			case fl.ino == victim.ino && ToErrno(err) != syscall.EIO:
				t.Fatalf("run %d: %s with a flipped byte at %d: %v, want EIO", run, fl.name, e.Off+at, err)
			case fl.ino != victim.ino && (err != nil || !bytes.Equal(got, fl.data)):
				t.Fatalf("run %d: %s (undamaged): %d bytes, %v", run, fl.name, len(got), err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		for _, repair := range []bool{false, true, false} {
			// One problem per extent of the damaged run (an overwrite
			// may have cut it in pieces), all of them the victim's.
			probs := damagedProblems(t, dir, repair)
			ok := len(probs) > 0
			for _, p := range probs {
				ok = ok && p.Path == "/"+victim.name && !p.Repaired
			}
			if !ok {
				t.Fatalf("run %d (repair %v): fsck reports %v, want /%s damaged and unrepaired", run, repair, probs, victim.name)
			}
		}
	}
	t.Logf("%d runs: every flipped byte read EIO and was named by fsck", runs)
}
