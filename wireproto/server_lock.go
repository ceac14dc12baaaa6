package wireproto

// The repository lock, as mercurial/lock.py takes it: .hg/store/lock is a
// symlink (created atomically) whose target names the holder,
// "<hostname>[/<pid namespace inode, hex>]:<pid>". A lock whose holder is
// a dead process on this host is stale and may be broken. Only the store
// lock matters here: writers of the store (commit, pull, strip) hold it,
// and a stream snapshot taken under it sees no half-written transaction.

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

// ErrLocked means the repository lock could not be taken in time.
var ErrLocked = errors.New("repository is locked")

// lockPrefix is lock._getlockprefix (keep in sync with mercurial/lock.py).
func lockPrefix() string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	if ino, ok := pidNamespaceInode(); ok {
		host += "/" + strconv.FormatUint(ino, 16)
	}
	return host
}

// repoLock is a held lock.
type repoLock struct {
	path string
	info string
}

// lockPollInterval is how often a held lock is retried. hg sleeps a
// second between tries; a server holds the lock for milliseconds, so
// waiters poll faster.
const lockPollInterval = 20 * time.Millisecond

// takeLock takes the lock file at path, waiting at most timeout.
func takeLock(ctx context.Context, path string, timeout time.Duration) (*repoLock, error) {
	prefix := lockPrefix()
	info := fmt.Sprintf("%s:%d", prefix, os.Getpid())
	deadline := time.Now().Add(timeout)
	for {
		err := os.Symlink(info, path)
		if err == nil {
			return &repoLock{path: path, info: info}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("taking lock %s: %w", path, err)
		}
		holder, rerr := os.Readlink(path)
		if rerr == nil && staleLock(holder, prefix) {
			// Break it the way lock.py does: under lock.break, re-checked.
			if brk, err := takeLock(ctx, path+".break", 0); err == nil {
				if h, err := os.Readlink(path); err == nil && h == holder {
					os.Remove(path)
				}
				brk.release()
				continue
			}
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: %s held by %s", ErrLocked, path, holder)
		}
		t := time.NewTimer(lockPollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
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

// release removes the lock if it is still ours.
func (l *repoLock) release() {
	if l == nil {
		return
	}
	if h, err := os.Readlink(l.path); err == nil && h == l.info {
		os.Remove(l.path)
	}
}

// storeLockPath is where hg keeps the store lock (.hg/store/lock, or
// .hg/lock for a store-less repository, whose store is .hg).
func storeLockPath(storeDir string) string { return filepath.Join(storeDir, "lock") }

// LockStore takes the store lock of the store directory storeDir
// (.hg/store) as hg does, waiting at most timeout, and returns its
// release function. Stream bundle writers take it around their snapshot.
func LockStore(ctx context.Context, storeDir string, timeout time.Duration) (release func(), err error) {
	l, err := takeLock(ctx, storeLockPath(storeDir), timeout)
	if err != nil {
		return nil, err
	}
	return l.release, nil
}
