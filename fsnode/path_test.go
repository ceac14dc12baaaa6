package fsnode

import (
	"syscall"
	"testing"
)

// TestWalk checks the path walk of path-based adapters: it finds what
// Lookup finds, fails as Lookup fails, and holds one kernel reference on
// what it returns, which keeps an unlinked file until Forget.
func TestWalk(t *testing.T) {
	f := newTestFS(t, Options{})
	d := must[Attr](t)(f.Mkdir(bg, RootIno, "d", 0o755))
	f.Forget(d.Ino, 1)
	a, h, err := f.Create(bg, d.Ino, "x", 0o644, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	f.Release(h)
	f.Forget(a.Ino, 1)

	if root := must[Attr](t)(f.Walk(bg, "/")); root.Ino != RootIno || !root.IsDir() {
		t.Fatalf("Walk(/) = %+v", root)
	}
	f.Forget(RootIno, 1)
	w := must[Attr](t)(f.Walk(bg, "/d/x"))
	if w.Ino != a.Ino {
		t.Fatalf("Walk(/d/x) = inode %d, want %d", w.Ino, a.Ino)
	}
	for p, want := range map[string]syscall.Errno{
		"d/missing": syscall.ENOENT,
		"d/x/y":     syscall.ENOTDIR,
		"d/../d":    syscall.EINVAL,
	} {
		_, err := f.Walk(bg, p)
		wantErrno(t, err, want)
	}
	wantErrno(t, f.Unlink(bg, d.Ino, "x"), 0)
	if _, err := f.GetAttr(bg, a.Ino); err != nil {
		t.Fatalf("unlinked file reclaimed while Walk's reference holds it: %v", err)
	}
	f.Forget(a.Ino, 1)
	_, err = f.GetAttr(bg, a.Ino)
	wantErrno(t, err, syscall.ENOENT)
}
