package fsnode

// A read-only io/fs view of the cache, so that revlog and store code can
// read a repository straight from it. Open files hold a handle (keeping
// the inode alive and readable even if it is unlinked meanwhile) and
// implement io.ReaderAt and io.Seeker.

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"time"
)

// FS returns a read-only fs.FS view of the cache. Names follow fs.ValidPath.
func (f *FS) FS() fs.FS { return viewFS{f} }

type viewFS struct{ f *FS }

var (
	_ fs.StatFS     = viewFS{}
	_ fs.ReadDirFS  = viewFS{}
	_ fs.ReadFileFS = viewFS{}
	_ io.ReaderAt   = (*viewFile)(nil)
	_ io.Seeker     = (*viewFile)(nil)
)

func pathErr(op, name string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT):
		err = fs.ErrNotExist
	case errors.Is(err, syscall.EINVAL):
		err = fs.ErrInvalid
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (v viewFS) lookup(op, name string) (Attr, error) {
	if !fs.ValidPath(name) {
		return Attr{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	a, err := v.f.LookupPath(context.Background(), name)
	if err != nil {
		return Attr{}, pathErr(op, name, err)
	}
	return a, nil
}

func (v viewFS) Open(name string) (fs.File, error) {
	a, err := v.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if a.IsDir() {
		return &viewDir{v: v, name: name, attr: a}, nil
	}
	h, err := v.f.Open(context.Background(), a.Ino, syscall.O_RDONLY)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return &viewFile{v: v, name: name, attr: a, h: h}, nil
}

func (v viewFS) Stat(name string) (fs.FileInfo, error) {
	a, err := v.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: baseName(name), a: a}, nil
}

func (v viewFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	b, err := v.f.ReadFile(context.Background(), name)
	if err != nil {
		return nil, pathErr("readfile", name, err)
	}
	return b, nil
}

func (v viewFS) ReadDir(name string) ([]fs.DirEntry, error) {
	a, err := v.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	d := &viewDir{v: v, name: name, attr: a}
	return d.ReadDir(-1)
}

func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

type fileInfo struct {
	name string
	a    Attr
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return int64(i.a.Size) }
func (i fileInfo) ModTime() time.Time { return i.a.Mtime }
func (i fileInfo) IsDir() bool        { return i.a.IsDir() }
func (i fileInfo) Sys() any           { return i.a }
func (i fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.a.Mode & 0o777)
	switch i.a.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

type viewFile struct {
	v      viewFS
	name   string
	attr   Attr
	h      Handle
	off    int64
	closed bool
}

func (r *viewFile) Stat() (fs.FileInfo, error) {
	a, err := r.v.f.GetAttr(context.Background(), r.attr.Ino)
	if err != nil {
		return nil, pathErr("stat", r.name, err)
	}
	return fileInfo{name: baseName(r.name), a: a}, nil
}

func (r *viewFile) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *viewFile) ReadAt(p []byte, off int64) (int, error) {
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrClosed}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrInvalid}
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.v.f.Read(context.Background(), r.h, off, p)
	if err != nil {
		return n, &fs.PathError{Op: "read", Path: r.name, Err: err}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *viewFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		a, err := r.v.f.GetAttr(context.Background(), r.attr.Ino)
		if err != nil {
			return 0, pathErr("seek", r.name, err)
		}
		offset += int64(a.Size)
	default:
		return 0, &fs.PathError{Op: "seek", Path: r.name, Err: fs.ErrInvalid}
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: r.name, Err: fs.ErrInvalid}
	}
	r.off = offset
	return offset, nil
}

func (r *viewFile) Close() error {
	if r.closed {
		return &fs.PathError{Op: "close", Path: r.name, Err: fs.ErrClosed}
	}
	r.closed = true
	r.v.f.Release(r.h)
	return nil
}

type viewDir struct {
	v       viewFS
	name    string
	attr    Attr
	entries []DirEntry
	read    bool
	pos     int
}

func (d *viewDir) Stat() (fs.FileInfo, error) {
	return fileInfo{name: baseName(d.name), a: d.attr}, nil
}

func (d *viewDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: syscall.EISDIR}
}

func (d *viewDir) Close() error { return nil }

func (d *viewDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		ents, err := d.v.f.ReadDir(context.Background(), d.attr.Ino, 0)
		if err != nil {
			return nil, pathErr("readdir", d.name, err)
		}
		slices.SortFunc(ents, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
		d.entries, d.read = ents, true
	}
	rest := d.entries[d.pos:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.pos += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, e := range rest {
		out[i] = dirEntry{v: d.v, e: e}
	}
	return out, nil
}

type dirEntry struct {
	v viewFS
	e DirEntry
}

func (e dirEntry) Name() string { return e.e.Name }
func (e dirEntry) IsDir() bool  { return e.e.Mode == syscall.S_IFDIR }
func (e dirEntry) Type() fs.FileMode {
	return fileInfo{a: Attr{Mode: e.e.Mode}}.Mode().Type()
}
func (e dirEntry) Info() (fs.FileInfo, error) {
	a, err := e.v.f.GetAttr(context.Background(), e.e.Ino)
	if err != nil {
		return nil, pathErr("stat", e.e.Name, err)
	}
	return fileInfo{name: e.e.Name, a: a}, nil
}
