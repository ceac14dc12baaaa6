package fsnode

// Upgrading a cache of an older format version.
//
// Version 1 -> 2 (checksums): every extent record is rewritten in the
// version 2 layout, each extent cut into runs of at most maxRunLen bytes
// whose CRC32C is computed from the data files, and the version record
// set to 2, all in one bbolt transaction: a crash (or an error) in the
// middle leaves the version 1 cache as it was, and the next Open starts
// again. It reads every live byte of the cache once.
//
// The checksums describe the bytes as they are at migration: damage done
// before it cannot be told from data. Bytes an extent names that cannot
// be read (past a data file's end: a damaged cache) are checksummed as
// zeros; fsck reports such extents anyway. An extent list that does not
// decode is written as an empty (undecodable) record, so that it stays
// damaged in version 2 and fsck reports it.

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// migrate upgrades the open index db of the cache in dir to formatVersion.
func migrate(db *bolt.DB, dir string) error {
	files := map[uint32]*os.File{}
	defer func() {
		for _, fh := range files {
			fh.Close()
		}
	}()
	open := func(id uint32) *os.File {
		fh, ok := files[id]
		if !ok {
			fh, _ = os.Open(filepath.Join(dir, dataFileName(id))) // nil if missing: zeros
			files[id] = fh
		}
		return fh
	}
	buf := make([]byte, maxRunLen)
	err := guarded("upgrade", func() error {
		return db.Update(func(tx *bolt.Tx) error {
			m := tx.Bucket(bucketMeta)
			if m == nil {
				return fmt.Errorf("%w: no meta bucket", ErrNotCache)
			}
			ver, err := readVersion(m)
			if err != nil || ver == formatVersion {
				return err
			}
			if ver != 1 {
				return fmt.Errorf("%w: cannot upgrade format version %d", ErrCorrupt, ver)
			}
			log.Printf("hgfs: upgrading cache %s to format version %d (checksums: reading its data files once)", dir, formatVersion)
			b := tx.Bucket(bucketExtents)
			if b == nil {
				return fmt.Errorf("%w: bucket %q missing", ErrCorrupt, bucketExtents)
			}
			type rec struct{ k, v []byte }
			var recs []rec
			if err := b.ForEach(func(k, v []byte) error {
				recs = append(recs, rec{append([]byte(nil), k...), append([]byte(nil), v...)})
				return nil
			}); err != nil {
				return err
			}
			for _, r := range recs {
				old, err := decodeExtentsVersion(r.v, 1)
				if err != nil {
					if err := b.Put(r.k, []byte{}); err != nil {
						return err
					}
					continue
				}
				var exts []extent
				for _, e := range old {
					for done := int64(0); done < e.Len; {
						n := min(e.Len-done, maxRunLen)
						p := buf[:n]
						if err := readOrZero(open(e.File), p, e.FileOff+done); err != nil {
							return fmt.Errorf("reading %s at %d: %w", dataFileName(e.File), e.FileOff+done, err)
						}
						exts = append(exts, extent{Off: e.Off + done, File: e.File, FileOff: e.FileOff + done,
							Len: n, Run: n, Sum: checksum(p)})
						done += n
					}
				}
				if err := b.Put(r.k, encodeExtents(exts)); err != nil {
					return err
				}
			}
			v := make([]byte, 4)
			v[3] = formatVersion
			return m.Put(metaVersion, v)
		})
	})
	if err != nil {
		return fmt.Errorf("fsnode: upgrading %s to format version %d: %w", dir, formatVersion, err)
	}
	return nil
}

// readOrZero reads len(p) bytes of fh at off; what lies past the end (or
// everything, when fh is nil) reads as zeros.
func readOrZero(fh *os.File, p []byte, off int64) error {
	clear(p)
	if fh == nil {
		return nil
	}
	_, err := fh.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
