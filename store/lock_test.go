package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

func TestLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock := filepath.Join(dir, "lock")
	ctx := context.Background()
	unlock, err := Lock(ctx, dir, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mine := fmt.Sprintf("%s:%d", LockPrefix(), os.Getpid())
	if h, err := readLock(lock); err != nil || h != mine {
		t.Fatalf("lock is %q (%v), want %q", h, err, mine)
	}

	// Held (by this live process): waited for, reported once, then refused.
	var waits []string
	_, err = Lock(ctx, dir, LockOptions{Timeout: 50 * time.Millisecond, Poll: 10 * time.Millisecond, Waiting: func(h string) { waits = append(waits, h) }})
	var le *LockError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.Holder != mine || !strings.Contains(err.Error(), "held by "+mine) {
		t.Errorf("second Lock = %v, want ErrLocked held by %s", err, mine)
	}
	if len(waits) != 1 || waits[0] != mine {
		t.Errorf("Waiting called with %q, want once with %q", waits, mine)
	}
	// Timeout 0 tries once and, as hg, does not announce a wait.
	waits = nil
	if _, err := Lock(ctx, dir, LockOptions{Waiting: func(h string) { waits = append(waits, h) }}); !errors.Is(err, ErrLocked) || len(waits) != 0 {
		t.Errorf("Lock without timeout = %v, %d warnings", err, len(waits))
	}
	// Cancellation ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Lock(cctx, dir, LockOptions{Timeout: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock with a cancelled context = %v", err)
	}
	unlock()
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Fatalf("unlock left %v", err)
	}

	// Someone else's lock is not removed by our release.
	unlock, err = Lock(ctx, dir, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(lock)
	other := LockPrefix() + ":1"
	makeLock(other, lock)
	unlock()
	if h, _ := readLock(lock); h != other {
		t.Errorf("release removed a foreign lock: now %q", h)
	}
	os.Remove(lock)

	// Stale (this host, no such process): broken, and lock.break is gone.
	makeLock(LockPrefix()+":999999999", lock)
	unlock, err = Lock(ctx, dir, LockOptions{})
	if err != nil {
		t.Fatalf("stale lock not broken: %v", err)
	}
	unlock()
	if _, err := os.Lstat(lock + ".break"); !os.IsNotExist(err) {
		t.Errorf("lock.break left: %v", err)
	}

	// Another host's lock, and an old-style lock file, are never stale.
	for _, holder := range []string{"elsewhere:999999999", "garbage"} {
		makeLock(holder, lock)
		if _, err := Lock(ctx, dir, LockOptions{}); !errors.As(err, &le) || le.Holder != holder {
			t.Errorf("lock held by %q: %v", holder, err)
		}
		os.Remove(lock)
	}
	os.WriteFile(lock, []byte("oldhost:1"), 0o644)
	if _, err := Lock(ctx, dir, LockOptions{}); !errors.As(err, &le) || le.Holder != "oldhost:1" {
		t.Errorf("old-style lock file: %v", err)
	}
	os.Remove(lock)

	// A directory that cannot hold the lock.
	if _, err := Lock(ctx, filepath.Join(dir, "missing"), LockOptions{}); !errors.As(err, &le) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Lock in a missing directory = %v", err)
	}
}

// TestLockHg checks that real hg sees our lock as held by this process.
func TestLockHg(t *testing.T) {
	t.Parallel()
	root := copyTree(t, layoutRepo(t, LayoutDotencode))
	unlock, err := Lock(context.Background(), filepath.Join(root, ".hg", "store"), LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, stderr, err := testenv.HgResult(t, root, "--config", "ui.timeout=0", "tag", "-m", "t", "t")
	want := fmt.Sprintf("timed out waiting for lock held by '%s:%d'", LockPrefix(), os.Getpid())
	if err == nil || !strings.Contains(string(stderr), want) {
		t.Errorf("hg tag under our lock: %v\n%s\nwant %q", err, stderr, want)
	}
}
