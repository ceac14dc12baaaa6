//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Deleting outside the timed runs.
//
// ext4 without a journal (the bench machine's root filesystem) does not
// hand out an inode soon after its deletion while the inode table block
// holding it is still cached: recently_deleted (fs/ext4/ialloc.c) skips a
// candidate deleted less than RECENTCY_MIN (60 s) ago, or RECENTCY_MIN +
// RECENTCY_DIRTY (6 min) ago while that block is dirty, and walks on.
// Deleting a 20,000-file tree therefore slows file creation for up to six
// minutes: tar -x of the bench's store took 0.43 s on a quiet
// disk and up to 7 s right after a case's teardown, with about half of
// its samples in that walk (recently_deleted, the inode table block
// lookups). Whichever side ran next paid for it, so the ratio of a case that
// creates many files depended on what the case before it deleted.
//
// So nothing the cases write is deleted while the bench measures: a
// case's scratch directory is renamed into the trash when the case ends,
// and the trash is emptied once, after the last case. A trash left by an
// interrupted bench is emptied before the first case, and a bench started
// within the window of the last emptying waits out the rest (trashQuiet).

// trashQuiet is how long after deleting many files the bench waits before
// timing anything: ext4's whole window (RECENTCY_MIN + RECENTCY_DIRTY)
// and a margin.
const trashQuiet = 6*time.Minute + 10*time.Second

func trashDir(env *Env) string { return filepath.Join(env.Cache, "trash") }

// discard moves dir into the trash (a rename: no inode is freed). If the
// rename fails the directory is deleted at once, which costs only timing
// quality, so the fallback is reported on stderr.
func discard(env *Env, dir string) {
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	err := os.MkdirAll(trashDir(env), 0o755)
	if err == nil {
		var to string
		if to, err = os.MkdirTemp(trashDir(env), filepath.Base(dir)+"-"); err == nil {
			if err = os.Rename(dir, filepath.Join(to, filepath.Base(dir))); err == nil {
				return
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: moving %s to the trash: %v; deleting it now\n", dir, err)
	os.RemoveAll(dir)
}

// emptyTrash deletes what discard kept and reports whether there was
// anything to delete. It ends with sync(2), so the deletion's writeback
// does not land in a timed run. Syncing does not shorten the window for
// long: the first creations after it dirty the same inode table blocks
// again, and the inodes left in them are then skipped for the full six
// minutes (measured: creating 20,000 files took 0.2 s, then 0.6 s and
// 2.4 s in the next two rounds, a minute after a sync). The time of the
// emptying is kept beside the trash, so that a bench started within that
// window waits out the rest of it (waitQuiet).
func emptyTrash(env *Env) (bool, error) {
	ents, err := os.ReadDir(trashDir(env))
	if err != nil || len(ents) == 0 {
		return false, nil
	}
	err = os.RemoveAll(trashDir(env))
	syscall.Sync()
	if werr := os.WriteFile(emptiedStamp(env), []byte(time.Now().Format(time.RFC3339Nano)), 0o644); err == nil {
		err = werr
	}
	return true, err
}

func emptiedStamp(env *Env) string { return filepath.Join(env.Cache, "trash-emptied") }

// waitQuiet sleeps until trashQuiet has passed since the trash was last
// emptied, by this run or an earlier one, and returns how long it slept.
func waitQuiet(env *Env) time.Duration {
	b, err := os.ReadFile(emptiedStamp(env))
	if err != nil {
		return 0
	}
	at, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0
	}
	left := trashQuiet - time.Since(at)
	if left <= 0 {
		return 0
	}
	if left > trashQuiet {
		left = trashQuiet // a stamp from the future: the clock moved
	}
	time.Sleep(left)
	return left
}
