package fsnode

// Compaction reclaims the dead bytes of data files (overwritten,
// truncated or deleted data).
//
// Crash-safe order:
//  1. commit everything (Sync), then measure each data file's live bytes
//     from the index;
//  2. for a mostly-dead file (live < half its length; never the current
//     one), copy its live extents into the current data file and point the
//     inodes at the copies (in memory, queued);
//  3. Sync: the copies are fsynced and the new extents committed;
//  4. commit the file's removal from the datafiles table (a committer
//     batch, so no concurrent batch can record it again);
//  5. delete the file.
//
// A crash before 3 leaves the old extents in force (copies are garbage
// past the committed length); between 3 and 4 the old file is listed but
// unreferenced and the next Compact removes it; between 4 and 5 it is
// unlisted and Open deletes it.

import (
	"context"
	"fmt"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// CompactStats says what a Compact did.
type CompactStats struct {
	FilesRemoved   int
	BytesCopied    int64
	BytesReclaimed int64
}

// Compact reclaims dead space in the data files (see above).
func (f *FS) Compact(ctx context.Context) (CompactStats, error) {
	var st CompactStats
	if f.closed.Load() {
		return st, errClosed
	}
	f.compactMu.Lock()
	defer f.compactMu.Unlock()
	if err := f.Sync(ctx); err != nil {
		return st, err
	}
	live := map[uint32]int64{}
	refs := map[uint32][]Ino{}
	err := f.view("compact", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExtents).ForEach(func(k, v []byte) error {
			ino, err := decodeInoKey(k)
			if err != nil {
				return err
			}
			exts, err := decodeExtents(v)
			if err != nil {
				return fmt.Errorf("inode %d: %w", ino, err)
			}
			seen := map[uint32]bool{}
			for _, e := range exts {
				live[e.File] += e.Len
				if !seen[e.File] {
					seen[e.File] = true
					refs[e.File] = append(refs[e.File], ino)
				}
			}
			return nil
		})
	})
	if err != nil {
		return st, fmt.Errorf("fsnode: compact: %w", err)
	}
	f.data.mu.RLock()
	var victims []uint32
	sizes := map[uint32]int64{}
	for id, df := range f.data.files {
		if df != f.data.cur && live[id]*2 < df.size {
			victims = append(victims, id)
			sizes[id] = df.size
		}
	}
	f.data.mu.RUnlock()
	for _, id := range victims {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		for _, ino := range refs[id] {
			n, err := f.relocate(ctx, ino, id)
			if err != nil {
				return st, err
			}
			st.BytesCopied += n
		}
	}
	if len(victims) == 0 {
		return st, nil
	}
	if err := f.Sync(ctx); err != nil {
		return st, err
	}
	// Detach the victims under the tree lock, so that every later batch
	// omits them from the datafiles table and the next one deletes them.
	f.tree.Lock()
	for _, id := range victims {
		if f.referenced(id) || f.data.get(id).pending.Load() > 0 {
			continue
		}
		f.data.mu.Lock()
		df := f.data.files[id]
		delete(f.data.files, id)
		f.data.mu.Unlock()
		f.c.mu.Lock()
		f.c.drop = append(f.c.drop, df)
		f.c.mu.Unlock()
		st.FilesRemoved++
		st.BytesReclaimed += sizes[id] - live[id]
	}
	f.tree.Unlock()
	if err := f.Sync(ctx); err != nil {
		return st, err
	}
	return st, nil
}

// referenced reports whether a loaded inode still has an extent in data
// file id. f.tree is held for writing.
func (f *FS) referenced(id uint32) bool {
	f.imu.Lock()
	defer f.imu.Unlock()
	for _, in := range f.inodes {
		in.mu.RLock()
		for _, e := range in.exts {
			if e.File == id {
				in.mu.RUnlock()
				return true
			}
		}
		in.mu.RUnlock()
	}
	return false
}

// relocate copies ino's extents in data file id to the current data file.
func (f *FS) relocate(ctx context.Context, ino Ino, id uint32) (int64, error) {
	if err := f.c.admit(ctx); err != nil {
		return 0, err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	in, err := f.getInode(ino)
	if err == syscall.ENOENT {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var copied int64
	exts := append([]extent(nil), in.exts...)
	for _, e := range exts {
		if e.File != id {
			continue
		}
		for done := int64(0); done < e.Len; {
			n := min(e.Len-done, 1<<20)
			buf := make([]byte, n)
			if err := f.data.readAt(id, buf, e.FileOff+done); err != nil {
				return copied, fmt.Errorf("fsnode: compact inode %d: %w", ino, err)
			}
			nid, off, err := f.data.appendData(buf)
			if err != nil {
				return copied, err
			}
			in.exts = putExtent(in.exts, extent{Off: e.Off + done, File: nid, FileOff: off, Len: n})
			done += n
			copied += n
		}
	}
	if copied > 0 {
		in.contentDirty = true
		f.markDirtyLocked(in)
	}
	return copied, nil
}
