package fsnode

// A working copy written through the sink: files with their permission
// bits and modification time, and symlinks. A checkout into a new
// mounted clone (package worktree's CheckoutSink) writes this way, so
// its files reach the cache without FUSE, with the attributes the mount
// will then report and the dirstate records.

import (
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
)

// CreateAttr is Create for a file with permission bits perm (07777 at
// most) and modification time mtime (the zero time: when Close links
// it).
func (s *Sink) CreateAttr(name string, size int64, perm uint32, mtime time.Time) (io.WriteCloser, error) {
	if perm&^07777 != 0 {
		return nil, fmt.Errorf("fsnode: sink file %q: mode %#o: %w", name, perm, syscall.EINVAL)
	}
	w, err := s.Create(name, size)
	if err != nil {
		return nil, err
	}
	sf := w.(*sinkFile)
	sf.perm = perm
	if !mtime.IsZero() {
		sf.mtime = mtime.UnixNano()
	}
	return sf, nil
}

// parentOf is the directory a sink entry named name goes in (created
// with its missing parents) and its base name, checked as a new name.
func (s *Sink) parentOf(name string) (Ino, string, error) {
	dirPath, base := splitDir(name)
	if err := checkNewName(base); err != nil {
		return 0, "", err
	}
	parent, err := s.dir(dirPath)
	return parent, base, err
}

// Symlink makes name (missing parent directories too) a symbolic link
// to target, replacing a file or symlink of that name, with
// modification time mtime (the zero time: now).
func (s *Sink) Symlink(name, target string, mtime time.Time) error {
	switch {
	case target == "":
		return fmt.Errorf("fsnode: sink symlink %q: empty target: %w", name, syscall.ENOENT)
	case len(target) > maxSymlinkLen:
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, syscall.ENAMETOOLONG)
	case strings.IndexByte(target, 0) >= 0:
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, syscall.EINVAL)
	}
	parent, base, err := s.parentOf(name)
	if err != nil {
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, err)
	}
	f := s.f
	if err := f.c.admit(s.ctx); err != nil {
		return err
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	dir, err := f.dirForUpdate(parent)
	if err != nil {
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, err)
	}
	if err := f.unlinkEntry(dir, base); err != nil {
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, err)
	}
	in, err := f.mknodeLocked(s.ctx, parent, base, syscall.S_IFLNK|0o777, target, false)
	if err != nil {
		return fmt.Errorf("fsnode: sink symlink %q: %w", name, err)
	}
	if !mtime.IsZero() {
		in.mu.Lock()
		in.d.Mtime = mtime.UnixNano()
		f.markDirtyLocked(in)
		in.mu.Unlock()
	}
	s.track(name)
	return nil
}
