package fsnode

// On-disk records of the index (index.db, a bbolt database).
//
// Buckets and their records (all integers big-endian):
//
//	meta      "version" -> u32 format version (formatVersion)
//	          "created" -> i64 unix nanoseconds
//	          "nextino" -> u64 next inode number to allocate
//	          "nextseq" -> u64 next directory-entry cookie to allocate
//	          "open"    -> u64 unix ns; present while open (guard.go)
//	inodes    ino(8) -> inode record (inodeRecordLen bytes, see encodeInode)
//	extents   ino(8) -> u32 count, count x {u64 off, u32 file, u64 fileoff, u64 len}
//	inline    ino(8) -> file contents (regular files up to Options.InlineMax)
//	                    or symlink target
//	dirents   parent(8) name -> u64 child, u64 seq, u32 type bits
//	dirseq    parent(8) seq(8) -> name (readdir order; seq is the cookie)
//	datafiles id(4) -> u64 committed length of data-NNNN
//	orphans   ino(8) -> "" (nlink 0 but still open when committed)
//
// Every decoder checks lengths before it allocates or indexes, so a damaged
// index gives ErrCorrupt with the key, never a panic.

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// formatVersion is the index layout this code writes. Open refuses a cache
// whose version is higher (ErrNewerFormat); a lower one would be upgraded
// here when a version 2 exists.
const formatVersion = 1

var (
	bucketMeta      = []byte("meta")
	bucketInodes    = []byte("inodes")
	bucketExtents   = []byte("extents")
	bucketInline    = []byte("inline")
	bucketDirents   = []byte("dirents")
	bucketDirseq    = []byte("dirseq")
	bucketDatafiles = []byte("datafiles")
	bucketOrphans   = []byte("orphans")

	allBuckets = [][]byte{bucketMeta, bucketInodes, bucketExtents, bucketInline,
		bucketDirents, bucketDirseq, bucketDatafiles, bucketOrphans}

	metaVersion = []byte("version")
	metaCreated = []byte("created")
	metaNextIno = []byte("nextino")
	metaNextSeq = []byte("nextseq")
)

// inodeRecordLen is the size of an encoded inode record:
//
//	off len
//	0   1   record version (1)
//	1   4   mode (type bits | permissions)
//	5   4   nlink
//	9   4   uid
//	13  4   gid
//	17  8   size
//	25  8   atime (unix ns)
//	33  8   mtime (unix ns)
//	41  8   ctime (unix ns)
//	49  8   parent inode (directories; 0 otherwise)
//	57  1   flags (flagInline)
const inodeRecordLen = 58

const (
	inodeRecordVersion = 1
	// flagInline: the contents are the value under inline/ino, not extents.
	flagInline = 1 << 0
)

// diskInode is the decoded form of an inode record.
type diskInode struct {
	Mode                uint32
	Nlink               uint32
	Uid, Gid            uint32
	Size                uint64
	Atime, Mtime, Ctime int64
	Parent              Ino
	Flags               uint8
}

func encodeInode(d *diskInode) []byte {
	b := make([]byte, inodeRecordLen)
	b[0] = inodeRecordVersion
	binary.BigEndian.PutUint32(b[1:], d.Mode)
	binary.BigEndian.PutUint32(b[5:], d.Nlink)
	binary.BigEndian.PutUint32(b[9:], d.Uid)
	binary.BigEndian.PutUint32(b[13:], d.Gid)
	binary.BigEndian.PutUint64(b[17:], d.Size)
	binary.BigEndian.PutUint64(b[25:], uint64(d.Atime))
	binary.BigEndian.PutUint64(b[33:], uint64(d.Mtime))
	binary.BigEndian.PutUint64(b[41:], uint64(d.Ctime))
	binary.BigEndian.PutUint64(b[49:], uint64(d.Parent))
	b[57] = d.Flags
	return b
}

func decodeInode(b []byte) (diskInode, error) {
	var d diskInode
	if len(b) != inodeRecordLen {
		return d, fmt.Errorf("%w: inode record is %d bytes, want %d", ErrCorrupt, len(b), inodeRecordLen)
	}
	if b[0] != inodeRecordVersion {
		return d, fmt.Errorf("%w: inode record version %d, want %d", ErrCorrupt, b[0], inodeRecordVersion)
	}
	d.Mode = binary.BigEndian.Uint32(b[1:])
	d.Nlink = binary.BigEndian.Uint32(b[5:])
	d.Uid = binary.BigEndian.Uint32(b[9:])
	d.Gid = binary.BigEndian.Uint32(b[13:])
	d.Size = binary.BigEndian.Uint64(b[17:])
	d.Atime = int64(binary.BigEndian.Uint64(b[25:]))
	d.Mtime = int64(binary.BigEndian.Uint64(b[33:]))
	d.Ctime = int64(binary.BigEndian.Uint64(b[41:]))
	d.Parent = Ino(binary.BigEndian.Uint64(b[49:]))
	d.Flags = b[57]
	switch d.Mode & syscall.S_IFMT {
	case syscall.S_IFREG, syscall.S_IFDIR, syscall.S_IFLNK:
	default:
		return d, fmt.Errorf("%w: inode mode %#o has an unsupported file type", ErrCorrupt, d.Mode)
	}
	if d.Mode&^uint32(syscall.S_IFMT|07777) != 0 {
		return d, fmt.Errorf("%w: inode mode %#o has unknown bits", ErrCorrupt, d.Mode)
	}
	if d.Flags&^flagInline != 0 {
		return d, fmt.Errorf("%w: inode flags %#x has unknown bits", ErrCorrupt, d.Flags)
	}
	if d.Size > maxFileSize {
		return d, fmt.Errorf("%w: inode size %d exceeds %d", ErrCorrupt, d.Size, uint64(maxFileSize))
	}
	return d, nil
}

// maxFileSize bounds file sizes and offsets so that offset arithmetic in
// int64 never overflows.
const maxFileSize = 1 << 50

// extent maps file bytes [Off, Off+Len) to data file File at FileOff.
// Bytes of a file not covered by any extent read as zeros (holes).
type extent struct {
	Off     int64
	File    uint32
	FileOff int64
	Len     int64
}

func (e extent) end() int64 { return e.Off + e.Len }

const extentRecordLen = 28

func encodeExtents(exts []extent) []byte {
	b := make([]byte, 4+extentRecordLen*len(exts))
	binary.BigEndian.PutUint32(b, uint32(len(exts)))
	p := b[4:]
	for _, e := range exts {
		binary.BigEndian.PutUint64(p[0:], uint64(e.Off))
		binary.BigEndian.PutUint32(p[8:], e.File)
		binary.BigEndian.PutUint64(p[12:], uint64(e.FileOff))
		binary.BigEndian.PutUint64(p[20:], uint64(e.Len))
		p = p[extentRecordLen:]
	}
	return b
}

// decodeExtents decodes and validates an extent list: sorted by file
// offset, non-overlapping, non-empty, within maxFileSize, data file ids > 0.
func decodeExtents(b []byte) ([]extent, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: extent list is %d bytes, want at least 4", ErrCorrupt, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(len(b)-4) != uint64(n)*extentRecordLen {
		return nil, fmt.Errorf("%w: extent list claims %d extents in %d bytes", ErrCorrupt, n, len(b))
	}
	exts := make([]extent, n)
	p := b[4:]
	var prevEnd int64
	for i := range exts {
		e := extent{
			Off:     int64(binary.BigEndian.Uint64(p[0:])),
			File:    binary.BigEndian.Uint32(p[8:]),
			FileOff: int64(binary.BigEndian.Uint64(p[12:])),
			Len:     int64(binary.BigEndian.Uint64(p[20:])),
		}
		p = p[extentRecordLen:]
		switch {
		case e.Len <= 0 || e.Len > maxFileSize:
			return nil, fmt.Errorf("%w: extent %d has length %d", ErrCorrupt, i, e.Len)
		case e.Off < prevEnd || e.Off > maxFileSize-e.Len:
			return nil, fmt.Errorf("%w: extent %d at offset %d overlaps or is out of order", ErrCorrupt, i, e.Off)
		case e.File == 0:
			return nil, fmt.Errorf("%w: extent %d names data file 0", ErrCorrupt, i)
		case e.FileOff < 0 || e.FileOff > maxFileSize-e.Len:
			return nil, fmt.Errorf("%w: extent %d data offset %d out of range", ErrCorrupt, i, e.FileOff)
		}
		prevEnd = e.end()
		exts[i] = e
	}
	return exts, nil
}

// direntValueLen is the size of a dirents value: child(8) seq(8) type(4).
const direntValueLen = 20

// maxNameLen is NAME_MAX on Linux.
const maxNameLen = 255

type diskDirent struct {
	Child Ino
	Seq   uint64
	Type  uint32 // S_IFMT bits of the child
}

func direntKey(parent Ino, name string) []byte {
	k := make([]byte, 8+len(name))
	binary.BigEndian.PutUint64(k, uint64(parent))
	copy(k[8:], name)
	return k
}

func decodeDirentKey(k []byte) (Ino, string, error) {
	if len(k) < 9 || len(k) > 8+maxNameLen {
		return 0, "", fmt.Errorf("%w: directory entry key is %d bytes", ErrCorrupt, len(k))
	}
	name := string(k[8:])
	if err := checkName(name); err != nil || name == "." || name == ".." {
		return 0, "", fmt.Errorf("%w: directory entry name %q is invalid", ErrCorrupt, name)
	}
	return Ino(binary.BigEndian.Uint64(k)), name, nil
}

func encodeDirent(d diskDirent) []byte {
	b := make([]byte, direntValueLen)
	binary.BigEndian.PutUint64(b, uint64(d.Child))
	binary.BigEndian.PutUint64(b[8:], d.Seq)
	binary.BigEndian.PutUint32(b[16:], d.Type)
	return b
}

func decodeDirent(b []byte) (diskDirent, error) {
	var d diskDirent
	if len(b) != direntValueLen {
		return d, fmt.Errorf("%w: directory entry is %d bytes, want %d", ErrCorrupt, len(b), direntValueLen)
	}
	d.Child = Ino(binary.BigEndian.Uint64(b))
	d.Seq = binary.BigEndian.Uint64(b[8:])
	d.Type = binary.BigEndian.Uint32(b[16:])
	switch d.Type {
	case syscall.S_IFREG, syscall.S_IFDIR, syscall.S_IFLNK:
	default:
		return d, fmt.Errorf("%w: directory entry type %#o", ErrCorrupt, d.Type)
	}
	if d.Child == 0 || d.Seq < firstSeq {
		return d, fmt.Errorf("%w: directory entry child %d seq %d", ErrCorrupt, d.Child, d.Seq)
	}
	return d, nil
}

func dirseqKey(parent Ino, seq uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(parent))
	binary.BigEndian.PutUint64(k[8:], seq)
	return k
}

func inoKey(ino Ino) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, uint64(ino))
	return k
}

func decodeInoKey(k []byte) (Ino, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("%w: inode key is %d bytes", ErrCorrupt, len(k))
	}
	return Ino(binary.BigEndian.Uint64(k)), nil
}

func fileKey(id uint32) []byte {
	k := make([]byte, 4)
	binary.BigEndian.PutUint32(k, id)
	return k
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func decodeU64(b []byte, what string) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: %s is %d bytes, want 8", ErrCorrupt, what, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}
