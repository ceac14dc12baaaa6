package fsnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/testenv"
)

func TestCreateOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrNotCache) {
		t.Fatalf("Open empty dir = %v, want ErrNotCache", err)
	}
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, Options{}); !errors.Is(err, ErrExist) {
		t.Errorf("Create over a cache = %v, want ErrExist", err)
	}
	if _, err := Open(dir, Options{LockTimeout: 50 * time.Millisecond}); err == nil {
		t.Errorf("second Open of an open cache succeeded")
	}
	if f.Created().IsZero() {
		t.Error("no creation time")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.Mkdir(bg, RootIno, "x", 0o755); !errors.Is(err, ErrClosed) {
		t.Errorf("Mkdir after Close = %v", err)
	}
}

func TestNewerFormatRefused(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := bolt.Open(filepath.Join(dir, indexName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		v := make([]byte, 4)
		binary.BigEndian.PutUint32(v, maxFormatVersion+1)
		return tx.Bucket(bucketMeta).Put(metaVersion, v)
	})
	db.Close()
	before, _ := os.ReadFile(filepath.Join(dir, indexName))
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("Open = %v, want ErrNewerFormat", err)
	}
	if want := fmt.Sprintf("format version %d, this hgfs reads up to %d", maxFormatVersion+1, maxFormatVersion); !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("message %q lacks %q", err, want)
	}
	if _, err := Fsck(dir, true); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("Fsck = %v, want ErrNewerFormat", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, indexName))
	if !bytes.Equal(before, after) {
		t.Error("refusing the cache modified it")
	}
}

func TestNameChecks(t *testing.T) {
	f := newTestFS(t, Options{})
	long := string(bytes.Repeat([]byte{'x'}, 256))
	for _, c := range []struct {
		name string
		want syscall.Errno
	}{{"", syscall.ENOENT}, {".", syscall.EEXIST}, {"..", syscall.EEXIST}, {"a/b", syscall.EINVAL},
		{"a\x00", syscall.EINVAL}, {long, syscall.ENAMETOOLONG}} {
		_, err := f.Mkdir(bg, RootIno, c.name, 0o755)
		wantErrno(t, err, c.want)
		_, err = f.Symlink(bg, RootIno, c.name, "t")
		wantErrno(t, err, c.want)
	}
	_, _, err := f.Create(bg, RootIno, ".", 0o644, syscall.O_CREAT)
	wantErrno(t, err, syscall.EISDIR)
	wantErrno(t, f.Unlink(bg, RootIno, ".."), syscall.EISDIR)
	wantErrno(t, f.Rmdir(bg, RootIno, "."), syscall.EINVAL)
	wantErrno(t, f.Rmdir(bg, RootIno, ".."), syscall.ENOTEMPTY)
	wantErrno(t, f.Rename(bg, RootIno, ".", RootIno, "x", 0), syscall.EINVAL)
	wantErrno(t, f.Rename(bg, RootIno, "x", RootIno, "y", 4), syscall.EINVAL)
	wantErrno(t, f.Rename(bg, RootIno, "x", RootIno, "y", RenameExchange|RenameNoReplace), syscall.EINVAL)
	_, err = f.Symlink(bg, RootIno, "s", "")
	wantErrno(t, err, syscall.ENOENT)
	_, err = f.Symlink(bg, RootIno, "s", string(bytes.Repeat([]byte{'t'}, 4096)))
	wantErrno(t, err, syscall.ENAMETOOLONG)
	// Lookup of . and .. works.
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	if a := must[Attr](t)(f.Lookup(bg, d.Ino, "..")); a.Ino != RootIno {
		t.Errorf(".. of d is %d", a.Ino)
	}
	if a := must[Attr](t)(f.Lookup(bg, d.Ino, ".")); a.Ino != d.Ino {
		t.Errorf(". of d is %d", a.Ino)
	}
}

func TestHandles(t *testing.T) {
	f := newTestFS(t, Options{})
	a := createFile(t, f, RootIno, "f", []byte("data"))
	h := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_RDONLY))
	_, err := f.Write(bg, h, 0, []byte("x"))
	wantErrno(t, err, syscall.EBADF)
	f.Release(h)
	_, err = f.Read(bg, h, 0, make([]byte, 4))
	wantErrno(t, err, syscall.EBADF)
	wantErrno(t, f.Fsync(bg, h, false), syscall.EBADF)
	wantErrno(t, f.Flush(bg, h), syscall.EBADF)
	f.Release(h) // twice: harmless
	w := must[Handle](t)(f.Open(bg, a.Ino, syscall.O_WRONLY))
	_, err = f.Read(bg, w, 0, make([]byte, 4))
	wantErrno(t, err, syscall.EBADF)
	f.Release(w)
	_, err = f.Open(bg, 12345, syscall.O_RDONLY)
	wantErrno(t, err, syscall.ENOENT)
	_, err = f.GetAttr(bg, 0)
	wantErrno(t, err, syscall.ENOENT)
}

// TestReadFile: ReadFile by path, its errors, and its pin: a file
// unlinked (and its kernel reference forgotten) while pinned keeps its
// contents until the pin goes, as with an open handle.
func TestReadFile(t *testing.T) {
	f := newTestFS(t, Options{})
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	createFile(t, f, d.Ino, "f", []byte("data"))
	must[Attr](t)(f.Symlink(bg, RootIno, "l", "d/f"))
	if got := must[[]byte](t)(f.ReadFile(bg, "d/f")); string(got) != "data" {
		t.Fatalf("ReadFile d/f = %q", got)
	}
	_, err := f.ReadFile(bg, "d")
	wantErrno(t, err, syscall.EISDIR)
	_, err = f.ReadFile(bg, "l")
	wantErrno(t, err, syscall.ELOOP)
	_, err = f.ReadFile(bg, "d/missing")
	wantErrno(t, err, syscall.ENOENT)
	_, err = f.ReadFile(bg, "d/f/x")
	wantErrno(t, err, syscall.ENOTDIR)

	in := must[*inode](t)(f.pinPath("d/f"))
	if err := f.Unlink(bg, d.Ino, "f"); err != nil {
		t.Fatal(err)
	}
	f.Forget(in.ino, 1)
	buf := make([]byte, 4)
	if n, err := f.readIn(in, buf, 0); err != nil || string(buf[:n]) != "data" {
		t.Fatalf("pinned unlinked file reads %q, %v", buf[:n], err)
	}
	f.unpin(in)
	if n, err := f.readIn(in, buf, 0); err != syscall.ENOENT {
		t.Fatalf("unpinned unlinked file reads %q, %v; want ENOENT", buf[:n], err)
	}
}

// TestOrphanLifecycle: an unlinked open file lives until its handle and
// kernel reference are gone; one left open at a crash is reclaimed by
// Open.
func TestOrphanLifecycle(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{InlineMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	a, h, err := f.Create(bg, RootIno, "o", 0o644, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bg, h, 0, []byte("orphan data, long enough for a data file"))
	wantErrno(t, f.Unlink(bg, RootIno, "o"), 0)
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	// Committed as an orphan: nlink 0, listed.
	st := must[Attr](t)(f.GetAttr(bg, a.Ino))
	if st.Nlink != 0 {
		t.Fatalf("nlink %d", st.Nlink)
	}
	_, err = f.Link(bg, a.Ino, RootIno, "again")
	wantErrno(t, err, syscall.ENOENT)
	f.Release(h)
	if _, err := f.GetAttr(bg, a.Ino); err != nil {
		t.Fatalf("reclaimed while the kernel still references it: %v", err)
	}
	f.Forget(a.Ino, 1)
	_, err = f.GetAttr(bg, a.Ino)
	wantErrno(t, err, syscall.ENOENT)

	// Now one that stays open across a "crash": copy the cache while open.
	b, h2, err := f.Create(bg, RootIno, "p", 0o644, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bg, h2, 0, []byte("another orphan"))
	f.Unlink(bg, RootIno, "p")
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	testenv.CopyFiles(t, dir, crashed)
	f.Release(h2)
	f.Forget(b.Ino, 1)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
	r, err := Fsck(crashed, false)
	if err != nil || !r.OK() || r.Orphans != 1 {
		t.Fatalf("fsck of the crashed copy: %v %v", r, err)
	}
	g, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.GetAttr(bg, b.Ino); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("orphan survived Open: %v", err)
	}
	g.Close()
	r, err = Fsck(crashed, false)
	if err != nil || !r.OK() || r.Orphans != 0 {
		t.Fatalf("fsck after reclaiming: %v %v", r, err)
	}
}

// TestReadDirCookiesPersist: cookies survive a reopen, and a listing
// resumed with an old cookie continues where it left off.
func TestReadDirCookiesPersist(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		createFile(t, f, RootIno, fmt.Sprintf("f%d", i), nil)
	}
	first := must[[]DirEntry](t)(f.ReadDir(bg, RootIno, 0))
	f.Close()
	f, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Close(); checkFsck(t, dir) }()
	again := must[[]DirEntry](t)(f.ReadDir(bg, RootIno, 0))
	if fmt.Sprint(first) != fmt.Sprint(again) {
		t.Fatalf("cookies changed across reopen:\n%v\n%v", first, again)
	}
	if first[0].Off < 3 {
		t.Errorf("cookie %d collides with . or ..", first[0].Off)
	}
	f.Unlink(bg, RootIno, "f3")
	rest := must[[]DirEntry](t)(f.ReadDir(bg, RootIno, first[2].Off))
	if len(rest) != 6 || rest[0].Name != "f4" {
		t.Fatalf("resume after f2: %v", rest)
	}
	_, err = f.ReadDir(bg, first[0].Ino, 0)
	wantErrno(t, err, syscall.ENOTDIR)
	// Paging with a limit visits each live entry once.
	var paged []string
	for off := uint64(0); ; {
		page := must[[]DirEntry](t)(f.ReadDirLimit(bg, RootIno, off, 3))
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("page of %d", len(page))
		}
		for _, e := range page {
			paged = append(paged, e.Name)
			off = e.Off
		}
	}
	if len(paged) != 9 {
		t.Fatalf("paged listing %v", paged)
	}
}

func TestStatfsAndStats(t *testing.T) {
	f := newTestFS(t, Options{QueueCap: 4, BatchItems: 2, CommitInterval: time.Hour})
	st, err := f.Statfs(bg)
	if err != nil || st.Blocks == 0 || st.Bsize == 0 || st.NameLen != 255 {
		t.Fatalf("statfs %+v %v", st, err)
	}
	// QueueCap 4 with an hour-long window: only the bound (back-pressure
	// and BatchItems) can make progress here.
	for i := range 50 {
		createFile(t, f, RootIno, fmt.Sprintf("f%d", i), []byte("x"))
		if s := f.Stats(); s.QueueDepth > s.QueueCap+2 {
			t.Fatalf("queue depth %d over its bound %d", s.QueueDepth, s.QueueCap)
		}
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	s := f.Stats()
	if s.Batches < 10 || s.QueueDepth != 0 || s.Items < 50 || s.Commits < s.Batches {
		t.Fatalf("stats %+v", s)
	}
}

// TestConcurrent runs writers, readers, renamers, listers, syncs and a
// compaction at once (run it with -race), then checks contents.
func TestConcurrent(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 512, DataFileMax: 64 << 10, QueueCap: 64, BatchItems: 16})
	shared := must[Attr](t)(f.Mkdir(bg, RootIno, "shared", 0o755))
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.Mkdir(bg, RootIno, fmt.Sprintf("w%d", w), 0o755)
			if err != nil {
				errs <- err
				return
			}
			for i := range 40 {
				name := fmt.Sprintf("f%d", i%8)
				a, h, err := f.Create(bg, d.Ino, name, 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC)
				if err != nil {
					errs <- err
					return
				}
				data := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i*50)
				for off := 0; off < len(data); off += 300 {
					if _, err := f.Write(bg, h, int64(off), data[off:min(off+300, len(data))]); err != nil {
						errs <- err
					}
				}
				if i%10 == 0 {
					if err := f.Fsync(bg, h, false); err != nil {
						errs <- err
					}
				}
				f.Release(h)
				f.Forget(a.Ino, 1)
				// Publish into the shared directory by rename.
				tmp := fmt.Sprintf("tmp%d", w)
				if _, err := f.Link(bg, a.Ino, shared.Ino, tmp); err == nil {
					f.Forget(a.Ino, 1)
					if err := f.Rename(bg, shared.Ino, tmp, shared.Ino, fmt.Sprintf("pub%d", i%5), 0); err != nil {
						errs <- err
					}
				} else {
					errs <- err
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			buf := make([]byte, 4096)
			for {
				select {
				case <-stop:
					return
				default:
				}
				ents, err := f.ReadDir(bg, shared.Ino, 0)
				if err != nil {
					errs <- err
					return
				}
				for _, e := range ents {
					h, err := f.Open(bg, e.Ino, syscall.O_RDONLY)
					if err != nil {
						continue // replaced meanwhile
					}
					n, err := f.Read(bg, h, 0, buf)
					f.Release(h)
					if err != nil {
						errs <- err
						continue
					}
					// Every byte of a published file is its one letter.
					for _, c := range buf[:n] {
						if c != buf[0] {
							errs <- fmt.Errorf("%s: mixed contents %q", e.Name, buf[:min(n, 40)])
							break
						}
					}
				}
				f.Sync(bg)
			}
		}()
	}
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := f.Compact(bg); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		for i := 32; i < 40; i++ {
			want := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i*50)
			got, err := f.ReadFile(bg, fmt.Sprintf("w%d/f%d", w, i%8))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("w%d/f%d: %d bytes, %v", w, i%8, len(got), err)
			}
		}
	}
}

func TestCompact(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{InlineMax: 16, DataFileMax: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string][]byte{}
	for i := range 40 {
		data := bytes.Repeat([]byte{byte('A' + i%26)}, 3000+i)
		name := fmt.Sprintf("f%d", i)
		createFile(t, f, RootIno, name, data)
		if i%4 == 0 {
			keep[name] = data
		}
	}
	for i := range 40 {
		if i%4 != 0 {
			f.Unlink(bg, RootIno, fmt.Sprintf("f%d", i))
		}
	}
	before := f.Stats().DataFiles
	st, err := f.Compact(bg)
	if err != nil {
		t.Fatal(err)
	}
	after := f.Stats().DataFiles
	if st.FilesRemoved == 0 || after >= before || st.BytesCopied == 0 {
		t.Fatalf("compact %+v: %d -> %d data files", st, before, after)
	}
	for name, data := range keep {
		if got, err := f.ReadFile(bg, name); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s after compact: %v", name, err)
		}
	}
	f.Close()
	checkFsck(t, dir)
	r, _ := Fsck(dir, false)
	if r.DataBytes > 2*r.LiveBytes+int64(32<<10) {
		t.Errorf("after compaction %d of %d bytes are live", r.LiveBytes, r.DataBytes)
	}
	f, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range keep {
		if got, err := f.ReadFile(bg, name); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s after reopen: %v", name, err)
		}
	}
	f.Close()
}

// TestFsckFindsAndRepairs damages a cache in the ways Fsck looks for and
// checks each is reported by path, then repaired.
func TestFsckFindsAndRepairs(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{InlineMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "dir", 0o755))
	a := createFile(t, f, d.Ino, "big", bytes.Repeat([]byte("z"), 100))
	b := createFile(t, f, d.Ino, "small", []byte("abc"))
	c := createFile(t, f, RootIno, "c", []byte("12345"))
	f.Close()
	db, err := bolt.Open(filepath.Join(dir, indexName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		// A dangling entry, a wrong link count, an extent past the data,
		// an inline size mismatch, an unreachable inode.
		tx.Bucket(bucketDirents).Put(direntKey(d.Ino, "ghost"), encodeDirent(diskDirent{Child: 999, Seq: 500, Type: syscall.S_IFREG}))
		tx.Bucket(bucketDirseq).Put(dirseqKey(d.Ino, 500), []byte("ghost"))
		di, _ := decodeInode(tx.Bucket(bucketInodes).Get(inoKey(b.Ino)))
		di.Nlink = 5
		tx.Bucket(bucketInodes).Put(inoKey(b.Ino), encodeInode(&di))
		tx.Bucket(bucketExtents).Put(inoKey(a.Ino), encodeExtents([]extent{ext(0, 1, 1<<20, 100, 0)}))
		ci, _ := decodeInode(tx.Bucket(bucketInodes).Get(inoKey(c.Ino)))
		ci.Size = 77
		tx.Bucket(bucketInodes).Put(inoKey(c.Ino), encodeInode(&ci))
		lost := diskInode{Mode: syscall.S_IFREG | 0o644, Nlink: 1, Flags: flagInline}
		tx.Bucket(bucketInodes).Put(inoKey(50), encodeInode(&lost))
		tx.Bucket(bucketInline).Put(inoKey(50), nil)
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fsck(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/dir/ghost: entry names missing inode 999", "/dir/small: nlink 5, want 1",
		"/dir/big: extent at 0 reaches data-0001", "/c: size 77, inline contents 5 bytes", "inode 50: unreachable inode",
		"meta: next inode number"} {
		if !bytes.Contains([]byte(r.String()), []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	if _, err := Fsck(dir, true); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
	f, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := f.ReadFile(bg, "dir/small"); err != nil || string(got) != "abc" {
		t.Errorf("small after repair: %q %v", got, err)
	}
	if got, err := f.ReadFile(bg, "dir/big"); err != nil || len(got) != 100 {
		t.Errorf("big after repair (a hole now): %d %v", len(got), err)
	}
}

// TestEviction: clean, unreferenced inodes leave memory after a commit
// once the table is large, and come back from the index intact; an open
// or kernel-referenced one stays.
func TestEviction(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 4})
	f.tree.Lock()
	f.c.evictAt, f.c.evictBase = 20, 20
	f.tree.Unlock()
	held, h, err := f.Create(bg, RootIno, "held", 0o644, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(h)
	for i := range 100 {
		createFile(t, f, RootIno, fmt.Sprintf("f%d", i), []byte(fmt.Sprint("contents ", i)))
	}
	// Twice: a batch's sweep runs after its waiters are released, and
	// before the committer takes the next batch.
	for range 2 {
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
	}
	// Earlier sweeps ran while files were still dirty; now everything is
	// clean, so the sweep after the next commit leaves only the root, the
	// open file and the one just changed.
	f.tree.Lock()
	f.c.evictAt = 20
	f.tree.Unlock()
	last := createFile(t, f, RootIno, "last", nil)
	// The sweep runs on the committer after the batch's waiters are
	// released, so Sync returning does not mean it has run: wait for it
	// (bounded). A sweep that found files still dirty (a loaded machine)
	// runs again only after another commit and above the threshold, so
	// each round lowers the threshold below what is left and changes
	// "last" to make a commit.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
		if f.Stats().LoadedInodes <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d inodes still loaded", f.Stats().LoadedInodes)
		}
		time.Sleep(5 * time.Millisecond)
		f.tree.Lock()
		f.c.evictAt = 3
		f.tree.Unlock()
		if _, err := f.WriteInode(bg, last.Ino, 0, []byte("x"), syscall.O_WRONLY); err != nil {
			t.Fatal(err)
		}
	}
	f.imu.Lock()
	_, stays := f.inodes[held.Ino]
	f.imu.Unlock()
	if !stays {
		t.Fatal("an open inode was evicted")
	}
	for i := range 100 {
		got, err := f.ReadFile(bg, fmt.Sprintf("f%d", i))
		if err != nil || string(got) != fmt.Sprint("contents ", i) {
			t.Fatalf("f%d after eviction: %q %v", i, got, err)
		}
	}
	if _, err := f.Write(bg, h, 0, []byte("still writable")); err != nil {
		t.Fatal(err)
	}
}

// TestEvictionKeepsKernelRefs: clean files the kernel still references
// leave the table like unreferenced ones, keeping only their count;
// loaded again they have it back, FORGET on an evicted file lowers it,
// an evicted file unlinked while referenced is an orphan until its last
// FORGET, and a file appended to from the current chunk stays loaded.
func TestEvictionKeepsKernelRefs(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 4})
	var inos []Ino
	for i := range 60 {
		// Created and written as the kernel does, with its reference
		// kept: no FORGET.
		a, h, err := f.Create(bg, RootIno, fmt.Sprintf("f%d", i), 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(bg, h, 0, []byte(fmt.Sprint("contents ", i))); err != nil {
			t.Fatal(err)
		}
		f.Release(h)
		inos = append(inos, a.Ino)
	}
	// A second reference on f1 and f2.
	for _, name := range []string{"f1", "f2"} {
		if _, err := f.Lookup(bg, RootIno, name); err != nil {
			t.Fatal(err)
		}
	}
	// An appender: its first write spills it to a data file, the second
	// appends from a chunk that stays reserved.
	app, ha, err := f.Create(bg, RootIno, "appender", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.Write(bg, ha, 0, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	f.Release(ha)
	sweepUntil(t, f, func() bool {
		f.imu.Lock()
		defer f.imu.Unlock()
		return f.refs.Len() == len(inos)
	})
	f.imu.Lock()
	_, appenderLoaded := f.inodes[app.Ino]
	got1, got2, got3 := f.refs.Get(inos[1]), f.refs.Get(inos[2]), f.refs.Get(inos[3])
	f.imu.Unlock()
	if !appenderLoaded {
		t.Error("the file being appended to was evicted")
	}
	if got1 != 2 || got2 != 2 || got3 != 1 {
		t.Fatalf("kept references %d %d %d, want 2 2 1", got1, got2, got3)
	}

	// FORGET on an evicted file, then a load: the rest comes back.
	f.Forget(inos[1], 1)
	if _, err := f.GetAttr(bg, inos[1]); err != nil {
		t.Fatal(err)
	}
	f.imu.Lock()
	in := f.inodes[inos[1]]
	stillKept := f.refs.Get(inos[1]) > 0
	f.imu.Unlock()
	if in == nil || stillKept {
		t.Fatalf("f1 after a load: in table %v, count still kept %v", in != nil, stillKept)
	}
	in.mu.Lock()
	lookups := in.lookups
	in.mu.Unlock()
	if lookups != 1 {
		t.Fatalf("f1 came back with %d references, want 1", lookups)
	}
	// Every FORGET on an evicted file: nothing is kept.
	f.Forget(inos[2], 2)
	f.imu.Lock()
	kept2 := f.refs.Get(inos[2]) > 0
	f.imu.Unlock()
	if kept2 {
		t.Error("f2's count kept after its last FORGET")
	}

	// Unlinked while evicted and referenced: an orphan the kernel can
	// still read until its last FORGET.
	if err := f.Unlink(bg, RootIno, "f3"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	h, err := f.Open(bg, inos[3], syscall.O_RDONLY)
	if err != nil {
		t.Fatalf("orphan f3: %v", err)
	}
	buf := make([]byte, 64)
	n, err := f.Read(bg, h, 0, buf)
	f.Release(h)
	if err != nil || string(buf[:n]) != "contents 3" {
		t.Fatalf("orphan f3 reads %q, %v", buf[:n], err)
	}
	f.Forget(inos[3], 1)
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := f.GetAttr(bg, inos[3]); err != syscall.ENOENT {
		t.Fatalf("f3 after its last FORGET: %v, want ENOENT", err)
	}
	// The others read back as written.
	for i := 4; i < len(inos); i++ {
		got, err := f.ReadFile(bg, fmt.Sprintf("f%d", i))
		if err != nil || string(got) != fmt.Sprint("contents ", i) {
			t.Fatalf("f%d after eviction: %q %v", i, got, err)
		}
	}
}

// TestEvictionRacesInodeIO: eviction sweeps running all the time do not
// take a referenced file from under I/O by inode (FUSE's no_open), which
// uses the inode outside the tree lock: every read after a write sees it.
func TestEvictionRacesInodeIO(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64})
	var inos []Ino
	for i := range 8 {
		a, err := f.CreateInode(bg, RootIno, fmt.Sprintf("f%d", i), 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
		if err != nil {
			t.Fatal(err)
		}
		inos = append(inos, a.Ino)
	}
	poke := createFile(t, f, RootIno, "sweep-poke", nil)
	stop := make(chan struct{})
	var sweeps sync.WaitGroup
	sweeps.Add(1)
	go func() {
		defer sweeps.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.tree.Lock()
			f.c.evictAt, f.c.evictBase = 1, 1
			f.tree.Unlock()
			if _, err := f.WriteInode(bg, poke.Ino, 0, []byte("x"), syscall.O_WRONLY); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var writers sync.WaitGroup
	for _, ino := range inos {
		writers.Add(1)
		go func() {
			defer writers.Done()
			buf := make([]byte, 16)
			for i := range 3000 {
				want := fmt.Sprintf("%016d", i) // one length: no stale tail
				if _, err := f.WriteInode(bg, ino, 0, []byte(want), syscall.O_WRONLY); err != nil {
					t.Error(err)
					return
				}
				n, err := f.ReadInode(bg, ino, 0, buf)
				if err != nil || string(buf[:n]) != want {
					t.Errorf("inode %d: wrote %q, read %q, %v", ino, want, buf[:n], err)
					return
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	sweeps.Wait()
}

// TestEvictionSkipsPinnedInode: a sweep that runs between I/O by inode
// taking its inode and using it (forced there through FS.ioHook) leaves
// that inode in the table, so the write lands in the table's inode and a
// read sees it at once.
func TestEvictionSkipsPinnedInode(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 64})
	a, err := f.CreateInode(bg, RootIno, "f", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteInode(bg, a.Ino, 0, []byte("aaaa"), syscall.O_WRONLY); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	var held *inode
	f.ioHook = func(in *inode) {
		held = in
		f.c.evictAt = 0 // read by afterCommit under the tree lock
		f.afterCommit(nil)
	}
	if _, err := f.WriteInode(bg, a.Ino, 0, []byte("bbbb"), syscall.O_WRONLY); err != nil {
		t.Fatal(err)
	}
	f.ioHook = nil
	f.imu.Lock()
	in := f.inodes[a.Ino]
	f.imu.Unlock()
	if in == nil || in != held {
		t.Fatalf("the inode written through was evicted meanwhile (in table: %v)", in != nil)
	}
	buf := make([]byte, 8)
	if n, err := f.ReadInode(bg, a.Ino, 0, buf); err != nil || string(buf[:n]) != "bbbb" {
		t.Fatalf("read after write: %q, %v", buf[:n], err)
	}
	// Unpinned, the sweeps evict it, keeping its reference: the second,
	// as the I/O used it since the first (a second chance).
	if err := f.Sync(bg); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		f.tree.Lock()
		f.c.evictAt = 0
		f.tree.Unlock()
		f.afterCommit(nil)
	}
	f.imu.Lock()
	_, loaded := f.inodes[a.Ino]
	refs := f.refs.Get(a.Ino)
	f.imu.Unlock()
	if loaded || refs != 1 {
		t.Fatalf("after an unpinned sweep: loaded %v, references kept %d", loaded, refs)
	}
}

// sweepUntil lowers the eviction threshold to the root alone and makes
// commits until done reports true (bounded): a sweep runs on the
// committer after a batch's waiters are released, and skips what is
// still dirty then.
func sweepUntil(t *testing.T, f *FS, done func() bool) {
	t.Helper()
	poke := createFile(t, f, RootIno, "sweep-poke", nil)
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no sweep evicted what was expected (%d inodes loaded)", f.Stats().LoadedInodes)
		}
		f.tree.Lock()
		f.c.evictAt, f.c.evictBase = 1, 1
		f.tree.Unlock()
		if _, err := f.WriteInode(bg, poke.Ino, 0, []byte("x"), syscall.O_WRONLY); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInterleavedAppendsStayContiguous: hg appends to a revlog's .i and
// .d in turn; per-file append chunks keep each file in few extents.
func TestInterleavedAppendsStayContiguous(t *testing.T) {
	f := newTestFS(t, Options{})
	flags := syscall.O_RDWR | syscall.O_CREAT | syscall.O_APPEND
	a, ha := must2(t)(f.Create(bg, RootIno, "x.i", 0o644, flags))
	b, hb := must2(t)(f.Create(bg, RootIno, "x.d", 0o644, flags))
	var wantA, wantB []byte
	for i := range 2000 {
		pa := bytes.Repeat([]byte{byte(i)}, 64)
		pb := bytes.Repeat([]byte{byte(i + 1)}, 300)
		if _, err := f.Write(bg, ha, 0, pa); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(bg, hb, 0, pb); err != nil {
			t.Fatal(err)
		}
		wantA, wantB = append(wantA, pa...), append(wantB, pb...)
	}
	f.Release(ha)
	f.Release(hb)
	f.Forget(a.Ino, 1)
	f.Forget(b.Ino, 1)
	for _, c := range []struct {
		ino  Ino
		want []byte
	}{{a.Ino, wantA}, {b.Ino, wantB}} {
		f.tree.RLock()
		in, _ := f.getInode(c.ino)
		in.mu.RLock()
		n := len(in.exts)
		in.mu.RUnlock()
		f.tree.RUnlock()
		if n > 40 {
			t.Errorf("inode %d: %d extents after 2000 interleaved appends", c.ino, n)
		}
		if got := readAll(t, f, c.ino); !bytes.Equal(got, c.want) {
			t.Errorf("inode %d: contents differ", c.ino)
		}
	}
}

func must2(t testing.TB) func(Attr, Handle, error) (Attr, Handle) {
	return func(a Attr, h Handle, err error) (Attr, Handle) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, h
	}
}

// TestSetgidDirectory: what is created in a set-group-ID directory takes
// the directory's group, and new directories take the bit too, as on a
// local Linux filesystem; elsewhere the creator's group applies. It holds
// after a reopen.
func TestSetgidDirectory(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	as := WithCaller(bg, 1000, 1000)
	shared := must[Attr](t)(f.Mkdir(as, f.Root(), "shared", 0o775))
	plain := must[Attr](t)(f.Mkdir(as, f.Root(), "plain", 0o775))
	mode, gid := uint32(0o2775), uint32(4321)
	must[Attr](t)(f.SetAttr(bg, shared.Ino, SetAttr{Mode: &mode, Gid: &gid}))

	type made struct {
		name string
		ino  Ino
		dir  bool
	}
	var all []made
	for _, parent := range []Attr{shared, plain} {
		a, h, err := f.Create(as, parent.Ino, "file", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
		if err != nil {
			t.Fatal(err)
		}
		f.Release(h)
		d := must[Attr](t)(f.Mkdir(as, parent.Ino, "sub", 0o700))
		l := must[Attr](t)(f.Symlink(as, parent.Ino, "link", "file"))
		all = append(all, made{"file", a.Ino, false}, made{"sub", d.Ino, true}, made{"link", l.Ino, false})
	}
	check := func(f *FS) {
		t.Helper()
		for i, m := range all {
			inShared := i < 3
			a := must[Attr](t)(f.GetAttr(bg, m.ino))
			wantGid := uint32(1000)
			if inShared {
				wantGid = gid
			}
			if a.Gid != wantGid || a.Uid != 1000 {
				t.Errorf("%s (in shared: %v): owner %d:%d, want 1000:%d", m.name, inShared, a.Uid, a.Gid, wantGid)
			}
			if m.dir && (a.Mode&syscall.S_ISGID != 0) != inShared {
				t.Errorf("%s (in shared: %v): mode %o", m.name, inShared, a.Mode)
			}
			if !m.dir && a.Mode&syscall.S_ISGID != 0 {
				t.Errorf("%s: mode %o has set-group-ID", m.name, a.Mode)
			}
		}
	}
	check(f)
	f = closeAndReopen(t, f, dir)
	defer f.Close()
	check(f)
}
