package fsnode

// refTable holds the kernel references of inodes evicted from the table
// while the kernel still held them (FS.refs, afterCommit). The kernel
// keeps a dentry for every file it has looked up or created until memory
// pressure makes it send FORGET, so on a machine with memory to spare
// this holds an entry for nearly every file a mount has shown: 250,000
// after a tar -x of the 250,000-file bench store. A map[Ino]uint64 held
// them in 7.1 MB of the daemon's 32 MB live heap there (heap profile,
// 2026-12-07), twice that in RSS at the collector's default pace.
//
// Counts are small (a create or LOOKUP gives one, each READDIRPLUS entry
// one more), and inode numbers are allocated in sequence. So counts up
// to 255 are kept per 65,536 inode numbers as roaring bitmaps keep sets:
// a sorted array of (low 16 bits, count) while that is smaller, then a
// byte per inode number; 4 bytes a reference when sparse, 1 byte per
// inode number when dense. Larger counts stay in a map. The 250,000
// references take 256 KiB.
type refTable struct {
	small map[uint64]*refChunk // by ino >> 16: counts 1-255
	large map[Ino]uint64       // counts above 255
}

// refChunk is one chunk of refTable.small: arr (sorted by lo) while it
// holds at most refArrayMax inodes, then dense. It never goes back to
// an array; an empty chunk is dropped.
type refChunk struct {
	arr   []refEntry
	dense *[1 << 16]uint8
	n     int
}

type refEntry struct {
	lo uint16
	n  uint8
}

// refArrayMax is where an array chunk becomes dense: 16,384 entries of
// 4 bytes are the dense chunk's 64 KiB.
const refArrayMax = 1 << 14

func newRefTable() refTable {
	return refTable{small: map[uint64]*refChunk{}, large: map[Ino]uint64{}}
}

// Len is how many inodes have references in t.
func (t *refTable) Len() int {
	n := len(t.large)
	for _, c := range t.small {
		n += c.n
	}
	return n
}

// Get returns ino's count (0 if t has none).
func (t *refTable) Get(ino Ino) uint64 {
	if n, ok := t.large[ino]; ok {
		return n
	}
	if c := t.small[uint64(ino)>>16]; c != nil {
		return uint64(c.get(uint16(ino)))
	}
	return 0
}

// Take returns ino's count and removes it (0 if t has none).
func (t *refTable) Take(ino Ino) uint64 {
	n := t.Get(ino)
	t.set(ino, 0)
	return n
}

// Put sets ino's count to n, which t does not hold yet.
func (t *refTable) Put(ino Ino, n uint64) { t.set(ino, n) }

// Drop takes n references off ino's count, removing it at zero; an ino
// t does not hold is left alone.
func (t *refTable) Drop(ino Ino, n uint64) {
	if have := t.Get(ino); have > 0 {
		t.set(ino, have-min(n, have))
	}
}

// Reset empties t.
func (t *refTable) Reset() { *t = newRefTable() }

// set sets ino's count to n, removing it at zero.
func (t *refTable) set(ino Ino, n uint64) {
	hi, lo := uint64(ino)>>16, uint16(ino)
	if n > 255 {
		t.set(ino, 0)
		t.large[ino] = n
		return
	}
	delete(t.large, ino)
	c := t.small[hi]
	if c == nil {
		if n == 0 {
			return
		}
		c = &refChunk{}
		t.small[hi] = c
	}
	c.set(lo, uint8(n))
	if c.n == 0 {
		delete(t.small, hi)
	}
}

// search returns where lo is or would go in c.arr.
func (c *refChunk) search(lo uint16) (int, bool) {
	i, j := 0, len(c.arr)
	for i < j {
		h := int(uint(i+j) >> 1)
		if c.arr[h].lo < lo {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, i < len(c.arr) && c.arr[i].lo == lo
}

func (c *refChunk) get(lo uint16) uint8 {
	if c.dense != nil {
		return c.dense[lo]
	}
	if i, ok := c.search(lo); ok {
		return c.arr[i].n
	}
	return 0
}

// set sets lo's count to n, removing it at zero.
func (c *refChunk) set(lo uint16, n uint8) {
	if c.dense != nil {
		switch had := c.dense[lo]; {
		case had == 0 && n > 0:
			c.n++
		case had > 0 && n == 0:
			c.n--
		}
		c.dense[lo] = n
		return
	}
	i, ok := c.search(lo)
	switch {
	case ok && n > 0:
		c.arr[i].n = n
	case ok:
		c.arr = append(c.arr[:i], c.arr[i+1:]...)
		c.n--
	case n == 0:
	case len(c.arr) == refArrayMax:
		c.dense = new([1 << 16]uint8)
		for _, e := range c.arr {
			c.dense[e.lo] = e.n
		}
		c.arr = nil
		c.set(lo, n)
	default:
		c.arr = append(c.arr, refEntry{})
		copy(c.arr[i+1:], c.arr[i:])
		c.arr[i] = refEntry{lo, n}
		c.n++
	}
}
