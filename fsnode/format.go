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
//	          "ingest"  -> i64 unix nanoseconds; present while the cache is
//	                       being filled by a clone (CreateForIngest) and not
//	                       finished: Open and Fsck refuse it (ErrUnfinished)
//	extents   ino(8) -> u32 count, count x extent record (extentRecordLen
//	                    bytes, see encodeExtents)
//	inline    ino(8) -> file contents (regular files up to Options.InlineMax)
//	                    or symlink target
//	dirents   parent(8) name -> u64 child, u64 seq, u32 type bits
//	dirseq    parent(8) seq(8) -> name (readdir order; seq is the cookie)
//	datafiles id(4) -> u64 committed length of data-NNNN
//	orphans   ino(8) -> "" (nlink 0 but still open when committed)
//	rdev      ino(8) -> u64 device number (character and block device
//	                    nodes only; the value the FUSE layer passed)
//	xattrs    ino(8) name -> value (extended attributes; see xattr.go
//	                    for the bounds)
//	virtual   ino(8) -> filenode(20) path: the content of a virtual file
//	                    (flagVirtual; see virtual.go), a file revision in
//	                    the repository the cache holds, instead of inline
//	                    contents or extents
//	vdirs     ino(8) -> the files of directory ino not made yet: a
//	                    deferred listing (vdir.go), made into virtual
//	                    files when the directory is first loaded
//
// The rdev and xattrs buckets arrive with format 2: Open creates them
// when missing, so a cache made before them opens (and has none), and
// fsck treats a missing one as empty. An inode's rdev and xattrs records
// are written in the same transaction as its inode record and deleted
// with it.
//
// The virtual bucket arrives with format 3 and is created, and the
// version raised to 3, by the commit that writes the first virtual
// record: a cache that never held a virtual file stays at version 2, so
// an older hgfs still opens it, and refuses (ErrNewerFormat) one that
// did.
//
// The vdirs bucket arrives with format 4 in the same way: created, and
// the version raised to 4, by the commit that writes the first deferred
// listing. An hgfs that knows format 3 but not 4 would list such a
// directory without its deferred files, so it must refuse the cache.
//
// Every decoder checks lengths before it allocates or indexes, so a damaged
// index gives ErrCorrupt with the key, never a panic.

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// formatVersion is the index layout this code writes. Open refuses a cache
// whose version is higher (ErrNewerFormat) and upgrades a lower one
// (migrate.go).
//
// Versions:
//
//	1  extent records of 28 bytes, no checksums
//	2  extent records of 40 bytes carrying a CRC32C of their run
//	3  as 2, plus the virtual bucket (written only once a virtual file
//	   is: a new cache starts at 2)
//	4  as 3, plus the vdirs bucket (written only once a deferred
//	   listing is)
const formatVersion = 2

// virtualFormatVersion is the version of a cache holding virtual
// records, vdirFormatVersion that of one holding deferred listings; the
// latter is also the highest version this code reads.
const (
	virtualFormatVersion = 3
	vdirFormatVersion    = 4
	maxFormatVersion     = vdirFormatVersion
)

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

	// Buckets of format 2, created by Open when missing (see above).
	bucketRdev   = []byte("rdev")
	bucketXattrs = []byte("xattrs")
	laterBuckets = [][]byte{bucketRdev, bucketXattrs}

	// The bucket of format 3, created with the first virtual record.
	bucketVirtual = []byte("virtual")
	// The bucket of format 4, created with the first deferred listing.
	bucketVdirs = []byte("vdirs")

	metaVersion = []byte("version")
	metaCreated = []byte("created")
	metaNextIno = []byte("nextino")
	metaNextSeq = []byte("nextseq")
	metaIngest  = []byte("ingest")
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
//	57  1   flags (flagInline, flagVirtual)
const inodeRecordLen = 58

const (
	inodeRecordVersion = 1
	// flagInline: the contents are the value under inline/ino, not extents.
	flagInline = 1 << 0
	// flagVirtual: the contents are a file revision named by the value
	// under virtual/ino (virtual.go); no inline contents, no extents.
	flagVirtual = 1 << 1
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
	if !knownType(d.Mode & syscall.S_IFMT) {
		return d, fmt.Errorf("%w: inode mode %#o has an unsupported file type", ErrCorrupt, d.Mode)
	}
	if d.Mode&^uint32(syscall.S_IFMT|07777) != 0 {
		return d, fmt.Errorf("%w: inode mode %#o has unknown bits", ErrCorrupt, d.Mode)
	}
	if d.Flags&^(flagInline|flagVirtual) != 0 {
		return d, fmt.Errorf("%w: inode flags %#x has unknown bits", ErrCorrupt, d.Flags)
	}
	if d.Flags&flagVirtual != 0 && (d.Flags&flagInline != 0 || d.Mode&syscall.S_IFMT != syscall.S_IFREG) {
		return d, fmt.Errorf("%w: inode flags %#x on mode %#o: only a regular file without inline contents is virtual", ErrCorrupt, d.Flags, d.Mode)
	}
	if d.Size > maxFileSize {
		return d, fmt.Errorf("%w: inode size %d exceeds %d", ErrCorrupt, d.Size, uint64(maxFileSize))
	}
	return d, nil
}

// knownType reports whether typ (S_IFMT bits) is a file type the cache
// holds: regular files, directories and symlinks, and (with no contents)
// FIFOs, sockets and character and block devices.
func knownType(typ uint32) bool {
	switch typ {
	case syscall.S_IFREG, syscall.S_IFDIR, syscall.S_IFLNK,
		syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFCHR, syscall.S_IFBLK:
		return true
	}
	return false
}

// isDevice reports whether typ is a character or block device, the types
// with an rdev record.
func isDevice(typ uint32) bool { return typ == syscall.S_IFCHR || typ == syscall.S_IFBLK }

// xattrKey is an xattrs key: ino(8) then the attribute's name.
func xattrKey(ino Ino, name string) []byte { return direntKey(ino, name) }

// maxFileSize bounds file sizes and offsets so that offset arithmetic in
// int64 never overflows.
const maxFileSize = 1 << 50

// extent maps file bytes [Off, Off+Len) to data file File at FileOff.
// Bytes of a file not covered by any extent read as zeros (holes).
//
// Checksums: the bytes an extent names lie inside a run, bytes that were
// written together and whose CRC32C (Castagnoli) is Sum: data file bytes
// [FileOff-Head, FileOff-Head+Run). A run is at most maxRunLen bytes and is
// never rewritten (data files are append-only). A new extent is a whole
// run (Head 0, Run == Len); when an overwrite or a truncate cuts an
// extent, the pieces that survive keep the run's Head, Run and Sum, so
// cutting costs no I/O, and a read of a piece verifies the whole run it
// lies in (checksum.go). Contiguous appends merge into one run while it
// stays within maxRunLen (crc32Combine).
type extent struct {
	Off     int64
	File    uint32
	FileOff int64
	Len     int64
	Head    int64  // FileOff minus the start of the run
	Run     int64  // length of the run
	Sum     uint32 // CRC32C of the run
}

func (e extent) end() int64 { return e.Off + e.Len }

// runStart is the data file offset of the extent's run.
func (e extent) runStart() int64 { return e.FileOff - e.Head }

// whole reports whether the extent is its whole run.
func (e extent) whole() bool { return e.Head == 0 && e.Run == e.Len }

// extentRecordLen is the size of an encoded extent (format version 2):
//
//	off len
//	0   8   file offset (Off)
//	8   4   data file id
//	12  8   data file offset (FileOff)
//	20  8   length
//	28  4   Head: FileOff minus the start of the checksummed run
//	32  4   Run: the run's length (at most maxRunLen)
//	36  4   Sum: CRC32C (Castagnoli) of the run
//
// Version 1 records were the first 28 bytes (extentRecordLenV1).
const (
	extentRecordLen   = 40
	extentRecordLenV1 = 28
)

func encodeExtents(exts []extent) []byte {
	b := make([]byte, 4+extentRecordLen*len(exts))
	binary.BigEndian.PutUint32(b, uint32(len(exts)))
	p := b[4:]
	for _, e := range exts {
		binary.BigEndian.PutUint64(p[0:], uint64(e.Off))
		binary.BigEndian.PutUint32(p[8:], e.File)
		binary.BigEndian.PutUint64(p[12:], uint64(e.FileOff))
		binary.BigEndian.PutUint64(p[20:], uint64(e.Len))
		binary.BigEndian.PutUint32(p[28:], uint32(e.Head))
		binary.BigEndian.PutUint32(p[32:], uint32(e.Run))
		binary.BigEndian.PutUint32(p[36:], e.Sum)
		p = p[extentRecordLen:]
	}
	return b
}

// decodeExtents decodes and validates an extent list: sorted by file
// offset, non-overlapping, non-empty, within maxFileSize, data file ids > 0,
// each inside a run of at most maxRunLen bytes.
func decodeExtents(b []byte) ([]extent, error) {
	return decodeExtentsVersion(b, formatVersion)
}

// decodeExtentsVersion decodes an extent list of format version ver (1 or
// 2). Version 1 extents come back as whole runs with Sum 0 and may exceed
// maxRunLen: only the migration and Fsck of a version 1 cache use them.
func decodeExtentsVersion(b []byte, ver uint32) ([]extent, error) {
	recLen := uint64(extentRecordLen)
	if ver == 1 {
		recLen = extentRecordLenV1
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: extent list is %d bytes, want at least 4", ErrCorrupt, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(len(b)-4) != uint64(n)*recLen {
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
		if ver == 1 {
			e.Run = e.Len
		} else {
			e.Head = int64(binary.BigEndian.Uint32(p[28:]))
			e.Run = int64(binary.BigEndian.Uint32(p[32:]))
			e.Sum = binary.BigEndian.Uint32(p[36:])
		}
		p = p[recLen:]
		switch {
		case e.Len <= 0 || e.Len > maxFileSize:
			return nil, fmt.Errorf("%w: extent %d has length %d", ErrCorrupt, i, e.Len)
		case e.Off < prevEnd || e.Off > maxFileSize-e.Len:
			return nil, fmt.Errorf("%w: extent %d at offset %d overlaps or is out of order", ErrCorrupt, i, e.Off)
		case e.File == 0:
			return nil, fmt.Errorf("%w: extent %d names data file 0", ErrCorrupt, i)
		case e.FileOff < 0 || e.FileOff > maxFileSize-e.Len:
			return nil, fmt.Errorf("%w: extent %d data offset %d out of range", ErrCorrupt, i, e.FileOff)
		case ver != 1 && (e.Run > maxRunLen || e.Head+e.Len > e.Run || e.Head > e.FileOff):
			return nil, fmt.Errorf("%w: extent %d: %d bytes at %d of a run of %d at data offset %d", ErrCorrupt, i, e.Len, e.Head, e.Run, e.FileOff-e.Head)
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
	if !knownType(d.Type) {
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
