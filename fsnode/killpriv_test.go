package fsnode

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestKillPriv: with WithKillPriv, writes, truncations (SetAttr, Open and
// Create with O_TRUNC) and owner changes clear S_ISUID, S_ISGID with
// S_IXGRP, and security.capability; without it nothing is cleared; a
// new file and a directory keep theirs; the result survives a reopen.
func TestKillPriv(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Close() }()
	kill := WithKillPriv(bg)
	root := f.Root()
	capv := []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	file := func(name string, mode uint32) Ino {
		t.Helper()
		a := createFile(t, f, root, name, []byte("0123456789"))
		must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Mode: &mode}))
		if err := f.Setxattr(bg, a.Ino, capabilityXattr, capv, 0); err != nil {
			t.Fatal(err)
		}
		return a.Ino
	}
	check := func(ino Ino, mode uint32, hasCap bool) {
		t.Helper()
		a := must[Attr](t)(f.GetAttr(bg, ino))
		if a.Mode&0o7777 != mode {
			t.Errorf("inode %d: mode %o, want %o", ino, a.Mode&0o7777, mode)
		}
		_, err := f.Getxattr(bg, ino, capabilityXattr)
		if (err == nil) != hasCap {
			t.Errorf("inode %d: security.capability: %v, want present %v", ino, err, hasCap)
		}
	}
	size := uint64(3)
	uid := uint32(1)
	now := time.Now()
	inos := map[string]Ino{}
	write := func(ctx context.Context) func(Ino) error {
		return func(ino Ino) error {
			_, err := f.WriteInode(ctx, ino, 0, []byte("x"), syscall.O_WRONLY)
			return err
		}
	}
	setattr := func(ctx context.Context, set SetAttr) func(Ino) error {
		return func(ino Ino) error {
			_, err := f.SetAttr(ctx, ino, set)
			return err
		}
	}
	for _, c := range []struct {
		name   string
		mode   uint32
		op     func(ino Ino) error
		want   uint32
		hasCap bool
	}{
		{"write-plain", 0o6777, write(bg), 0o6777, true},
		{"write", 0o6777, write(kill), 0o0777, false},
		{"write-handle", 0o6755, func(ino Ino) error {
			h, err := f.Open(bg, ino, syscall.O_WRONLY)
			if err != nil {
				return err
			}
			defer f.Release(h)
			_, err = f.Write(kill, h, 0, []byte("x"))
			return err
		}, 0o0755, false},
		{"write-sgid-noexec", 0o6765, write(kill), 0o2765, false},
		{"setattr-size", 0o6777, setattr(kill, SetAttr{Size: &size}), 0o0777, false},
		{"setattr-uid", 0o4777, setattr(kill, SetAttr{Uid: &uid}), 0o0777, false},
		{"setattr-times", 0o6777, setattr(kill, SetAttr{Mtime: &now}), 0o6777, true},
		{"setattr-size-plain", 0o6777, setattr(bg, SetAttr{Size: &size}), 0o6777, true},
		{"open-trunc", 0o6777, func(ino Ino) error {
			h, err := f.Open(kill, ino, syscall.O_WRONLY|syscall.O_TRUNC)
			f.Release(h)
			return err
		}, 0o0777, false},
		{"open-notrunc", 0o6777, func(ino Ino) error {
			h, err := f.Open(kill, ino, syscall.O_WRONLY)
			f.Release(h)
			return err
		}, 0o6777, true},
		{"fallocate", 0o6777, func(ino Ino) error {
			return f.Fallocate(kill, ino, 0, 100, 0)
		}, 0o0777, false},
		{"fallocate-keepsize", 0o6777, func(ino Ino) error {
			return f.Fallocate(kill, ino, 0, 100, FallocKeepSize)
		}, 0o0777, false},
		{"create-existing", 0o6777, func(ino Ino) error {
			a, err := f.CreateInode(kill, root, "create-existing", 0o644, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC)
			f.Forget(a.Ino, 1)
			return err
		}, 0o0777, false},
	} {
		ino := file(c.name, c.mode)
		if err := c.op(ino); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check(ino, c.want, c.hasCap)
		inos[c.name] = ino
	}

	// A new file keeps the set-id bits it is created with; a directory
	// is never changed.
	a := must[Attr](t)(f.CreateInode(kill, root, "new", 0o6755, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC))
	f.Forget(a.Ino, 1)
	check(a.Ino, 0o6755, false)
	d := must[Attr](t)(f.Mkdir(bg, root, "d", 0o755))
	f.Forget(d.Ino, 1)
	sgid := uint32(0o2775)
	must[Attr](t)(f.SetAttr(bg, d.Ino, SetAttr{Mode: &sgid}))
	must[Attr](t)(f.SetAttr(kill, d.Ino, SetAttr{Uid: &uid}))
	check(d.Ino, 0o2775, false)

	f = closeAndReopen(t, f, dir)
	check(inos["write"], 0o0777, false)
	check(inos["write-plain"], 0o6777, true)
}
