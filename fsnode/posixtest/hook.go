//go:build linux

package posixtest

import (
	"os"
	"syscall"
	"testing"
)

// Hook is called with an open regular file of a case, as the wrapped
// FS's OpenFile returned it (OS's files have an Fd method), at the
// points Hooked names. fsnode's and the mount's virtual-file suites make
// the file virtual there (its contents a reference to bytes a resolver
// holds), so that the cases run across the copy-on-write boundary.
type Hook func(f File) error

// Hooked returns fsys with hook called on every regular file a case
// opens: after each change of its contents through the open file (a
// write, a truncation, fallocate), before each close, and after a
// truncation by name (on the file opened read-only for the hook). So a
// file a case made and wrote is in the hook's state whenever the case
// next looks at it or changes it. A hook's error fails the case. The
// result is Native if fsys is, and keeps fsys's OSOptions.
func Hooked(t testing.TB, fsys FS, hook Hook) FS {
	h := &hookFS{FS: fsys, t: t, hook: hook}
	if n, ok := fsys.(Native); ok {
		return hookNativeFS{h, n}
	}
	return h
}

// ReadBackCases names the cases that read a regular file back, through
// a new open or after a change of its contents, once they have written
// it (so a Hooked suite's hook has run on it before the read); true
// marks those that then change the contents of a file the hook has had,
// through the FS or a native descriptor. Suites over virtual files
// check that these resolve a revision, and copy one into the cache.
var ReadBackCases = map[string]bool{
	"CreateReadWrite": false, "WriteAtOffsets": true, "Append": true, "Truncate": true,
	"LargeFile": true, "UnlinkOpenFile": true, "RenameFile": false, "RenameNoReplace": false,
	"RenameExchange": false, "RenameDir": false, "HardLink": true, "MtimeOnWrite": true,
	"ManyFiles": false, "Names": false, "OverwriteOpenTarget": false, "MknodFile": false,
	"Fallocate": true,
}

type hookFS struct {
	FS
	t    testing.TB
	hook Hook
}

func (h *hookFS) unwrap() FS { return h.FS }

// run calls the hook on f; the case fails (and goes on) on an error.
func (h *hookFS) run(f File, when string) {
	if err := h.hook(f); err != nil {
		h.t.Errorf("posixtest hook %s: %v", when, err)
	}
}

func (h *hookFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || typ(st.Mode) != syscall.S_IFREG {
		return f, nil
	}
	return &hookFile{File: f, h: h}, nil
}

func (h *hookFS) Truncate(name string, size int64) error {
	if err := h.FS.Truncate(name, size); err != nil {
		return err
	}
	f, err := h.FS.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		h.t.Errorf("posixtest hook: open %s after truncate: %v", name, err)
		return nil
	}
	h.run(f, "after truncate "+name)
	if err := f.Close(); err != nil {
		h.t.Errorf("posixtest hook: close %s: %v", name, err)
	}
	return nil
}

type hookNativeFS struct {
	*hookFS
	n Native
}

func (h hookNativeFS) Path(name string) string { return h.n.Path(name) }

// hookFile is a regular file of a Hooked FS.
type hookFile struct {
	File
	h *hookFS
}

func (f *hookFile) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	if n > 0 {
		f.h.run(f.File, "after write")
	}
	return n, err
}

func (f *hookFile) WriteAt(b []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(b, off)
	if n > 0 {
		f.h.run(f.File, "after pwrite")
	}
	return n, err
}

func (f *hookFile) Truncate(size int64) error {
	err := f.File.Truncate(size)
	if err == nil {
		f.h.run(f.File, "after ftruncate")
	}
	return err
}

func (f *hookFile) Fallocate(mode uint32, off, length int64) error {
	fa, ok := f.File.(Fallocator)
	if !ok {
		return syscall.EOPNOTSUPP
	}
	err := fa.Fallocate(mode, off, length)
	if err == nil {
		f.h.run(f.File, "after fallocate")
	}
	return err
}

func (f *hookFile) Close() error {
	f.h.run(f.File, "before close")
	return f.File.Close()
}

// SameTree reports, as errors of t prefixed with what (e.g.
// "remounted"), every name of before that is gone or changed in after
// and every name that appeared: the check that a tree of files (in the
// caller's own terms, one value per name) survived a reopen.
func SameTree[V comparable](t testing.TB, what string, before, after map[string]V) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s: %q is gone", what, name)
		case a != b:
			t.Errorf("%s: %q is %+v, was %+v", what, name, a, b)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: %q appeared", what, name)
		}
	}
}
