package fsnode

// Checksums of file contents.
//
// Every extent lies in a run: bytes written to a data file together,
// whose CRC32C (Castagnoli; hash/crc32 uses the CPU's instruction) the
// extent record carries (format.go). A run is at most maxRunLen (128 KiB)
// bytes: Write, the sink and Compact cut what they write into runs of that
// size (the sink at file offsets that are multiples of it), and
// contiguous appends grow a run up to it (crc32Combine).
//
// Writes compute the CRC from the bytes in hand, before the extent enters
// memory, so a committed extent always has the CRC of what was written.
// An overwrite or truncate that cuts an extent keeps the run's CRC for the
// surviving pieces (no I/O when cutting); the price is on the read side:
// a read verifies the whole run its bytes lie in, so a 4 KiB read of a run
// not yet verified reads up to 128 KiB (as the kernel's readahead does
// anyway through a mount).
//
// Verified runs are remembered per in-memory inode (inode.verified), and
// the bytes of the last runs verified for a partial read stay in a small
// cache (FS.runs), so a file read in pieces is read from its data file
// once, not once per piece. The memory is dropped with the inode, and
// bounded. The kernel caches pages the same way, so a run damaged after
// it was verified goes unnoticed until the inode leaves memory, or until
// fsck, which reads and verifies every run.
//
// Why 128 KiB: reads of a file (FUSE's are at most 128 KiB, aligned when
// sequential) then cover whole runs and are verified in place, in the
// CPU's cache. With 1 MiB runs, 128 KiB reads of a 64 MiB file in the
// page cache (BenchmarkRead64MiB) ran at 0.9-1.4 GB/s against 2.0-5.0
// without checksums; with 128 KiB runs at 1.4-3.4 GB/s (the CRC32C itself
// runs at about 7.5 GB/s here). Through a mount (dd bs=128k of a 64 MiB
// file just after mounting, data files in the page cache, ten runs on the
// same loaded machine) the median went from 0.8 to 0.6 GB/s (ranges
// 0.41-1.1 and 0.42-1.2). The cost is in the index: an extent record
// is 40 bytes per 128 KiB, 320 KiB for a 1 GiB file, rewritten whenever
// the file changes.
//
// A mismatch is EIO (wrapping ErrDamaged) for the read, and one log line
// per run naming the inode, the file offset and the data file and offset.
// Compact verifies the runs it copies: a good piece is copied as a new
// run with its own CRC; a piece of a damaged run is copied with the whole
// run and its old CRC, so that compaction never turns damage into
// checksummed data.

import (
	"fmt"
	"hash/crc32"
	"log"
	"sync"
)

// maxRunLen bounds a run (and so an extent): the most a read verifies
// beyond what it asked for. Raising it needs no format change; lowering
// it would make records with longer runs fail to decode.
const maxRunLen = 128 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// castagnoliReversed is the Castagnoli polynomial, bit-reversed as
// hash/crc32 uses it.
const castagnoliReversed = 0x82f63b78

// multModP multiplies a and b modulo the CRC polynomial (bit-reversed
// representation; zlib's multmodp).
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// x2nTable[k] is x^(2^k) modulo the polynomial.
var x2nTable = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < 32; k++ {
		p = multModP(p, p)
		t[k] = p
	}
	return t
}()

// crc32Combine returns the CRC of A||B from crcA, crcB and len(B), as
// zlib's crc32_combine: crcA * x^(8*lenB) + crcB.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	p := uint32(1) << 31 // x^0
	k := 3               // x^(8n) = x^(n * 2^3)
	for n := uint64(lenB); n != 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(x2nTable[k&31], p)
		}
		k++
	}
	return multModP(p, crcA) ^ crcB
}

// newRuns returns the extents for data just written at data file id,
// offset foff, as file bytes from off: whole runs of at most maxRunLen.
func newRuns(off int64, id uint32, foff int64, data []byte) []extent {
	exts := make([]extent, 0, (len(data)+maxRunLen-1)/maxRunLen)
	for i := 0; i < len(data); i += maxRunLen {
		p := data[i:min(len(data), i+maxRunLen)]
		n := int64(len(p))
		exts = append(exts, extent{Off: off + int64(i), File: id, FileOff: foff + int64(i), Len: n, Run: n, Sum: checksum(p)})
	}
	return exts
}

// runKey names a run, and the CRC it was verified against.
type runKey struct {
	file  uint32
	start int64
	len   int64
	sum   uint32
}

func (e extent) key() runKey { return runKey{e.File, e.runStart(), e.Run, e.Sum} }

// maxVerified bounds an inode's set of verified runs (2 GiB of file);
// past it the set starts again.
const maxVerified = 1 << 14

// verifiedRuns is an inode's set of runs read and found intact. Readers
// hold the inode's read lock only, so it has its own lock.
type verifiedRuns struct {
	mu   sync.Mutex
	runs map[runKey]struct{}
}

func (v *verifiedRuns) has(k runKey) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.runs[k]
	return ok
}

func (v *verifiedRuns) add(k runKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.runs == nil || len(v.runs) >= maxVerified {
		v.runs = make(map[runKey]struct{})
	}
	v.runs[k] = struct{}{}
}

var runBufs = sync.Pool{New: func() any { b := make([]byte, maxRunLen); return &b }}

// reported remembers damaged runs already logged, so that a file read
// again and again logs once.
var reported sync.Map // runKey -> struct{}

// damaged makes the error of a run whose CRC does not match, and logs it
// once.
func damaged(ino Ino, e extent, got uint32) error {
	err := fmt.Errorf("%w: inode %d, extent at %d: %s at %d (%d bytes) has CRC32C %08x, want %08x",
		ErrDamaged, ino, e.Off, dataFileName(e.File), e.runStart(), e.Run, got, e.Sum)
	if _, seen := reported.LoadOrStore(e.key(), struct{}{}); !seen {
		log.Printf("hgfs: %v", err)
	}
	return err
}

// readExtent reads p from extent e at data file offset foff (inside e),
// verifying e's run unless in has verified it already. A run verified for
// a read that wanted only part of it stays in runCache, where the next
// reads of it (a file read in pieces) find it in f.runs.
func (f *FS) readExtent(in *inode, e extent, p []byte, foff int64) error {
	k := e.key()
	start := e.runStart()
	if in.verified.has(k) {
		if f.runs.read(k, p, foff-start) {
			return nil
		}
		return f.data.readAt(e.File, p, foff)
	}
	if foff == start && int64(len(p)) == e.Run {
		if err := f.data.readAt(e.File, p, foff); err != nil {
			return err
		}
		if sum := checksum(p); sum != e.Sum {
			return damaged(in.ino, e, sum)
		}
		in.verified.add(k)
		return nil
	}
	err := f.runs.fill(k, func(buf []byte) error {
		if _, err := f.readRun(in.ino, e, buf); err != nil {
			return err
		}
		copy(p, buf[foff-start:])
		return nil
	})
	if err != nil {
		return err
	}
	in.verified.add(k)
	return nil
}

// runCache holds the bytes of recently verified runs of one FS, for the
// reads that follow of the rest of each: direct-mapped, runCacheSlots runs
// of up to maxRunLen bytes (allocated when first used). Runs never change (data
// files are append-only), so an entry is valid as long as it exists.
type runCache struct {
	slots [runCacheSlots]runSlot
}

const runCacheSlots = 16

type runSlot struct {
	mu  sync.RWMutex
	key runKey
	buf []byte
}

func (c *runCache) slot(k runKey) *runSlot {
	h := uint64(k.file)*0x9e3779b97f4a7c15 ^ uint64(k.start)*0xbf58476d1ce4e5b9 ^ uint64(k.sum)
	return &c.slots[(h>>32)%runCacheSlots]
}

// read copies run k's bytes from off into p if the cache holds them.
func (c *runCache) read(k runKey, p []byte, off int64) bool {
	s := c.slot(k)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.key != k || s.buf == nil {
		return false
	}
	copy(p, s.buf[off:])
	return true
}

// fill reads run k into its slot with read (which verifies it and copies
// what its caller wants); the slot keeps it if read succeeds.
func (c *runCache) fill(k runKey, read func(buf []byte) error) error {
	s := c.slot(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		s.buf = make([]byte, maxRunLen)
	}
	s.key = runKey{}
	if err := read(s.buf[:k.len]); err != nil {
		return err
	}
	s.buf = s.buf[:k.len]
	s.key = k
	return nil
}

// readRun reads e's whole run into buf (e.Run bytes) and verifies it.
func (f *FS) readRun(ino Ino, e extent, buf []byte) ([]byte, error) {
	if err := f.data.readAt(e.File, buf, e.runStart()); err != nil {
		return nil, err
	}
	if sum := checksum(buf); sum != e.Sum {
		return buf, damaged(ino, e, sum)
	}
	return buf, nil
}

// copyExtent copies extent e to a fresh place in the current data file
// (Compact) and returns the extents that replace it: e's bytes as a new
// run when its run is intact, or e's whole run with its old CRC when it
// is damaged (the copy stays damaged, and reads of it still fail).
func (f *FS) copyExtent(ino Ino, e extent) ([]extent, error) {
	bp := runBufs.Get().(*[]byte)
	defer runBufs.Put(bp)
	run, err := f.readRun(ino, e, (*bp)[:e.Run])
	if err != nil && run == nil {
		return nil, err
	}
	if err != nil {
		id, off, werr := f.data.appendData(run)
		if werr != nil {
			return nil, werr
		}
		c := e
		c.File, c.FileOff = id, off+e.Head
		return []extent{c}, nil
	}
	piece := run[e.Head : e.Head+e.Len]
	id, off, err := f.data.appendData(piece)
	if err != nil {
		return nil, err
	}
	return newRuns(e.Off, id, off, piece), nil
}
