//go:build linux

package posixtest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests returns the conformance cases by name.
func Tests() map[string]func(t *testing.T, fsys FS) {
	tests := map[string]func(t *testing.T, fsys FS){
		"CreateReadWrite":     testCreateReadWrite,
		"WriteAtOffsets":      testWriteAtOffsets,
		"Append":              testAppend,
		"Truncate":            testTruncate,
		"CreateExclusive":     testCreateExclusive,
		"LargeFile":           testLargeFile,
		"MkdirRmdir":          testMkdirRmdir,
		"ReadDir":             testReadDir,
		"ReadDirStable":       testReadDirStable,
		"UnlinkOpenFile":      testUnlinkOpenFile,
		"RenameFile":          testRenameFile,
		"RenameDir":           testRenameDir,
		"RenameErrors":        testRenameErrors,
		"RenameNoReplace":     testRenameNoReplace,
		"RenameExchange":      testRenameExchange,
		"HardLink":            testHardLink,
		"Symlink":             testSymlink,
		"ChmodChownUtimes":    testChmodChownUtimes,
		"Names":               testNames,
		"NotDir":              testNotDir,
		"MtimeOnWrite":        testMtimeOnWrite,
		"Fsync":               testFsync,
		"ManyFiles":           testManyFiles,
		"OverwriteOpenTarget": testOverwriteOpenTarget,
	}
	for name, fn := range specialTests() {
		tests[name] = fn
	}
	return tests
}

// Run runs every case as a subtest, each on a fresh FS from newFS.
func Run(t *testing.T, newFS func(t *testing.T) FS) {
	tests := Tests()
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) { tests[n](t, newFS(t)) })
	}
}

func wantErr(t *testing.T, err error, want syscall.Errno, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func ok(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func writeFile(t *testing.T, fsys FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	ok(t, err, "create "+name)
	if _, err := f.Write(data); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	ok(t, f.Close(), "close "+name)
}

func readFile(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	ok(t, err, "open "+name)
	defer f.Close()
	b, err := io.ReadAll(f)
	ok(t, err, "read "+name)
	return b
}

func lstat(t *testing.T, fsys FS, name string) Stat {
	t.Helper()
	st, err := fsys.Lstat(name)
	ok(t, err, "lstat "+name)
	return st
}

func wantContent(t *testing.T, fsys FS, name string, want []byte) {
	t.Helper()
	if got := readFile(t, fsys, name); !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes %.40q, want %d bytes %.40q", name, len(got), got, len(want), want)
	}
	if st := lstat(t, fsys, name); st.Size != int64(len(want)) {
		t.Fatalf("%s: size %d, want %d", name, st.Size, len(want))
	}
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testCreateReadWrite(t *testing.T, fsys FS) {
	writeFile(t, fsys, "a", []byte("hello, world\n"))
	wantContent(t, fsys, "a", []byte("hello, world\n"))
	st := lstat(t, fsys, "a")
	if typ(st.Mode) != syscall.S_IFREG || st.Mode&0o777 != 0o644&^currentUmask() || st.Nlink != 1 {
		t.Fatalf("stat a: mode %o nlink %d", st.Mode, st.Nlink)
	}
	writeFile(t, fsys, "empty", nil)
	wantContent(t, fsys, "empty", []byte{})
}

func currentUmask() uint32 {
	m := unix.Umask(0)
	unix.Umask(m)
	return uint32(m)
}

func testWriteAtOffsets(t *testing.T, fsys FS) {
	f, err := fsys.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644)
	ok(t, err, "create")
	defer f.Close()
	_, err = f.WriteAt([]byte("xyz"), 10)
	ok(t, err, "pwrite past end")
	_, err = f.WriteAt([]byte("ab"), 1)
	ok(t, err, "pwrite inside")
	want := []byte("\x00ab\x00\x00\x00\x00\x00\x00\x00xyz")
	buf := make([]byte, 20)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(buf[:n], want) {
		t.Fatalf("got %q, want %q", buf[:n], want)
	}
	n, err = f.ReadAt(buf, 100)
	if n != 0 || err != io.EOF {
		t.Fatalf("read past end: %d, %v", n, err)
	}
}

func testAppend(t *testing.T, fsys FS) {
	writeFile(t, fsys, "log", []byte("1"))
	a, err := fsys.OpenFile("log", os.O_WRONLY|os.O_APPEND, 0)
	ok(t, err, "open a")
	b, err := fsys.OpenFile("log", os.O_WRONLY|os.O_APPEND, 0)
	ok(t, err, "open b")
	for _, s := range []string{"2", "3", "4"} {
		_, err := a.Write([]byte(s + "a"))
		ok(t, err, "write a")
		_, err = b.Write([]byte(s + "b"))
		ok(t, err, "write b")
	}
	ok(t, a.Close(), "close")
	ok(t, b.Close(), "close")
	wantContent(t, fsys, "log", []byte("12a2b3a3b4a4b"))
}

func testTruncate(t *testing.T, fsys FS) {
	writeFile(t, fsys, "t", []byte("0123456789"))
	ok(t, fsys.Truncate("t", 4), "truncate shrink")
	wantContent(t, fsys, "t", []byte("0123"))
	ok(t, fsys.Truncate("t", 8), "truncate grow")
	wantContent(t, fsys, "t", []byte("0123\x00\x00\x00\x00"))
	f, err := fsys.OpenFile("t", os.O_RDWR, 0)
	ok(t, err, "open")
	ok(t, f.Truncate(2), "ftruncate")
	_, err = f.WriteAt([]byte("Z"), 5)
	ok(t, err, "write after ftruncate")
	ok(t, f.Close(), "close")
	wantContent(t, fsys, "t", []byte("01\x00\x00\x00Z"))
	f, err = fsys.OpenFile("t", os.O_RDWR|os.O_TRUNC, 0)
	ok(t, err, "open O_TRUNC")
	ok(t, f.Close(), "close")
	wantContent(t, fsys, "t", []byte{})
	// Across the sizes an implementation may treat differently.
	big := randBytes(1, 300000)
	writeFile(t, fsys, "big", big)
	ok(t, fsys.Truncate("big", 100000), "shrink big")
	wantContent(t, fsys, "big", big[:100000])
	ok(t, fsys.Truncate("big", 100), "shrink big to small")
	wantContent(t, fsys, "big", big[:100])
	ok(t, fsys.Truncate("big", 200000), "grow small to big")
	want := append(slices.Clone(big[:100]), make([]byte, 200000-100)...)
	wantContent(t, fsys, "big", want)
	wantErr(t, fsys.Truncate("missing", 0), syscall.ENOENT, "truncate missing")
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	wantErr(t, fsys.Truncate("d", 0), syscall.EISDIR, "truncate dir")
}

func testCreateExclusive(t *testing.T, fsys FS) {
	f, err := fsys.OpenFile("x", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	ok(t, err, "create excl")
	ok(t, f.Close(), "close")
	_, err = fsys.OpenFile("x", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	wantErr(t, err, syscall.EEXIST, "second O_EXCL")
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	_, err = fsys.OpenFile("d", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	wantErr(t, err, syscall.EEXIST, "O_EXCL on dir")
	_, err = fsys.OpenFile("d", os.O_RDWR, 0)
	wantErr(t, err, syscall.EISDIR, "open dir for writing")
	_, err = fsys.OpenFile("nope", os.O_RDONLY, 0)
	wantErr(t, err, syscall.ENOENT, "open missing")
}

func testLargeFile(t *testing.T, fsys FS) {
	data := randBytes(2, 1<<20+123)
	f, err := fsys.OpenFile("large", os.O_RDWR|os.O_CREATE, 0o644)
	ok(t, err, "create")
	// Small writes first, as hg appends revlogs, then big ones.
	for off := 0; off < len(data); {
		n := min(len(data)-off, 1+off/3)
		_, err := f.WriteAt(data[off:off+n], int64(off))
		ok(t, err, "write")
		off += n
	}
	ok(t, f.Close(), "close")
	wantContent(t, fsys, "large", data)
	patch := randBytes(3, 5000)
	f, err = fsys.OpenFile("large", os.O_RDWR, 0)
	ok(t, err, "open")
	_, err = f.WriteAt(patch, 70000)
	ok(t, err, "overwrite")
	st, err := f.Stat()
	ok(t, err, "fstat")
	if st.Blocks*512 < st.Size {
		t.Errorf("st_blocks %d too small for %d bytes", st.Blocks, st.Size)
	}
	ok(t, f.Close(), "close")
	copy(data[70000:], patch)
	wantContent(t, fsys, "large", data)
}

func testMkdirRmdir(t *testing.T, fsys FS) {
	ok(t, fsys.Mkdir("d", 0o755), "mkdir d")
	wantErr(t, fsys.Mkdir("d", 0o755), syscall.EEXIST, "mkdir d again")
	st := lstat(t, fsys, "d")
	if typ(st.Mode) != syscall.S_IFDIR || st.Nlink != 2 {
		t.Fatalf("d: mode %o nlink %d", st.Mode, st.Nlink)
	}
	ok(t, fsys.Mkdir("d/e", 0o700), "mkdir d/e")
	ok(t, fsys.Mkdir("d/f", 0o700), "mkdir d/f")
	if st := lstat(t, fsys, "d"); st.Nlink != 4 {
		t.Fatalf("d with two subdirs: nlink %d, want 4", st.Nlink)
	}
	writeFile(t, fsys, "d/file", []byte("x"))
	wantErr(t, fsys.Rmdir("d"), syscall.ENOTEMPTY, "rmdir non-empty")
	wantErr(t, fsys.Rmdir("d/file"), syscall.ENOTDIR, "rmdir file")
	wantErr(t, fsys.Unlink("d/e"), syscall.EISDIR, "unlink dir")
	wantErr(t, fsys.Rmdir("d/missing"), syscall.ENOENT, "rmdir missing")
	ok(t, fsys.Rmdir("d/e"), "rmdir d/e")
	if st := lstat(t, fsys, "d"); st.Nlink != 3 {
		t.Fatalf("d after rmdir: nlink %d, want 3", st.Nlink)
	}
	ok(t, fsys.Unlink("d/file"), "unlink")
	ok(t, fsys.Rmdir("d/f"), "rmdir d/f")
	ok(t, fsys.Rmdir("d"), "rmdir d")
	_, err := fsys.Lstat("d")
	wantErr(t, err, syscall.ENOENT, "lstat removed dir")
	ok(t, fsys.Mkdir("d", 0o755), "mkdir d again after rmdir")
}

func readNames(t *testing.T, fsys FS, name string) []string {
	t.Helper()
	d, err := fsys.OpenDir(name)
	ok(t, err, "opendir "+name)
	defer d.Close()
	var all []string
	for {
		names, err := d.Next(7)
		ok(t, err, "readdir")
		if len(names) == 0 {
			break
		}
		all = append(all, names...)
	}
	sort.Strings(all)
	return all
}

func testReadDir(t *testing.T, fsys FS) {
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	var want []string
	for i := range 50 {
		n := string(rune('a'+i%26)) + string(rune('0'+i/26))
		want = append(want, n)
		if i%5 == 0 {
			ok(t, fsys.Mkdir("d/"+n, 0o755), "mkdir")
		} else {
			writeFile(t, fsys, "d/"+n, nil)
		}
	}
	sort.Strings(want)
	if got := readNames(t, fsys, "d"); !slices.Equal(got, want) {
		t.Fatalf("readdir: got %q, want %q", got, want)
	}
	if got := readNames(t, fsys, "d/a0"); len(got) != 0 {
		t.Fatalf("empty dir lists %q", got)
	}
}

// testReadDirStable: entries present throughout a readdir are returned
// exactly once, however the directory changes meanwhile.
func testReadDirStable(t *testing.T, fsys FS) {
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	stable := map[string]bool{}
	for i := range 40 {
		n := "s" + string(rune('A'+i))
		stable[n] = true
		writeFile(t, fsys, "d/"+n, nil)
		writeFile(t, fsys, "d/v"+string(rune('A'+i)), nil)
	}
	d, err := fsys.OpenDir("d")
	ok(t, err, "opendir")
	defer d.Close()
	seen := map[string]int{}
	for round := 0; ; round++ {
		names, err := d.Next(5)
		ok(t, err, "readdir")
		if len(names) == 0 {
			break
		}
		for _, n := range names {
			seen[n]++
		}
		// Churn: remove a volatile entry, add new ones, rename one.
		if round < 40 {
			v := "d/v" + string(rune('A'+round))
			ok(t, fsys.Unlink(v), "unlink volatile")
			writeFile(t, fsys, "d/new"+string(rune('A'+round)), nil)
			if round%3 == 0 {
				ok(t, fsys.Rename("d/new"+string(rune('A'+round)), "d/renamed"+string(rune('A'+round)), 0), "rename")
			}
		}
	}
	for n := range stable {
		if seen[n] != 1 {
			t.Errorf("stable entry %s seen %d times", n, seen[n])
		}
	}
	for n, c := range seen {
		if c > 1 {
			t.Errorf("entry %s seen %d times", n, c)
		}
	}
}

func testUnlinkOpenFile(t *testing.T, fsys FS) {
	writeFile(t, fsys, "u", []byte("still here"))
	f, err := fsys.OpenFile("u", os.O_RDWR, 0)
	ok(t, err, "open")
	ok(t, fsys.Unlink("u"), "unlink")
	_, err = fsys.Lstat("u")
	wantErr(t, err, syscall.ENOENT, "lstat unlinked")
	buf := make([]byte, 10)
	_, err = f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		t.Fatalf("read unlinked: %v", err)
	}
	if string(buf) != "still here" {
		t.Fatalf("unlinked file reads %q", buf)
	}
	_, err = f.WriteAt([]byte("STILL"), 0)
	ok(t, err, "write unlinked")
	st, err := f.Stat()
	ok(t, err, "fstat unlinked")
	if st.Nlink != 0 {
		t.Errorf("unlinked nlink %d", st.Nlink)
	}
	n, _ := f.ReadAt(buf, 0)
	if string(buf[:n]) != "STILL here" {
		t.Fatalf("after write: %q", buf[:n])
	}
	ok(t, f.Close(), "close")
	// The name is free for a new file.
	writeFile(t, fsys, "u", []byte("new"))
	wantContent(t, fsys, "u", []byte("new"))
}

func testRenameFile(t *testing.T, fsys FS) {
	writeFile(t, fsys, "a", []byte("A"))
	writeFile(t, fsys, "b", []byte("B"))
	ino := lstat(t, fsys, "a").Ino
	ok(t, fsys.Rename("a", "b", 0), "rename over file")
	_, err := fsys.Lstat("a")
	wantErr(t, err, syscall.ENOENT, "old name after rename")
	wantContent(t, fsys, "b", []byte("A"))
	if got := lstat(t, fsys, "b").Ino; got != ino {
		t.Errorf("renamed inode %d, want %d", got, ino)
	}
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	ok(t, fsys.Rename("b", "d/c", 0), "rename across dirs")
	wantContent(t, fsys, "d/c", []byte("A"))
	ok(t, fsys.Rename("d/c", "d/c", 0), "rename to itself")
	wantContent(t, fsys, "d/c", []byte("A"))
	// Hard links to one inode: rename is a no-op, both names stay.
	ok(t, fsys.Link("d/c", "d/l"), "link")
	ok(t, fsys.Rename("d/c", "d/l", 0), "rename over own link")
	wantContent(t, fsys, "d/c", []byte("A"))
	wantContent(t, fsys, "d/l", []byte("A"))
}

func testRenameDir(t *testing.T, fsys FS) {
	ok(t, fsys.Mkdir("a", 0o755), "mkdir a")
	ok(t, fsys.Mkdir("a/sub", 0o755), "mkdir a/sub")
	writeFile(t, fsys, "a/sub/f", []byte("deep"))
	ok(t, fsys.Mkdir("b", 0o755), "mkdir b")
	ok(t, fsys.Rename("a", "b/a2", 0), "rename dir")
	wantContent(t, fsys, "b/a2/sub/f", []byte("deep"))
	if st := lstat(t, fsys, "b"); st.Nlink != 3 {
		t.Errorf("b nlink %d, want 3", st.Nlink)
	}
	ok(t, fsys.Mkdir("empty", 0o755), "mkdir empty")
	ok(t, fsys.Rename("b/a2", "empty", 0), "rename dir over empty dir")
	wantContent(t, fsys, "empty/sub/f", []byte("deep"))
	if st := lstat(t, fsys, "b"); st.Nlink != 2 {
		t.Errorf("b nlink %d after moving a2 out, want 2", st.Nlink)
	}
	ok(t, fsys.Mkdir("full", 0o755), "mkdir full")
	writeFile(t, fsys, "full/x", nil)
	wantErr(t, fsys.Rename("empty", "full", 0), syscall.ENOTEMPTY, "rename over non-empty dir")
	wantErr(t, fsys.Rename("empty", "empty/sub/inside", 0), syscall.EINVAL, "move dir into itself")
	wantErr(t, fsys.Rename("empty", "empty/sub", 0), syscall.EINVAL, "move dir onto its child")
}

func testRenameErrors(t *testing.T, fsys FS) {
	writeFile(t, fsys, "f", nil)
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	wantErr(t, fsys.Rename("missing", "x", 0), syscall.ENOENT, "rename missing")
	wantErr(t, fsys.Rename("f", "d", 0), syscall.EISDIR, "file over dir")
	wantErr(t, fsys.Rename("d", "f", 0), syscall.ENOTDIR, "dir over file")
	wantErr(t, fsys.Rename("f", "nodir/x", 0), syscall.ENOENT, "into missing dir")
	wantErr(t, fsys.Rename("f", "f/x", 0), syscall.ENOTDIR, "into a file")
}

func testRenameNoReplace(t *testing.T, fsys FS) {
	writeFile(t, fsys, "a", []byte("A"))
	writeFile(t, fsys, "b", []byte("B"))
	wantErr(t, fsys.Rename("a", "b", unix.RENAME_NOREPLACE), syscall.EEXIST, "noreplace")
	wantContent(t, fsys, "a", []byte("A"))
	wantContent(t, fsys, "b", []byte("B"))
	ok(t, fsys.Rename("a", "c", unix.RENAME_NOREPLACE), "noreplace to free name")
	wantContent(t, fsys, "c", []byte("A"))
}

func testRenameExchange(t *testing.T, fsys FS) {
	writeFile(t, fsys, "a", []byte("A"))
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	writeFile(t, fsys, "d/in", []byte("IN"))
	err := fsys.Rename("a", "d", unix.RENAME_EXCHANGE)
	if errors.Is(err, syscall.EINVAL) {
		t.Skip("RENAME_EXCHANGE not supported (EINVAL is allowed)")
	}
	ok(t, err, "exchange")
	wantContent(t, fsys, "d", []byte("A"))
	wantContent(t, fsys, "a/in", []byte("IN"))
	wantErr(t, fsys.Rename("a", "missing", unix.RENAME_EXCHANGE), syscall.ENOENT, "exchange with missing")
}

func testHardLink(t *testing.T, fsys FS) {
	writeFile(t, fsys, "orig", []byte("shared"))
	ok(t, fsys.Link("orig", "other"), "link")
	if st := lstat(t, fsys, "orig"); st.Nlink != 2 {
		t.Fatalf("nlink %d, want 2", st.Nlink)
	}
	if lstat(t, fsys, "orig").Ino != lstat(t, fsys, "other").Ino {
		t.Fatal("links have different inodes")
	}
	f, err := fsys.OpenFile("other", os.O_WRONLY|os.O_APPEND, 0)
	ok(t, err, "open")
	_, err = f.Write([]byte("!"))
	ok(t, err, "write")
	ok(t, f.Close(), "close")
	wantContent(t, fsys, "orig", []byte("shared!"))
	ok(t, fsys.Unlink("orig"), "unlink")
	if st := lstat(t, fsys, "other"); st.Nlink != 1 {
		t.Fatalf("nlink %d after unlink, want 1", st.Nlink)
	}
	wantContent(t, fsys, "other", []byte("shared!"))
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	wantErr(t, fsys.Link("d", "d2"), syscall.EPERM, "link dir")
	writeFile(t, fsys, "x", nil)
	wantErr(t, fsys.Link("other", "x"), syscall.EEXIST, "link over existing")
}

func testSymlink(t *testing.T, fsys FS) {
	// hg's lock: a symlink whose target is "host:pid".
	ok(t, fsys.Symlink("myhost:1234", "lock"), "symlink")
	wantErr(t, fsys.Symlink("myhost:5678", "lock"), syscall.EEXIST, "second lock")
	got, err := fsys.Readlink("lock")
	ok(t, err, "readlink")
	if got != "myhost:1234" {
		t.Fatalf("readlink %q", got)
	}
	st := lstat(t, fsys, "lock")
	if typ(st.Mode) != syscall.S_IFLNK || st.Size != int64(len("myhost:1234")) {
		t.Fatalf("lstat lock: mode %o size %d", st.Mode, st.Size)
	}
	writeFile(t, fsys, "f", nil)
	_, err = fsys.Readlink("f")
	wantErr(t, err, syscall.EINVAL, "readlink on a file")
	ok(t, fsys.Unlink("lock"), "unlink symlink")
	_, err = fsys.Readlink("lock")
	wantErr(t, err, syscall.ENOENT, "readlink removed")
}

func testChmodChownUtimes(t *testing.T, fsys FS) {
	writeFile(t, fsys, "f", []byte("x"))
	before := lstat(t, fsys, "f")
	ok(t, fsys.Chmod("f", 0o751), "chmod")
	st := lstat(t, fsys, "f")
	if st.Mode&0o7777 != 0o751 || typ(st.Mode) != syscall.S_IFREG {
		t.Fatalf("mode %o after chmod 751", st.Mode)
	}
	if st.Ctime.Before(before.Ctime) {
		t.Errorf("ctime went back on chmod")
	}
	ok(t, fsys.Chown("f", int(st.Uid), int(st.Gid)), "chown to self")
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	mt := time.Date(2002, 3, 4, 5, 6, 7, 0, time.UTC)
	ok(t, fsys.Utimes("f", at, mt), "utimes")
	st = lstat(t, fsys, "f")
	if !st.Mtime.Equal(mt) || !st.Atime.Equal(at) {
		t.Fatalf("times: atime %v mtime %v", st.Atime, st.Mtime)
	}
}

func testNames(t *testing.T, fsys FS) {
	long := string(bytes.Repeat([]byte("n"), 256))
	_, err := fsys.OpenFile(long, os.O_RDWR|os.O_CREATE, 0o644)
	wantErr(t, err, syscall.ENAMETOOLONG, "256-byte name")
	wantErr(t, fsys.Mkdir(long, 0o755), syscall.ENAMETOOLONG, "mkdir 256-byte name")
	max := long[:255]
	writeFile(t, fsys, max, []byte("ok"))
	wantContent(t, fsys, max, []byte("ok"))
	odd := "sp ace\tnl\nü\x01~_x"
	writeFile(t, fsys, odd, []byte("odd"))
	wantContent(t, fsys, odd, []byte("odd"))
	if got := readNames(t, fsys, "."); !slices.Contains(got, odd) || !slices.Contains(got, max) {
		t.Fatalf("readdir misses names: %q", got)
	}
}

func testNotDir(t *testing.T, fsys FS) {
	writeFile(t, fsys, "f", nil)
	_, err := fsys.OpenFile("f/x", os.O_RDWR|os.O_CREATE, 0o644)
	wantErr(t, err, syscall.ENOTDIR, "create under a file")
	wantErr(t, fsys.Mkdir("f/d", 0o755), syscall.ENOTDIR, "mkdir under a file")
	_, err = fsys.Lstat("f/x")
	wantErr(t, err, syscall.ENOTDIR, "lstat under a file")
	_, err = fsys.Lstat("missing/x")
	wantErr(t, err, syscall.ENOENT, "lstat under missing")
}

func testMtimeOnWrite(t *testing.T, fsys FS) {
	writeFile(t, fsys, "f", []byte("x"))
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	ok(t, fsys.Utimes("f", old, old), "utimes")
	f, err := fsys.OpenFile("f", os.O_WRONLY, 0)
	ok(t, err, "open")
	_, err = f.WriteAt([]byte("y"), 1)
	ok(t, err, "write")
	ok(t, f.Close(), "close")
	if st := lstat(t, fsys, "f"); !st.Mtime.After(old) || !st.Ctime.After(old) {
		t.Fatalf("mtime %v ctime %v not updated by write", st.Mtime, st.Ctime)
	}
	ok(t, fsys.Utimes("f", old, old), "utimes")
	ok(t, fsys.Truncate("f", 0), "truncate")
	if st := lstat(t, fsys, "f"); !st.Mtime.After(old) {
		t.Fatalf("mtime %v not updated by truncate", st.Mtime)
	}
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	ok(t, fsys.Utimes("d", old, old), "utimes dir")
	writeFile(t, fsys, "d/new", nil)
	if st := lstat(t, fsys, "d"); !st.Mtime.After(old) {
		t.Fatalf("dir mtime %v not updated by create", st.Mtime)
	}
}

func testFsync(t *testing.T, fsys FS) {
	f, err := fsys.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644)
	ok(t, err, "create")
	_, err = f.Write(randBytes(4, 10000))
	ok(t, err, "write")
	ok(t, f.Sync(), "fsync")
	ok(t, f.Sync(), "fsync clean file")
	ok(t, f.Close(), "close")
}

func testManyFiles(t *testing.T, fsys FS) {
	ok(t, fsys.Mkdir("m", 0o755), "mkdir")
	var want []string
	for i := range 300 {
		n := "f" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		want = append(want, n)
		writeFile(t, fsys, "m/"+n, randBytes(uint64(i), i*37))
	}
	sort.Strings(want)
	if got := readNames(t, fsys, "m"); !slices.Equal(got, want) {
		t.Fatalf("readdir: %d names, want %d", len(got), len(want))
	}
	for _, n := range []string{"faa", "fzk"} {
		st := lstat(t, fsys, "m/"+n)
		if st.Nlink != 1 {
			t.Fatalf("%s nlink %d", n, st.Nlink)
		}
	}
	for i := 0; i < 300; i += 7 {
		n := "f" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		wantContent(t, fsys, "m/"+n, randBytes(uint64(i), i*37))
	}
}

// testOverwriteOpenTarget: renaming over a file that is open keeps the
// open file's contents readable (hg's atomictemp pattern).
func testOverwriteOpenTarget(t *testing.T, fsys FS) {
	writeFile(t, fsys, "target", []byte("old contents"))
	r, err := fsys.OpenFile("target", os.O_RDONLY, 0)
	ok(t, err, "open target")
	defer r.Close()
	writeFile(t, fsys, "target.tmp", []byte("new"))
	ok(t, fsys.Rename("target.tmp", "target", 0), "rename over open file")
	wantContent(t, fsys, "target", []byte("new"))
	buf := make([]byte, 64)
	n, err := r.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if string(buf[:n]) != "old contents" {
		t.Fatalf("open replaced file reads %q", buf[:n])
	}
}
