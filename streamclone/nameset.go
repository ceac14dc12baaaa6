package streamclone

import (
	"encoding/binary"
	"hash/maphash"
)

// nameSet holds the store names a clone has written: to refuse a name a
// stream sends twice, and to write the fncache at the end. It is the only
// part of an apply that grows with the number of files, and at 250,000
// files it was the live heap of a clone into a directory, so it keeps
// the names small:
//
//   - The names are front-coded in the order added: each entry is the
//     length it shares with the name before it, its own length past that,
//     and those bytes. Every restartEvery'th name is written whole, so
//     that the i'th is decoded from the whole one before it at most
//     restartEvery-1 entries back. A stream names a store's files in
//     nearly sorted order (hg walks its fncache sorted), so a name shares
//     most of its directory with the one before.
//   - The set is an open hash table of 64-bit slots: the high half of the
//     name's hash and the name's index. The slot's place comes from the
//     hash's half it keeps, so growing the table decodes no name, and a
//     name is decoded and compared only where the halves match (a
//     duplicate, or about one name in 2^13 at 250,000 files).
//
// Before, the names sat whole in chunks with a 64-bit reference each and
// a table of 32-bit slots. The 250,000-file bench store's 250,002 names
// (7.0 MB of them) took 11.6 MB of heap that way and take 6.9 MB now (4
// MiB of it the table); its clone into a directory peaked at 44 MB RSS
// against 34 (at GOGC 100, alternated). A map[string]bool and a
// []string before that held 44 MB of heap.
//
// Store names are deduplicated as the stream names them (unencoded):
// the destination's encodings are one to one on the names
// store.ValidateStreamName admits, so two names that encode alike are
// the same name. Indexes are 32-bit: a stream of 2^32 files would need
// tens of gigabytes here first.
type nameSet struct {
	seed     maphash.Seed
	chunks   [][]byte // the entries back to back; an entry never spans two chunks
	restarts []uint64 // per restartEvery names: the whole name's entry, chunk<<32 | offset
	last     []byte   // the name added last, which the next is coded against
	n        uint32   // names added
	table    []uint64 // linear probing: 0 empty, else hash>>32<<32 | index+1
	scratch  []byte   // name's decoding
}

const (
	nameChunk    = 256 << 10 // bytes per chunk at most, or one entry's if larger (a name is at most maxNameLen)
	restartEvery = 16
)

func newNameSet() *nameSet { return &nameSet{seed: maphash.MakeSeed()} }

// add records name; it reports false if name was already there.
func (s *nameSet) add(name string) bool {
	if 2*(uint64(s.n)+1) > uint64(len(s.table)) {
		s.grow()
	}
	tag := maphash.String(s.seed, name) >> 32
	mask := uint64(len(s.table) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		slot := s.table[i]
		if slot == 0 {
			s.table[i] = tag<<32 | uint64(s.n) + 1
			s.append(name)
			return true
		}
		if slot>>32 == tag && string(s.name(uint32(slot)-1)) == name {
			return false
		}
	}
}

// grow doubles the table, placing each slot by the hash half it holds.
func (s *nameSet) grow() {
	old := s.table
	s.table = make([]uint64, max(1024, 2*len(old)))
	mask := uint64(len(s.table) - 1)
	for _, slot := range old {
		if slot == 0 {
			continue
		}
		i := slot >> 32 & mask
		for s.table[i] != 0 {
			i = (i + 1) & mask
		}
		s.table[i] = slot
	}
}

// append codes name after the last one.
func (s *nameSet) append(name string) {
	shared := 0
	if s.n%restartEvery != 0 {
		for shared < len(name) && shared < len(s.last) && name[shared] == s.last[shared] {
			shared++
		}
	}
	var head [2 * binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(shared))
	h += binary.PutUvarint(head[h:], uint64(len(name)-shared))
	size := h + len(name) - shared
	c := len(s.chunks) - 1
	if c < 0 || len(s.chunks[c])+size > cap(s.chunks[c]) {
		next := 4 << 10 // doubling to nameChunk: a small store's names take a few KB
		if c >= 0 {
			next = min(nameChunk, 2*cap(s.chunks[c]))
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(next, size)))
		c++
	}
	if s.n%restartEvery == 0 {
		s.restarts = append(s.restarts, uint64(c)<<32|uint64(len(s.chunks[c])))
	}
	s.chunks[c] = append(append(s.chunks[c], head[:h]...), name[shared:]...)
	s.last = append(s.last[:0], name...)
	s.n++
}

// entry decodes the entry at chunk c, offset off, after the name prev
// (whose bytes it reuses), and returns the name and where the next entry
// starts.
func (s *nameSet) entry(c, off int, prev []byte) (name []byte, nc, noff int) {
	if off == len(s.chunks[c]) {
		c, off = c+1, 0
	}
	b := s.chunks[c]
	shared, n1 := binary.Uvarint(b[off:])
	size, n2 := binary.Uvarint(b[off+n1:])
	off += n1 + n2
	return append(prev[:shared], b[off:off+int(size)]...), c, off + int(size)
}

// name is the i'th name added, valid until the next call.
func (s *nameSet) name(i uint32) []byte {
	r := s.restarts[i/restartEvery]
	c, off := int(r>>32), int(uint32(r))
	name := s.scratch[:0]
	for range i%restartEvery + 1 {
		name, c, off = s.entry(c, off, name)
	}
	s.scratch = name
	return name
}

// each calls fn with every name in the order added; fn must not keep
// the bytes.
func (s *nameSet) each(fn func(name []byte) error) error {
	var name []byte
	c, off := 0, 0
	for range s.n {
		name, c, off = s.entry(c, off, name)
		if err := fn(name); err != nil {
			return err
		}
	}
	return nil
}
