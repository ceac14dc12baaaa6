package store

// The repository lock, as mercurial/lock.py takes it: .hg/store/lock (or
// .hg/lock for a store-less repository, whose store is .hg) is a symlink
// (on Windows a file, see makeLock), created atomically, whose target
// (content) names the holder:
// "<hostname>[/<pid namespace inode, hex>]:<pid>". A lock whose holder is
// a dead process of this host is stale and is broken, under the
// "lock.break" lock so that two breakers cannot remove a fresh lock.
// Writers of the store (commit, pull, strip) hold it, so a reader that
// holds it sees no half-written transaction.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockOptions tune Lock.
type LockOptions struct {
	// Timeout is how long a lock held by someone else is waited for; 0
	// tries once.
	Timeout time.Duration
	// Poll is the interval between tries (default 100ms; hg sleeps a
	// second, but stream snapshots hold the lock for milliseconds).
	Poll time.Duration
	// Waiting, if set, is called once, with the holder, when the lock is
	// first found held by a live process, unless Timeout is 0: hg
	// prints "waiting for lock on ... held by ..." there.
	Waiting func(holder string)
}

// LockError is a failed Lock. Err is ErrLocked when the lock stayed
// held (by Holder) until the timeout, else the reason it could not be
// created (os.ErrPermission, syscall.EROFS, ...).
type LockError struct {
	Path   string
	Holder string
	Err    error
}

func (e *LockError) Error() string {
	if e.Err == ErrLocked {
		return fmt.Sprintf("%v: %s held by %s", ErrLocked, e.Path, e.Holder)
	}
	return fmt.Sprintf("taking lock %s: %v", e.Path, e.Err)
}

func (e *LockError) Unwrap() error { return e.Err }

// Lock takes the store lock of the store directory storeDir (Store.Dir)
// as hg does and returns its release function, which removes the lock
// if it is still ours. It fails with a *LockError, or ctx's error when
// ctx ends while waiting.
func Lock(ctx context.Context, storeDir string, opt LockOptions) (unlock func(), err error) {
	if opt.Poll <= 0 {
		opt.Poll = 100 * time.Millisecond
	}
	return lockFile(ctx, filepath.Join(storeDir, "lock"), opt)
}

// WLock takes the working-directory lock, .hg/wlock of the repository at
// root, as hg's repo.wlock() does (the same symlink protocol as Lock).
// hg takes it before the store lock when it writes files of .hg such as
// the bookmarks or the dirstate.
func WLock(ctx context.Context, root string, opt LockOptions) (unlock func(), err error) {
	if opt.Poll <= 0 {
		opt.Poll = 100 * time.Millisecond
	}
	return lockFile(ctx, filepath.Join(root, ".hg", "wlock"), opt)
}

func lockFile(ctx context.Context, path string, opt LockOptions) (func(), error) {
	prefix := LockPrefix()
	info := prefix + ":" + strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(opt.Timeout)
	warned := false
	for {
		err := makeLock(info, path)
		if err == nil {
			return func() {
				if h, err := readLock(path); err == nil && h == info {
					os.Remove(path)
				}
			}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			var le *os.LinkError
			if errors.As(err, &le) {
				err = le.Err
			}
			return nil, &LockError{Path: path, Err: err}
		}
		holder, rerr := readLock(path)
		if rerr != nil {
			if errors.Is(rerr, os.ErrNotExist) {
				continue // released meanwhile
			}
			return nil, &LockError{Path: path, Err: rerr}
		}
		if staleLock(holder, prefix) {
			// lock._testlock: break it under lock.break, re-checked.
			if release, err := lockFile(ctx, path+".break", LockOptions{Poll: opt.Poll}); err == nil {
				if h, err := readLock(path); err == nil && h == holder {
					os.Remove(path)
				}
				release()
				continue
			}
		}
		// lock.py trylock warns at the first failure, unless there is
		// no timeout to wait for.
		if !warned && opt.Waiting != nil && opt.Timeout > 0 {
			opt.Waiting(holder)
		}
		warned = true
		if !time.Now().Before(deadline) {
			return nil, &LockError{Path: path, Holder: holder, Err: ErrLocked}
		}
		t := time.NewTimer(opt.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// LockPrefix is the holder prefix this process writes into a lock,
// lock._getlockprefix: the host name and, on Linux, "/" and the pid
// namespace's inode in hex. Keep in sync with mercurial/lock.py.
func LockPrefix() string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	if ino, ok := pidNamespaceInode(); ok {
		host += "/" + strconv.FormatUint(ino, 16)
	}
	return host
}

// staleLock reports whether holder ("prefix:pid") is a dead process of
// this host (lock._lockshouldbebroken).
func staleLock(holder, prefix string) bool {
	i := strings.LastIndexByte(holder, ':')
	if i < 0 || holder[:i] != prefix {
		return false
	}
	pid, err := strconv.Atoi(holder[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	return !processAlive(pid)
}

// readLock returns the holder a lock names (util.readlock): a symlink's
// target, or an old-style or Windows lock file's content.
func readLock(path string) (string, error) {
	h, err := os.Readlink(path)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return h, err
	}
	data, err := os.ReadFile(path)
	return string(data), err
}
