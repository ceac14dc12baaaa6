package fsnode

// A structural check of a bbolt file, read with ordinary bounds-checked
// reads instead of through bbolt's memory map: it cannot panic or fault
// on a damaged file, which bbolt's own Tx.Check can (in a goroutine of
// its own, where no caller can recover; see guard.go).
//
// It checks what bbolt's check does: a valid meta page (the one bbolt
// would use), a freelist page whose ids lie in the file and are not
// repeated, and every page reachable from the root bucket: within the
// file and the high-water mark, of a branch or leaf type, referenced once,
// not free, elements and keys within the page, keys in order within a
// page and within their parent's range; and that every page below the
// high-water mark is reachable or free. The layout is bbolt's
// (go.etcd.io/bbolt/internal/common), in the machine's byte order, which
// is little-endian on every platform hgfs builds for.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

const (
	bpHeader      = 16 // id u64, flags u16, count u16, overflow u32
	bpElem        = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	bpBranch      = 0x01
	bpLeaf        = 0x02
	bpMeta        = 0x04
	bpFreelist    = 0x10
	bpBucketLeaf  = 0x01
	bpMagic       = 0xED0CDAED
	bpVersion     = 2
	bpMetaSumLen  = 56 // bytes of the meta covered by its checksum
	bpNoFreelist  = ^uint64(0)
	bpMaxProblems = 50
	bpMaxDepth    = 64
)

type boltMeta struct {
	pageSize            uint32
	root, freelist      uint64
	hwm, txid           uint64
	valid               bool
	checksumOK, magicOK bool
}

func parseBoltMeta(b []byte) boltMeta {
	var m boltMeta
	if len(b) < bpHeader+bpMetaSumLen+8 {
		return m
	}
	le := binary.LittleEndian
	p := b[bpHeader:]
	m.magicOK = le.Uint32(p) == bpMagic && le.Uint32(p[4:]) == bpVersion
	m.pageSize = le.Uint32(p[8:])
	m.root = le.Uint64(p[16:])
	m.freelist = le.Uint64(p[32:])
	m.hwm = le.Uint64(p[40:])
	m.txid = le.Uint64(p[48:])
	h := fnv.New64a()
	h.Write(p[:bpMetaSumLen])
	m.checksumOK = h.Sum64() == le.Uint64(p[bpMetaSumLen:])
	m.valid = m.magicOK && m.checksumOK
	return m
}

type boltChecker struct {
	f        io.ReaderAt
	size     int64
	psize    int64
	hwm      uint64
	free     map[uint64]bool
	reached  map[uint64]bool
	problems []string
	// collect, if set, receives every key and value of a leaf page that
	// is not a bucket, with the name of the top-level bucket holding it
	// (salvage for fsck's rebuild). k and v are not retained by the
	// checker.
	collect func(bucket, k, v []byte)
}

func (c *boltChecker) problem(format string, args ...any) {
	if len(c.problems) < bpMaxProblems {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	} else if len(c.problems) == bpMaxProblems {
		c.problems = append(c.problems, "more problems not listed")
	}
}

// page reads page id with its overflow pages, or says why it cannot.
func (c *boltChecker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d is outside the file's pages [2, %d)", id, c.hwm)
	}
	if int64(id+1)*c.psize > c.size {
		return nil, fmt.Errorf("page %d lies past the end of the file (%d bytes)", id, c.size)
	}
	hdr := make([]byte, bpHeader)
	if _, err := c.f.ReadAt(hdr, int64(id)*c.psize); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	over := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+over >= c.hwm || int64(id+over+1)*c.psize > c.size {
		return nil, fmt.Errorf("page %d: %d overflow pages reach past the end of the file", id, over)
	}
	b := make([]byte, int64(over+1)*c.psize)
	if _, err := c.f.ReadAt(b, int64(id)*c.psize); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	return b, nil
}

// checkBoltFile checks the bbolt file at path. Without full, only the meta
// and freelist pages (what bolt.Open reads). It returns the problems
// found; the error is for a file it could not read at all.
func checkBoltFile(path string, full bool) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return checkBolt(f, st.Size(), full, nil), nil
}

func checkBolt(f io.ReaderAt, size int64, full bool, collect func(bucket, k, v []byte)) []string {
	c := &boltChecker{f: f, size: size, collect: collect}
	// The page size is in meta 0; bbolt falls back to the OS page size
	// when meta 0 is damaged.
	var metas [2]boltMeta
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	metas[0] = parseBoltMeta(buf[:n])
	c.psize = int64(os.Getpagesize())
	if metas[0].valid && metas[0].pageSize >= 512 && metas[0].pageSize <= 1<<16 {
		c.psize = int64(metas[0].pageSize)
	}
	b1 := make([]byte, bpHeader+bpMetaSumLen+8)
	n, _ = f.ReadAt(b1, c.psize)
	metas[1] = parseBoltMeta(b1[:n])
	// bbolt uses the meta with the higher transaction id if it is valid,
	// else the other.
	a, b := metas[0], metas[1]
	if b.txid > a.txid {
		a, b = b, a
	}
	m := a
	if !a.valid {
		m = b
	}
	if !m.valid {
		c.problem("both meta pages are damaged (bad magic, version or checksum)")
		return c.problems
	}
	if size < 2*c.psize {
		c.problem("the file (%d bytes) is shorter than its two meta pages", size)
		return c.problems
	}
	c.hwm = m.hwm
	if int64(c.hwm)*c.psize > size {
		c.problem("the meta page counts %d pages, the file holds %d", c.hwm, size/c.psize)
		c.hwm = uint64(size / c.psize)
	}
	c.free = map[uint64]bool{}
	c.reached = map[uint64]bool{0: true, 1: true}
	if m.freelist != bpNoFreelist {
		c.checkFreelist(m.freelist)
	}
	if !full {
		return c.problems
	}
	c.walk(m.root, nil, nil, 0, "root bucket", nil)
	if len(c.problems) > 0 {
		return c.problems // leaks would only repeat what was found
	}
	for id := uint64(2); id < c.hwm; id++ {
		if !c.reached[id] && !c.free[id] {
			c.problem("page %d is neither reachable nor free", id)
		}
	}
	return c.problems
}

func (c *boltChecker) checkFreelist(id uint64) {
	p, err := c.page(id)
	if err != nil {
		c.problem("freelist: %v", err)
		return
	}
	if binary.LittleEndian.Uint16(p[8:]) != bpFreelist {
		c.problem("freelist page %d has type %#x", id, binary.LittleEndian.Uint16(p[8:]))
		return
	}
	for i := uint64(0); i <= uint64(binary.LittleEndian.Uint32(p[12:])); i++ {
		c.reached[id+i] = true
	}
	idx, count := uint64(0), uint64(binary.LittleEndian.Uint16(p[10:]))
	if count == 0xFFFF {
		idx = 1
		count = binary.LittleEndian.Uint64(p[bpHeader:])
	}
	if count > uint64(len(p)-bpHeader)/8-idx {
		c.problem("freelist page %d claims %d free pages, it has room for %d", id, count, uint64(len(p)-bpHeader)/8-idx)
		return
	}
	for i := uint64(0); i < count; i++ {
		fid := binary.LittleEndian.Uint64(p[bpHeader+8*(idx+i):])
		switch {
		case fid < 2 || fid >= c.hwm:
			c.problem("freelist lists page %d, outside [2, %d)", fid, c.hwm)
		case c.free[fid]:
			c.problem("freelist lists page %d twice", fid)
		case c.reached[fid]:
			c.problem("freelist lists its own page %d", fid)
		}
		c.free[fid] = true
	}
}

// walk checks the subtree at page id, whose keys must lie in [lo, hi)
// (nil: unbounded), and returns nothing: problems are collected.
func (c *boltChecker) walk(id uint64, lo, hi []byte, depth int, where string, bucket []byte) {
	if depth > bpMaxDepth {
		c.problem("%s: page %d: tree deeper than %d", where, id, bpMaxDepth)
		return
	}
	if c.reached[id] {
		c.problem("%s: page %d is referenced twice", where, id)
		return
	}
	if c.free[id] {
		c.problem("%s: page %d is reachable and free", where, id)
	}
	p, err := c.page(id)
	if err != nil {
		c.problem("%s: %v", where, err)
		return
	}
	for i := uint64(0); i <= uint64(binary.LittleEndian.Uint32(p[12:])); i++ {
		c.reached[id+i] = true
	}
	if got := binary.LittleEndian.Uint64(p); got != id {
		c.problem("%s: page %d says it is page %d", where, id, got)
	}
	c.checkPage(p, id, lo, hi, depth, where, bucket)
}

// checkPage checks one branch or leaf page held in p (a page of the file,
// or an inline bucket's page inside a value).
func (c *boltChecker) checkPage(p []byte, id uint64, lo, hi []byte, depth int, where string, bucket []byte) {
	le := binary.LittleEndian
	flags := le.Uint16(p[8:])
	count := int(le.Uint16(p[10:]))
	if flags != bpBranch && flags != bpLeaf {
		c.problem("%s: page %d has type %#x, not branch or leaf", where, id, flags)
		return
	}
	if bpHeader+count*bpElem > len(p) {
		c.problem("%s: page %d: %d elements overflow the page", where, id, count)
		return
	}
	// An element that does not fit the page is skipped (nil key); the
	// others are still checked, and salvaged.
	keys := make([][]byte, count)
	var prev []byte
	for i := range count {
		e := bpHeader + i*bpElem
		var pos, klen, vlen uint64
		if flags == bpBranch {
			pos, klen = uint64(le.Uint32(p[e:])), uint64(le.Uint32(p[e+4:]))
		} else {
			pos, klen, vlen = uint64(le.Uint32(p[e+4:])), uint64(le.Uint32(p[e+8:])), uint64(le.Uint32(p[e+12:]))
		}
		if uint64(e)+pos+klen+vlen > uint64(len(p)) {
			c.problem("%s: page %d: element %d lies past the page", where, id, i)
			continue
		}
		k := p[uint64(e)+pos : uint64(e)+pos+klen]
		keys[i] = k
		switch {
		case prev != nil && bytes.Compare(prev, k) >= 0:
			c.problem("%s: page %d: key %d (%x) is not above the one before", where, id, i, k)
		case lo != nil && bytes.Compare(k, lo) < 0:
			c.problem("%s: page %d: key %d (%x) is below its parent's range", where, id, i, k)
		case hi != nil && bytes.Compare(k, hi) >= 0:
			c.problem("%s: page %d: key %d (%x) is above its parent's range", where, id, i, k)
		}
		prev = k
	}
	for i := range count {
		e := bpHeader + i*bpElem
		if keys[i] == nil {
			continue
		}
		if flags == bpBranch {
			next := hi
			for j := i + 1; j < count; j++ {
				if keys[j] != nil {
					next = keys[j]
					break
				}
			}
			c.walk(le.Uint64(p[e+8:]), keys[i], next, depth+1, where, bucket)
			continue
		}
		if le.Uint32(p[e:])&bpBucketLeaf == 0 {
			if c.collect != nil && bucket != nil {
				pos, klen, vlen := uint64(le.Uint32(p[e+4:])), uint64(le.Uint32(p[e+8:])), uint64(le.Uint32(p[e+12:]))
				c.collect(bucket, keys[i], p[uint64(e)+pos+klen:uint64(e)+pos+klen+vlen])
			}
			continue
		}
		pos, klen, vlen := uint64(le.Uint32(p[e+4:])), uint64(le.Uint32(p[e+8:])), uint64(le.Uint32(p[e+12:]))
		v := p[uint64(e)+pos+klen : uint64(e)+pos+klen+vlen]
		name := fmt.Sprintf("bucket %q", keys[i])
		sub := keys[i]
		if bucket != nil {
			sub = bucket // a nested bucket's records count as its parent's
		}
		if len(v) < 16 {
			c.problem("%s: %s: bucket record is %d bytes", where, name, len(v))
			continue
		}
		if root := le.Uint64(v); root != 0 {
			c.walk(root, nil, nil, depth+1, name, sub)
			continue
		}
		inl := v[16:]
		if len(inl) < bpHeader || le.Uint16(inl[8:]) != bpLeaf {
			c.problem("%s: inline bucket page is damaged", name)
			continue
		}
		c.checkPage(inl, id, nil, nil, depth+1, name+" (inline)", sub)
	}
}
