package streamclone

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// nameSet holds the store names a clone has written: to refuse a name a
// stream sends twice, and to write the fncache at the end. It is the only
// part of an apply that grows with the number of files, so it keeps the
// names' bytes back to back in chunks and indexes them with an open
// hash table of 32-bit slots: 16 bytes per name besides the name
// itself. A map[string]bool of the encoded names and a []string of the
// fncache's (what it replaced) held 44 MB at the peak of a clone of a
// 250,000-file store whose fncache is 7 MB, and set the peak RSS of a
// clone into a directory.
//
// Store names are deduplicated as the stream names them (unencoded):
// the destination's encodings are one to one on the names
// store.ValidateStreamName admits, so two names that encode alike are
// the same name.
type nameSet struct {
	seed   maphash.Seed
	chunks [][]byte // names back to back; a name never spans two chunks
	refs   []uint64 // per name: its start in the chunks and its length (see store)
	table  []uint32 // open addressing, linear probing: 0 empty, else refs index+1
}

const (
	nameChunk  = 1 << 20 // bytes per chunk (a name is at most maxNameLen)
	refLenBits = 17      // a name's length, up to maxNameLen
)

func newNameSet() *nameSet { return &nameSet{seed: maphash.MakeSeed()} }

// add records name; it reports false if name was already there.
func (s *nameSet) add(name string) bool {
	if 2*(len(s.refs)+1) > len(s.table) {
		s.grow()
	}
	mask := uint64(len(s.table) - 1)
	for i := maphash.String(s.seed, name) & mask; ; i = (i + 1) & mask {
		slot := s.table[i]
		if slot == 0 {
			s.table[i] = uint32(len(s.refs)) + 1
			s.refs = append(s.refs, s.store(name))
			return true
		}
		if string(s.name(int(slot-1))) == name {
			return false
		}
	}
}

// store copies name into the chunks and returns its reference: the
// chunk's index times nameChunk plus the offset, shifted past the length.
func (s *nameSet) store(name string) uint64 {
	if len(name) > maxNameLen {
		// The applier bounds names before they come here (maxNameLen,
		// and store.ValidateStreamName's shorter bound), so every name
		// fits a chunk and its length the reference's 17 bits.
		panic("streamclone: nameSet: name longer than maxNameLen")
	}
	n := len(s.chunks)
	if n == 0 || len(s.chunks[n-1])+len(name) > cap(s.chunks[n-1]) {
		s.chunks = append(s.chunks, make([]byte, 0, nameChunk))
		n++
	}
	c := &s.chunks[n-1]
	off := uint64(n-1)*nameChunk + uint64(len(*c))
	*c = append(*c, name...)
	return off<<refLenBits | uint64(len(name))
}

// name is the i'th name added, in the chunks' memory.
func (s *nameSet) name(i int) []byte {
	r := s.refs[i]
	n := r & (1<<refLenBits - 1)
	off := r >> refLenBits
	c, o := off/nameChunk, off%nameChunk
	return s.chunks[c][o : o+n]
}

func (s *nameSet) grow() {
	size := max(1024, 2*len(s.table))
	s.table = make([]uint32, size)
	mask := uint64(size - 1)
	for k := range s.refs {
		i := maphash.Bytes(s.seed, s.name(k)) & mask
		for s.table[i] != 0 {
			i = (i + 1) & mask
		}
		s.table[i] = uint32(k) + 1
	}
}

// sorted returns the indexes of the names keep admits, in the names'
// byte order.
func (s *nameSet) sorted(keep func([]byte) bool) []uint32 {
	out := make([]uint32, 0, len(s.refs))
	for i := range s.refs {
		if keep(s.name(i)) {
			out = append(out, uint32(i))
		}
	}
	slices.SortFunc(out, func(a, b uint32) int { return bytes.Compare(s.name(int(a)), s.name(int(b))) })
	return out
}
