package fsnode

// Fsck's checks of special files' device numbers and of extended
// attributes (the rdev and xattrs buckets; see format.go).

import (
	"fmt"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// typeName names a file type for fsck's reports.
func typeName(typ uint32) string {
	switch typ {
	case syscall.S_IFIFO:
		return "FIFO"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFCHR:
		return "character device"
	case syscall.S_IFBLK:
		return "block device"
	}
	return fmt.Sprintf("file of type %#o", typ)
}

// specialNoContentsFix drops the contents and size a FIFO, socket or
// device must not have.
func specialNoContentsFix(ino Ino, d diskInode) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		k := inoKey(ino)
		d.Flags, d.Size = 0, 0
		if err := tx.Bucket(bucketInodes).Put(k, encodeInode(&d)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketInline).Delete(k); err != nil {
			return err
		}
		return tx.Bucket(bucketExtents).Delete(k)
	}
}

// checkRdevXattrs checks the rdev records (8 bytes, of a device inode)
// and the xattrs records (of an existing inode, a valid name, a value
// within the bounds, an inode's total within maxXattrTotal). A cache
// made before these buckets has neither: nothing to check.
func (c *fsck) checkRdevXattrs() {
	if b := c.tx.Bucket(bucketRdev); b != nil {
		b.ForEach(func(k, v []byte) error {
			ino, err := decodeInoKey(k)
			if err != nil {
				c.problem(fmt.Sprintf("rdev key %x", k), 0, deleteKeyFix(bucketRdev, k), "%v", err)
				return nil
			}
			d := c.inodes[ino]
			switch {
			case d == nil:
				c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(bucketRdev, k), "rdev record without inode")
			case !isDevice(d.Mode & syscall.S_IFMT):
				c.problem(c.path(ino), ino, deleteKeyFix(bucketRdev, k), "device number on a file that is no device")
			case len(v) != 8:
				c.problem(c.path(ino), ino, deleteKeyFix(bucketRdev, k), "device number record is %d bytes", len(v))
			}
			return nil
		})
	}
	b := c.tx.Bucket(bucketXattrs)
	if b == nil {
		return
	}
	totals := map[Ino]int{}
	b.ForEach(func(k, v []byte) error {
		if len(k) < 8 {
			c.problem(fmt.Sprintf("xattr key %x", k), 0, deleteKeyFix(bucketXattrs, k), "extended attribute key is %d bytes", len(k))
			return nil
		}
		ino, _ := decodeInoKey(k[:8])
		name := string(k[8:])
		if c.inodes[ino] == nil {
			// Unreachable and orphan inodes were dropped from c.inodes:
			// their attributes go with them (deleteInodeRecords).
			if c.tx.Bucket(bucketInodes).Get(k[:8]) == nil {
				c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(bucketXattrs, k), "extended attribute %q without inode", name)
			}
			return nil
		}
		if err := checkXattrName(name); err != nil || len(v) > maxXattrValue {
			c.problem(c.path(ino), ino, deleteKeyFix(bucketXattrs, k), "invalid extended attribute %q (%d bytes)", name, len(v))
			return nil
		}
		totals[ino] += len(name) + len(v)
		return nil
	})
	for ino, n := range totals {
		if n > maxXattrTotal {
			// Not repaired: which attribute to drop is not fsck's choice.
			c.problem(c.path(ino), ino, nil, "extended attributes take %d bytes, more than %d", n, maxXattrTotal)
		}
	}
}
