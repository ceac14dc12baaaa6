//go:build linux

package fsnode

import (
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// TestConformance runs the POSIX suite on the core directly, through
// pathFS: a path adapter that behaves like the kernel in front of a mount
// (umask, one kernel reference per open file, Forget after close).
func TestConformance(t *testing.T) {
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		return &pathFS{f: newTestFS(t, Options{})}
	})
}

// TestConformanceTinyInline repeats it with a 16-byte inline threshold, so
// the data-file paths are taken by small files too.
func TestConformanceTinyInline(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		return &pathFS{f: newTestFS(t, Options{InlineMax: 16, QueueCap: 8, BatchItems: 4})}
	})
}

type pathFS struct{ f *FS }

func umask() uint32 {
	m := unix.Umask(0)
	unix.Umask(m)
	return uint32(m)
}

func (p *pathFS) resolve(name string) (Ino, error) {
	p.f.tree.RLock()
	defer p.f.tree.RUnlock()
	return p.f.resolve(name)
}

// parent resolves the directory holding name; like the kernel's path
// walk, a non-directory there is ENOTDIR.
func (p *pathFS) parent(name string) (Ino, string, error) {
	dir, base := splitDir(name)
	ino, err := p.resolve(dir)
	if err != nil {
		return 0, "", err
	}
	a, err := p.f.GetAttr(bg, ino)
	if err != nil {
		return 0, "", err
	}
	if !a.IsDir() {
		return 0, "", syscall.ENOTDIR
	}
	return ino, base, nil
}

// lookup takes a kernel reference, as the kernel does before an open.
func (p *pathFS) lookup(name string) (Attr, error) {
	parent, base, err := p.parent(name)
	if err != nil {
		return Attr{}, err
	}
	return p.f.Lookup(bg, parent, base)
}

func (p *pathFS) OpenFile(name string, flag int, perm uint32) (posixtest.File, error) {
	var a Attr
	var h Handle
	var err error
	if flag&syscall.O_CREAT != 0 {
		parent, base, err := p.parent(name)
		if err != nil {
			return nil, err
		}
		a, h, err = p.f.Create(bg, parent, base, perm&^umask(), flag)
		if err != nil {
			return nil, err
		}
	} else {
		if a, err = p.lookup(name); err != nil {
			return nil, err
		}
		if h, err = p.f.Open(bg, a.Ino, flag); err != nil {
			p.f.Forget(a.Ino, 1)
			return nil, err
		}
	}
	return &pathFile{f: p.f, ino: a.Ino, h: h}, nil
}

func (p *pathFS) Mkdir(name string, perm uint32) error {
	parent, base, err := p.parent(name)
	if err != nil {
		return err
	}
	a, err := p.f.Mkdir(bg, parent, base, perm&^umask())
	if err == nil {
		p.f.Forget(a.Ino, 1)
	}
	return err
}

func (p *pathFS) Unlink(name string) error {
	parent, base, err := p.parent(name)
	if err != nil {
		return err
	}
	return p.f.Unlink(bg, parent, base)
}

func (p *pathFS) Rmdir(name string) error {
	parent, base, err := p.parent(name)
	if err != nil {
		return err
	}
	return p.f.Rmdir(bg, parent, base)
}

func (p *pathFS) Rename(o, n string, flags uint) error {
	op, ob, err := p.parent(o)
	if err != nil {
		return err
	}
	np, nb, err := p.parent(n)
	if err != nil {
		return err
	}
	return p.f.Rename(bg, op, ob, np, nb, uint32(flags))
}

func (p *pathFS) Link(o, n string) error {
	ino, err := p.resolve(o)
	if err != nil {
		return err
	}
	np, nb, err := p.parent(n)
	if err != nil {
		return err
	}
	a, err := p.f.Link(bg, ino, np, nb)
	if err == nil {
		p.f.Forget(a.Ino, 1)
	}
	return err
}

func (p *pathFS) Symlink(target, name string) error {
	parent, base, err := p.parent(name)
	if err != nil {
		return err
	}
	a, err := p.f.Symlink(bg, parent, base, target)
	if err == nil {
		p.f.Forget(a.Ino, 1)
	}
	return err
}

func (p *pathFS) Readlink(name string) (string, error) {
	ino, err := p.resolve(name)
	if err != nil {
		return "", err
	}
	return p.f.Readlink(bg, ino)
}

func toStat(a Attr) posixtest.Stat {
	return posixtest.Stat{Ino: uint64(a.Ino), Mode: a.Mode, Nlink: uint64(a.Nlink), Size: int64(a.Size),
		Blocks: int64(a.Blocks), Uid: a.Uid, Gid: a.Gid, Atime: a.Atime, Mtime: a.Mtime, Ctime: a.Ctime}
}

func (p *pathFS) Lstat(name string) (posixtest.Stat, error) {
	ino, err := p.resolve(name)
	if err != nil {
		return posixtest.Stat{}, err
	}
	a, err := p.f.GetAttr(bg, ino)
	return toStat(a), err
}

func (p *pathFS) setattr(name string, s SetAttr) error {
	ino, err := p.resolve(name)
	if err != nil {
		return err
	}
	_, err = p.f.SetAttr(bg, ino, s)
	return err
}

func (p *pathFS) Truncate(name string, size int64) error {
	sz := uint64(size)
	return p.setattr(name, SetAttr{Size: &sz})
}

func (p *pathFS) Chmod(name string, mode uint32) error { return p.setattr(name, SetAttr{Mode: &mode}) }

func (p *pathFS) Chown(name string, uid, gid int) error {
	u, g := uint32(uid), uint32(gid)
	return p.setattr(name, SetAttr{Uid: &u, Gid: &g})
}

func (p *pathFS) Utimes(name string, atime, mtime time.Time) error {
	return p.setattr(name, SetAttr{Atime: &atime, Mtime: &mtime})
}

func (p *pathFS) OpenDir(name string) (posixtest.Dir, error) {
	ino, err := p.resolve(name)
	if err != nil {
		return nil, err
	}
	a, err := p.f.GetAttr(bg, ino)
	if err != nil {
		return nil, err
	}
	if !a.IsDir() {
		return nil, syscall.ENOTDIR
	}
	return &pathDir{f: p.f, ino: ino}, nil
}

type pathDir struct {
	f   *FS
	ino Ino
	off uint64
}

func (d *pathDir) Next(n int) ([]string, error) {
	ents, err := d.f.ReadDirLimit(bg, d.ino, d.off, n)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		d.off = e.Off
	}
	return names, nil
}

func (d *pathDir) Close() error { return nil }

type pathFile struct {
	f      *FS
	ino    Ino
	h      Handle
	off    int64
	closed bool
}

func (p *pathFile) Read(b []byte) (int, error) {
	n, err := p.f.Read(bg, p.h, p.off, b)
	p.off += int64(n)
	if err == nil && n == 0 && len(b) > 0 {
		err = io.EOF
	}
	return n, err
}

func (p *pathFile) Write(b []byte) (int, error) {
	n, err := p.f.Write(bg, p.h, p.off, b)
	p.off += int64(n)
	return n, err
}

func (p *pathFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.f.Read(bg, p.h, off, b)
	if err == nil && n < len(b) {
		err = io.EOF
	}
	return n, err
}

func (p *pathFile) WriteAt(b []byte, off int64) (int, error) { return p.f.Write(bg, p.h, off, b) }

func (p *pathFile) Truncate(size int64) error {
	sz := uint64(size)
	_, err := p.f.SetAttr(bg, p.ino, SetAttr{Size: &sz})
	return err
}

func (p *pathFile) Fallocate(mode uint32, off, length int64) error {
	return p.f.Fallocate(bg, p.ino, off, length, mode)
}

func (p *pathFile) Sync() error { return p.f.Fsync(bg, p.h, false) }

func (p *pathFile) Stat() (posixtest.Stat, error) {
	a, err := p.f.GetAttr(bg, p.ino)
	return toStat(a), err
}

func (p *pathFile) Close() error {
	if p.closed {
		return errors.New("closed twice")
	}
	p.closed = true
	err := p.f.Flush(bg, p.h)
	p.f.Release(p.h)
	p.f.Forget(p.ino, 1)
	return err
}
