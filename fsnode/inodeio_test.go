package fsnode

import (
	"syscall"
	"testing"
)

// TestInodeIO: reading, writing and fsync by inode (no handle), with
// O_APPEND from the writer's flags; an unlinked file stays usable while
// the kernel references it, and is reclaimed once it forgets it.
func TestInodeIO(t *testing.T) {
	f := newTestFS(t, Options{InlineMax: 8})
	a := createFile(t, f, RootIno, "f", []byte("hello"))
	if n, err := f.WriteInode(bg, a.Ino, 0, []byte("J"), syscall.O_WRONLY); n != 1 || err != nil {
		t.Fatalf("write at 0: %d %v", n, err)
	}
	// O_APPEND writes at the end whatever offset comes with them.
	if _, err := f.WriteInode(bg, a.Ino, 0, []byte(", spilled to a data file"), syscall.O_WRONLY|syscall.O_APPEND); err != nil {
		t.Fatal(err)
	}
	want := "Jello, spilled to a data file"
	buf := make([]byte, 64)
	n, err := f.ReadInode(bg, a.Ino, 0, buf)
	if err != nil || string(buf[:n]) != want {
		t.Fatalf("read: %q %v, want %q", buf[:n], err, want)
	}
	if n, err := f.ReadInode(bg, a.Ino, int64(len(want)), buf); n != 0 || err != nil {
		t.Errorf("read at end: %d %v", n, err)
	}
	if err := f.FsyncInode(bg, a.Ino); err != nil {
		t.Fatal(err)
	}
	if st := must[Attr](t)(f.GetAttr(bg, a.Ino)); st.Size != uint64(len(want)) {
		t.Errorf("size %d, want %d", st.Size, len(want))
	}

	// Directories, symlinks and unknown inodes.
	_, err = f.ReadInode(bg, RootIno, 0, buf)
	wantErrno(t, err, syscall.EISDIR)
	_, err = f.WriteInode(bg, RootIno, 0, []byte("x"), syscall.O_WRONLY)
	wantErrno(t, err, syscall.EISDIR)
	l := must[Attr](t)(f.Symlink(bg, RootIno, "l", "f"))
	_, err = f.ReadInode(bg, l.Ino, 0, buf)
	wantErrno(t, err, syscall.EINVAL)
	_, err = f.ReadInode(bg, 12345, 0, buf)
	wantErrno(t, err, syscall.ENOENT)

	// Unlinked: usable until the kernel forgets it.
	must[Attr](t)(f.Lookup(bg, RootIno, "f"))
	wantErrno(t, f.Unlink(bg, RootIno, "f"), 0)
	if _, err := f.WriteInode(bg, a.Ino, 0, []byte("!"), syscall.O_WRONLY|syscall.O_APPEND); err != nil {
		t.Fatalf("write to an unlinked, referenced file: %v", err)
	}
	n, err = f.ReadInode(bg, a.Ino, 0, buf)
	if want += "!"; err != nil || string(buf[:n]) != want {
		t.Fatalf("read of an unlinked file: %q %v", buf[:n], err)
	}
	f.Forget(a.Ino, 1)
	_, err = f.ReadInode(bg, a.Ino, 0, buf)
	wantErrno(t, err, syscall.ENOENT)
	_, err = f.WriteInode(bg, a.Ino, 0, []byte("x"), syscall.O_WRONLY)
	wantErrno(t, err, syscall.ENOENT)

	// CreateInode: Create's rules, no handle, a kernel reference.
	c, err := f.CreateInode(bg, RootIno, "c", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Stats().OpenHandles; got != 0 {
		t.Errorf("CreateInode left %d handles", got)
	}
	_, err = f.CreateInode(bg, RootIno, "c", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	wantErrno(t, err, syscall.EEXIST)
	if _, err := f.WriteInode(bg, c.Ino, 0, []byte("created"), syscall.O_WRONLY); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, f.Unlink(bg, RootIno, "c"), 0)
	n, err = f.ReadInode(bg, c.Ino, 0, buf)
	if err != nil || string(buf[:n]) != "created" {
		t.Fatalf("created, unlinked, still referenced: %q %v", buf[:n], err)
	}
	f.Forget(c.Ino, 1)
	_, err = f.ReadInode(bg, c.Ino, 0, buf)
	wantErrno(t, err, syscall.ENOENT)
}
