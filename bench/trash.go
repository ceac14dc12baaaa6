//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Deleting outside the timed runs.
//
// ext4 without a journal (the bench machine's root filesystem) does not
// hand out an inode within dirty_expire_centisecs (30 s, 35 s while the
// inode table block is dirty) of its deletion: it checks every candidate
// inode's deletion time (recently_deleted) and walks on. Deleting a
// 20,000-file tree therefore slows every file creation of the next half
// minute: tar -x of the bench's store took 0.43 s on a quiet disk and up
// to 7 s right after a case's teardown, with about half of its samples
// in that walk (recently_deleted, the inode table block lookups).
// Whichever side ran next paid for it, so the ratio of a case that
// creates many files depended on what the case before it deleted.
//
// So nothing the cases write is deleted while the bench measures: a
// case's scratch directory is renamed into the trash when the case ends,
// and the trash is emptied once, after the last case. A trash left by an
// interrupted bench is emptied before the first case, and the bench then
// waits out the window (trashQuiet).

// trashQuiet is how long after deleting many files the bench waits before
// timing anything: ext4's window plus its dirty-block allowance and a
// margin.
const trashQuiet = 40 * time.Second

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
// anything to delete.
func emptyTrash(env *Env) (bool, error) {
	ents, err := os.ReadDir(trashDir(env))
	if err != nil || len(ents) == 0 {
		return false, nil
	}
	return true, os.RemoveAll(trashDir(env))
}
